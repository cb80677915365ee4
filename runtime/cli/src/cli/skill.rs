//! `trailblaze skill`: the instructions a coding agent reads to drive a device through a live
//! session (docs/sessions.md), written where each agent looks for them: a Claude Code skill
//! (`.claude/skills/trailblaze/SKILL.md`), a section of `AGENTS.md` (Codex and the agents that read
//! it) and a Cursor rule (`.cursor/rules/trailblaze.mdc`). One text, `skill/SKILL.md`, makes all
//! three; a file that is not ours is never overwritten without `--force`, and the rest of an
//! `AGENTS.md` is never touched.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::{Args, Subcommand, ValueEnum};

use super::diag::Diagnostic;
use super::output::out;
use super::{Failure, usage_help};

/// The skill: YAML front matter (`name`, `description`) and the text.
const SOURCE: &str = include_str!("skill/SKILL.md");

/// The line every file we write holds, and how `install` knows a file is ours.
const MARK: &str = "<!-- written by `trailblaze skill install`: it rewrites this; edit around it, not in it -->";
/// Where our section of an `AGENTS.md` begins and ends.
const BEGIN: &str =
    "<!-- trailblaze skill: begin (written by `trailblaze skill install`; it rewrites what is between these lines) -->";
const END: &str = "<!-- trailblaze skill: end -->";

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze skill install                     all three forms, in the workspace's root folder
  trailblaze skill install --for claude        only .claude/skills/trailblaze/SKILL.md
  trailblaze skill install --for codex ../app  only the section of ../app/AGENTS.md
  trailblaze skill show --for cursor           the Cursor rule as it would be written

See docs/sessions.md for the workflow the skill teaches.")]
pub struct SkillCmd {
    #[command(subcommand)]
    pub command: SkillCommand,
}

#[derive(Subcommand)]
pub enum SkillCommand {
    /// Write the skill where coding agents read it (without --for: all three forms).
    Install(InstallArgs),
    /// Print the skill (with --for: exactly the file, or AGENTS.md section, `install` writes).
    Show {
        /// The agent whose form to print [default: the text alone].
        #[arg(long = "for", value_enum, value_name = "AGENT")]
        agent: Option<Agent>,
    },
}

#[derive(Args)]
pub struct InstallArgs {
    /// The folder to write in [default: the workspace's root folder, else the current one].
    pub dir: Option<PathBuf>,
    /// The agent to write it for: `claude` (.claude/skills/trailblaze/SKILL.md), `codex`
    /// (a section of AGENTS.md) or `cursor` (.cursor/rules/trailblaze.mdc); repeat for several
    /// [default: all three].
    #[arg(long = "for", value_enum, value_name = "AGENT")]
    pub agents: Vec<Agent>,
    /// Replace a skill file that `skill install` did not write (AGENTS.md is never replaced: our
    /// section is added to it).
    #[arg(long)]
    pub force: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Cursor,
}

impl Agent {
    const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Cursor];

    /// The file, relative to the folder installed in.
    fn file(self) -> &'static str {
        match self {
            Agent::Claude => ".claude/skills/trailblaze/SKILL.md",
            Agent::Codex => "AGENTS.md",
            Agent::Cursor => ".cursor/rules/trailblaze.mdc",
        }
    }
}

/// The source split: its front matter's `name` and `description`, and the text after it.
struct Parts {
    name: &'static str,
    description: &'static str,
    body: &'static str,
}

fn parts() -> Parts {
    let rest = SOURCE.strip_prefix("---\n").unwrap_or(SOURCE);
    let (front, body) = rest.split_once("\n---\n").unwrap_or(("", rest));
    let field = |key: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map_or("", str::trim)
    };
    Parts {
        name: field("name"),
        description: field("description"),
        body: body.trim_start_matches('\n'),
    }
}

/// What `install` writes for `agent` (for Codex: the section, markers included).
pub fn render(agent: Agent) -> String {
    let p = parts();
    match agent {
        Agent::Claude => format!(
            "---\nname: {}\ndescription: {}\n---\n{MARK}\n\n{}",
            p.name, p.description, p.body
        ),
        Agent::Cursor => format!(
            "---\ndescription: {}\nglobs:\nalwaysApply: false\n---\n{MARK}\n\n{}",
            p.description, p.body
        ),
        Agent::Codex => format!("{BEGIN}\n\n{}\n{END}\n", demote(p.body)),
    }
}

/// The text's headings one level deeper (`#` → `##`), outside code blocks: in an `AGENTS.md` the
/// section sits under the file's own title.
fn demote(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 32);
    let mut code = false;
    for line in body.lines() {
        if line.starts_with("```") {
            code = !code;
        }
        if !code && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

pub fn skill(a: &SkillCmd) -> Result<(), Failure> {
    match &a.command {
        SkillCommand::Show { agent: None } => {
            out!("{}", parts().body.trim_end());
            Ok(())
        }
        SkillCommand::Show { agent: Some(agent) } => {
            out!("{}", render(*agent).trim_end());
            Ok(())
        }
        SkillCommand::Install(i) => install(i),
    }
}

/// What happened to one file.
#[derive(Debug, PartialEq, Eq)]
enum Wrote {
    Created,
    Updated,
    Unchanged,
    /// Added to an existing file (AGENTS.md).
    Appended,
}

fn install(a: &InstallArgs) -> Result<(), Failure> {
    let dir = match &a.dir {
        Some(d) => {
            if !d.is_dir() {
                return Err(usage_help(
                    format!("{}: no such folder", d.display()),
                    "give the folder to write in (your project's root), or leave it out",
                ));
            }
            d.clone()
        }
        None => {
            let cwd = std::env::current_dir().map_err(|e| anyhow!("the current folder cannot be read: {e}"))?;
            let home = trailblaze::workspace::find(&cwd).map_or(cwd.clone(), |w| w.home);
            home.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(home)
        }
    };
    let mut agents: Vec<Agent> = Vec::new();
    for agent in if a.agents.is_empty() {
        &Agent::ALL[..]
    } else {
        &a.agents[..]
    } {
        if !agents.contains(agent) {
            agents.push(*agent);
        }
    }
    let mut refused = Vec::new();
    for agent in agents {
        let path = dir.join(agent.file());
        let shown = path.strip_prefix(".").unwrap_or(&path).display().to_string();
        let wrote = match agent {
            Agent::Codex => write_section(&path),
            _ => write_file(&path, &render(agent), a.force),
        };
        match wrote {
            Ok(w) => {
                let what = match w {
                    Wrote::Created => "wrote",
                    Wrote::Updated => "updated",
                    Wrote::Unchanged => "up to date:",
                    Wrote::Appended => "added the trailblaze section to",
                };
                out!("{what} {shown}");
            }
            Err(Refusal::Foreign) => {
                super::diag::emit(
                    &Diagnostic::error(format!(
                        "{shown} exists and was not written by `trailblaze skill install`: kept as it is"
                    ))
                    .with_help("`--force` replaces it"),
                );
                refused.push(shown);
            }
            Err(Refusal::Broken(why)) => {
                super::diag::emit(
                    &Diagnostic::error(format!("{shown}: {why}: kept as it is"))
                        .with_help("fix or remove its trailblaze markers (or the whole section), then install again"),
                );
                refused.push(shown);
            }
            Err(Refusal::Io(e)) => return Err(Failure::Usage(anyhow!("{shown}: {e}"))),
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Failure::Reported(2))
    }
}

enum Refusal {
    /// A file of the user's own, not replaced without `--force`.
    Foreign,
    /// An AGENTS.md whose markers do not pair up: what is ours cannot be told from what is not.
    Broken(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Self {
        Refusal::Io(e)
    }
}

/// Writes a whole file of ours; another file at `path` is kept unless `force`.
fn write_file(path: &Path, text: &str, force: bool) -> Result<Wrote, Refusal> {
    let old = match std::fs::read_to_string(path) {
        Ok(old) => Some(old),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Not text (or unreadable): certainly not ours.
        Err(_) if path.is_file() => Some(String::new()),
        Err(e) => return Err(e.into()),
    };
    let wrote = match &old {
        None => Wrote::Created,
        Some(o) if o == text => return Ok(Wrote::Unchanged),
        Some(o) if o.contains(MARK) || force => Wrote::Updated,
        Some(_) => return Err(Refusal::Foreign),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    replace(path, text)?;
    Ok(wrote)
}

/// Adds our section to `AGENTS.md`, or replaces it between its markers; the rest stays byte for byte.
fn write_section(path: &Path) -> Result<Wrote, Refusal> {
    let section = render(Agent::Codex);
    let old = match std::fs::read_to_string(path) {
        Ok(old) => old,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            replace(path, &section)?;
            return Ok(Wrote::Created);
        }
        Err(e) => return Err(e.into()),
    };
    let (new, wrote) = match (old.matches(BEGIN).count(), old.matches(END).count()) {
        (0, 0) => {
            let sep = match old.as_str() {
                "" => "",
                o if o.ends_with("\n\n") => "",
                o if o.ends_with('\n') => "\n",
                _ => "\n\n",
            };
            (format!("{old}{sep}{section}"), Wrote::Appended)
        }
        (1, 1) => {
            let start = old.find(BEGIN).unwrap_or(0);
            let end = old.find(END).unwrap_or(0);
            if end < start {
                return Err(Refusal::Broken(
                    "its trailblaze end marker comes before the begin marker".into(),
                ));
            }
            let mut after = &old[end + END.len()..];
            after = after.strip_prefix('\n').unwrap_or(after);
            let new = format!("{}{section}{after}", &old[..start]);
            if new == old {
                return Ok(Wrote::Unchanged);
            }
            (new, Wrote::Updated)
        }
        (b, e) => {
            return Err(Refusal::Broken(format!(
                "it has {b} trailblaze begin marker(s) and {e} end marker(s), not one of each"
            )));
        }
    };
    replace(path, &new)?;
    Ok(wrote)
}

/// Writes `text` at `path` whole: a temp file beside it, then a rename (the mode of a file replaced
/// is kept).
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("skill");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| {
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_has_a_name_a_description_and_a_short_text() {
        let p = parts();
        assert_eq!(p.name, "trailblaze");
        assert!(
            p.description.len() > 50 && p.description.len() <= 1024,
            "{}",
            p.description
        );
        assert!(p.body.starts_with("# "), "{}", &p.body[..40]);
        assert!(p.body.lines().count() < 200);
    }

    #[test]
    fn headings_are_demoted_outside_code_only() {
        let d = demote("# A\ntext\n## B\n```sh\n# a comment\n```\n");
        assert_eq!(d, "## A\ntext\n### B\n```sh\n# a comment\n```\n");
    }
}
