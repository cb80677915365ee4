//! `trailblaze skill`: the instructions a coding agent reads. `install` writes the three forms with
//! the front matter each agent reads, again without change, beside what a user's `AGENTS.md` holds
//! and never over a file of the user's own unless forced.
//!
//! And the skill is followed as an agent would follow it: every line of its ```` ```sh ```` blocks,
//! in order, is run by bash, one command at a time, in a copy of the demo workspace with a private
//! sessions folder. Each must exit 0; a ```` ```text ```` block right after a block is output its
//! last command must show, line for line (the snapshots the skill quotes are the demo's real
//! screens); and every `ref=` a command passes must be on the latest snapshot's screen, as an agent
//! would pick it. So the refs in the skill are the demo app's real refs (they are derived from the
//! elements, the same in every run), used verbatim, not placeholders. The trail the skill saves
//! must check clean and replay green, and no session may be left running. A broken copy of the
//! commands fails the same runner (the control).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use trailblaze::gates::parse_yaml;
use trailblaze_e2e::{Fixture, repo_root, text, trailblaze_bin};

use super::docs::blocks;

/// The skill's one source.
fn source() -> String {
    std::fs::read_to_string(repo_root().join("runtime/cli/src/cli/skill/SKILL.md")).expect("SKILL.md")
}

/// `trailblaze ARGS` in `cwd`, with a private cache and no workspace settings from the environment.
fn tb(cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(trailblaze_bin());
    cmd.current_dir(cwd).args(args);
    scrub_env(&mut cmd);
    cmd.output().expect("trailblaze runs")
}

fn scrub_env(cmd: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("TRAILBLAZE_") && k != "TRAILBLAZE_CACHE_DIR" {
            cmd.env_remove(k);
        }
    }
    cmd.env("NO_COLOR", "1");
}

/// The YAML front matter of a file (between its first two `---` lines), parsed, and the rest.
fn front_matter(text: &str) -> (Value, String) {
    let rest = text.strip_prefix("---\n").expect("front matter opens the file");
    let (front, body) = rest.split_once("\n---\n").expect("front matter is closed");
    let doc = parse_yaml(front, Path::new("front-matter.yaml")).expect("front matter is YAML");
    (doc.value, body.to_string())
}

/// The skill's text as every form shares it: without the front matter and our marker comment.
fn shared_text(body: &str) -> String {
    body.lines()
        .filter(|l| !l.starts_with("<!-- written by `trailblaze skill install`"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn skill_install_writes_each_form_with_its_front_matter() {
    let body = front_matter(&source()).1;
    let want = body.trim().to_string();
    assert!(
        want.lines().count() < 200,
        "the skill is read every time: keep it under 200 lines"
    );
    for agent in ["claude", "codex", "cursor"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let o = tb(dir.path(), &["skill", "install", "--for", agent, "."]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{agent}: {out}{err}");
        // Only that agent's file.
        let files: Vec<&str> = [
            ".claude/skills/trailblaze/SKILL.md",
            "AGENTS.md",
            ".cursor/rules/trailblaze.mdc",
        ]
        .into_iter()
        .filter(|f| dir.path().join(f).exists())
        .collect();
        let written = match agent {
            "claude" => ".claude/skills/trailblaze/SKILL.md",
            "codex" => "AGENTS.md",
            _ => ".cursor/rules/trailblaze.mdc",
        };
        assert_eq!(files, [written], "{agent}");
        assert!(out.contains(&format!("wrote {written}")), "{out}");
        let file = read(&dir.path().join(written));
        // `skill show --for` prints exactly what was written.
        let shown = text(&tb(dir.path(), &["skill", "show", "--for", agent])).0;
        assert_eq!(shown.trim_end(), file.trim_end(), "{agent}: show and install differ");
        match agent {
            "claude" => {
                let (front, rest) = front_matter(&file);
                assert_eq!(front["name"], "trailblaze");
                let name = front["name"].as_str().unwrap_or_default();
                assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
                let description = front["description"].as_str().expect("a description");
                assert!(
                    (100..=1024).contains(&description.len()) && !description.contains('<'),
                    "{description}"
                );
                assert!(description.contains("trail"), "{description}");
                assert_eq!(front.as_object().map(|o| o.len()), Some(2), "{front}");
                assert_eq!(shared_text(&rest), want);
            }
            "cursor" => {
                let (front, rest) = front_matter(&file);
                assert!(front["description"].as_str().is_some_and(|d| d.len() > 100), "{front}");
                assert_eq!(front["alwaysApply"], false);
                assert!(front.as_object().is_some_and(|o| o.contains_key("globs")), "{front}");
                assert_eq!(shared_text(&rest), want);
            }
            _ => {
                assert!(!file.starts_with("---"), "AGENTS.md has no front matter");
                assert_eq!(file.matches("<!-- trailblaze skill: begin").count(), 1, "{file}");
                assert_eq!(file.matches("<!-- trailblaze skill: end -->").count(), 1, "{file}");
                // The same text, its headings one level down (under the file's own title).
                let inner: String = file
                    .lines()
                    .filter(|l| !l.starts_with("<!-- trailblaze skill:"))
                    .map(|l| l.strip_prefix('#').filter(|r| r.starts_with('#')).unwrap_or(l))
                    .collect::<Vec<_>>()
                    .join("\n");
                assert_eq!(inner.trim(), want);
            }
        }
    }
    // Without --for: all three; `skill show` alone prints the shared text.
    let dir = tempfile::tempdir().expect("temp dir");
    let o = tb(dir.path(), &["skill", "install", "."]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(text(&o).0.lines().count(), 3, "{:?}", text(&o));
    assert_eq!(text(&tb(dir.path(), &["skill", "show"])).0.trim(), want);
}

#[test]
fn skill_install_is_idempotent_and_keeps_the_rest_of_agents_md() {
    let dir = tempfile::tempdir().expect("temp dir");
    let agents = dir.path().join("AGENTS.md");
    let before = "# Our agents\n\nRun `make test` before you commit.\n";
    std::fs::write(&agents, before).expect("write");
    let o = tb(dir.path(), &["skill", "install", "."]);
    assert!(o.status.success(), "{:?}", text(&o));
    let once: Vec<String> = [
        ".claude/skills/trailblaze/SKILL.md",
        "AGENTS.md",
        ".cursor/rules/trailblaze.mdc",
    ]
    .iter()
    .map(|f| read(&dir.path().join(f)))
    .collect();
    assert!(
        once[1].starts_with(before),
        "the user's text comes first, whole:\n{}",
        once[1]
    );
    // A note the user adds after our section stays too, through any number of installs.
    let after = "\n## Ours again\n\nDeploy with `make ship`.\n";
    std::fs::write(&agents, format!("{}{after}", once[1])).expect("write");
    for _ in 0..2 {
        let o = tb(dir.path(), &["skill", "install", "."]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}{err}");
        assert_eq!(out.matches("up to date:").count(), 3, "{out}");
    }
    let twice = read(&agents);
    assert_eq!(twice, format!("{}{after}", once[1]));
    // An old section (an older skill's text) is replaced in place, the rest kept byte for byte.
    let old = twice.replace("## trailblaze: drive an app", "## trailblaze (old text)");
    std::fs::write(&agents, &old).expect("write");
    let o = tb(dir.path(), &["skill", "install", "--for", "codex", "."]);
    assert!(text(&o).0.contains("updated AGENTS.md"), "{:?}", text(&o));
    assert_eq!(read(&agents), twice);
    // From a subfolder, the default folder is the workspace's root.
    std::fs::create_dir_all(dir.path().join("trailmaps/x/trails")).expect("mkdir");
    let o = tb(&dir.path().join("trailmaps/x/trails"), &["skill", "install"]);
    assert_eq!(text(&o).0.matches("up to date:").count(), 3, "{:?}", text(&o));
    // Markers that do not pair up: nothing is touched, and the message says why.
    let broken = format!("{twice}<!-- trailblaze skill: end -->\n");
    std::fs::write(&agents, &broken).expect("write");
    let o = tb(dir.path(), &["skill", "install", "--for", "codex", "--force", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("2 end marker(s)"), "{:?}", text(&o));
    assert_eq!(read(&agents), broken);
}

#[test]
fn skill_install_keeps_a_foreign_file_unless_forced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mine = dir.path().join(".claude/skills/trailblaze/SKILL.md");
    std::fs::create_dir_all(mine.parent().expect("parent")).expect("mkdir");
    std::fs::write(&mine, "---\nname: trailblaze\ndescription: my own\n---\nmine\n").expect("write");
    let o = tb(dir.path(), &["skill", "install", "."]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains(".claude/skills/trailblaze/SKILL.md exists and was not written by `trailblaze skill install`")
            && err.contains("--force"),
        "{err}"
    );
    assert!(read(&mine).ends_with("mine\n"), "the user's file is kept");
    // The other two were written all the same.
    assert!(
        out.contains("wrote AGENTS.md") && out.contains("wrote .cursor/rules/trailblaze.mdc"),
        "{out}"
    );
    // Control: --force replaces it with ours, which later installs then update without it.
    let o = tb(dir.path(), &["skill", "install", "--for", "claude", "--force", "."]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        read(&mine),
        text(&tb(dir.path(), &["skill", "show", "--for", "claude"])).0
    );
    let o = tb(dir.path(), &["skill", "install", "--for", "claude", "."]);
    assert!(text(&o).0.contains("up to date:"), "{:?}", text(&o));
}

/// One command of the skill: its line, where it is, and the output the skill shows after it.
#[derive(Debug, Clone)]
struct Step {
    at: String,
    line: String,
    shows: Vec<String>,
}

/// Every line of the skill's ```` ```sh ```` blocks, in order; a ```` ```text ```` block right
/// after a block is what its last command shows.
fn agent_script(md: &str) -> Vec<Step> {
    let all = blocks("SKILL.md", md);
    let mut steps: Vec<Step> = Vec::new();
    for (i, b) in all.iter().enumerate() {
        if b.info.first().map(String::as_str) != Some("sh") {
            continue;
        }
        for (n, line) in b.text.lines().enumerate() {
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            steps.push(Step {
                at: format!("SKILL.md:{}", b.line + 1 + n),
                line: line.to_string(),
                shows: Vec::new(),
            });
        }
        if let (Some(next), Some(last)) = (all.get(i + 1), steps.last_mut())
            && next.info.first().map(String::as_str) == Some("text")
        {
            last.shows = next
                .text
                .lines()
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.is_empty())
                .collect();
        }
    }
    steps
}

/// A copy of the demo workspace, a private sessions folder, and `trailblaze` on `PATH`; every
/// session in that folder is stopped when it is dropped, whatever the test did.
struct AgentWorkspace {
    fixture: Fixture,
    sessions: PathBuf,
    bin: PathBuf,
}

impl AgentWorkspace {
    fn new() -> AgentWorkspace {
        let fixture = Fixture::demo();
        let sessions = fixture.dir.path().join("sessions");
        let bin = fixture.dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::os::unix::fs::symlink(trailblaze_bin(), bin.join("trailblaze")).expect("symlink");
        std::fs::create_dir_all(fixture.dir.path().join("home")).expect("mkdir");
        AgentWorkspace { fixture, sessions, bin }
    }

    fn root(&self) -> &Path {
        self.fixture.dir.path()
    }

    /// `bash -c LINE` at the workspace's root, as an agent's shell tool runs a command.
    fn bash(&self, line: &str) -> Output {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-c", line]).current_dir(self.root());
        scrub_env(&mut cmd);
        cmd.env("PATH", std::env::join_paths(paths).expect("PATH"))
            .env("HOME", self.root().join("home"))
            .env("TRAILBLAZE_SESSIONS_DIR", &self.sessions)
            .env("TRAILBLAZE_CACHE_DIR", self.fixture.cache());
        cmd.output().expect("bash runs")
    }
}

impl Drop for AgentWorkspace {
    fn drop(&mut self) {
        let _ = self.bash("trailblaze session stop --all");
    }
}

/// What one command printed, for the assertions after the run.
#[derive(Debug)]
struct Done {
    line: String,
    out: String,
    err: String,
}

/// Runs `steps` in `ws` as an agent would: one at a time, each refs taken from the latest snapshot,
/// stopping at the first that fails. `Err` says which and why.
fn follow(ws: &AgentWorkspace, steps: &[Step]) -> Result<Vec<Done>, String> {
    let mut screen: Option<String> = None;
    let mut done = Vec::new();
    for s in steps {
        for r in s.line.split_whitespace().filter_map(|w| w.strip_prefix("ref=")) {
            let Some(shown) = &screen else {
                return Err(format!("{}: `{}` passes ref {r} before any snapshot", s.at, s.line));
            };
            if !shown.contains(&format!("[{r}]")) {
                return Err(format!(
                    "{}: `{}` passes ref {r}, which the latest snapshot does not show:\n{shown}",
                    s.at, s.line
                ));
            }
        }
        let o = ws.bash(&s.line);
        let (out, err) = text(&o);
        if !o.status.success() {
            return Err(format!(
                "{}: `{}` exited with {}\n--- stdout ---\n{out}--- stderr ---\n{err}",
                s.at, s.line, o.status
            ));
        }
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        let missing: Vec<&String> = s.shows.iter().filter(|l| !lines.contains(&l.as_str())).collect();
        if !missing.is_empty() {
            return Err(format!(
                "{}: the skill shows lines `{}` does not print: {missing:?}\n--- stdout ---\n{out}",
                s.at, s.line
            ));
        }
        if s.line.split_whitespace().nth(1) == Some("snapshot") {
            screen = Some(out.clone());
        }
        done.push(Done {
            line: s.line.clone(),
            out,
            err,
        });
    }
    Ok(done)
}

#[test]
fn skill_commands_run_as_an_agent_would_and_save_a_trail_that_replays() {
    let steps = agent_script(&source());
    let words: Vec<Vec<&str>> = steps.iter().map(|s| s.line.split_whitespace().collect()).collect();
    // The workflow the skill teaches, in its order.
    let first = |want: &[&str]| {
        words
            .iter()
            .position(|w| w.len() >= want.len() && w[..want.len()] == *want)
            .unwrap_or_else(|| panic!("the skill never runs `{}`", want.join(" ")))
    };
    let order = [
        first(&["trailblaze", "session", "start"]),
        first(&["trailblaze", "snapshot"]),
        first(&["trailblaze", "tool", "type"]),
        first(&["trailblaze", "tool", "assertVisible"]),
        first(&["trailblaze", "session", "save"]),
        first(&["trailblaze", "check"]),
        first(&["trailblaze", "run"]),
        first(&["trailblaze", "session", "stop"]),
    ];
    assert!(order.is_sorted(), "the skill's commands are out of order: {order:?}");
    assert_eq!(order[7], steps.len() - 1, "the skill ends by stopping its session");
    let tools: Vec<&Vec<&str>> = words.iter().filter(|w| w.get(1) == Some(&"tool")).collect();
    assert!(
        tools.iter().all(|w| w.contains(&"--step")),
        "every tool call names its step"
    );
    assert!(
        steps.iter().any(|s| s.line.contains("{{secret:")),
        "a secret by its placeholder"
    );

    let ws = AgentWorkspace::new();
    let done = follow(&ws, &steps).unwrap_or_else(|e| panic!("the skill's commands fail:\n{e}"));
    let by = |cmd: &str| {
        done.iter()
            .find(|d| d.line.starts_with(cmd))
            .unwrap_or_else(|| panic!("no `{cmd}`"))
    };
    // The trail it saved: the password by its placeholder only, both gates clean, replayed green.
    let save = by("trailblaze session save");
    let saved = ws
        .root()
        .join(save.line.split_whitespace().nth(4).expect("session save NAME PATH"));
    let trail = read(&saved);
    assert!(
        trail.contains("{{secret:DEMO_PASSWORD}}") && !trail.contains("hunter2"),
        "{trail}"
    );
    assert!(trail.contains("- verify: The inbox is shown"), "{trail}");
    assert!(
        by("trailblaze check").out.contains(" 0 finding(s)"),
        "{}",
        by("trailblaze check").out
    );
    let run = by("trailblaze run");
    assert!(run.out.contains("1 passed, 0 failed"), "{}{}", run.out, run.err);
    // The session was stopped by the skill itself, not by the guard: nothing runs, nothing is left.
    assert!(by("trailblaze session stop").err.contains("stopped"));
    let listed = ws.bash("trailblaze session list --json");
    assert_eq!(text(&listed).0.trim(), "[]", "{:?}", text(&listed));
    let left: Vec<PathBuf> = std::fs::read_dir(&ws.sessions)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "the sessions folder still holds {left:?}");
}

#[test]
fn a_broken_command_list_fails_the_runner() {
    let steps = agent_script(&source());
    let broken = |what: &str, f: &dyn Fn(&mut Vec<Step>)| {
        let mut s = steps.clone();
        f(&mut s);
        let ws = AgentWorkspace::new();
        let e = follow(&ws, &s).expect_err(what);
        // The guard stops what the broken list started.
        drop(ws);
        e
    };
    // No session started: the first command that joins it fails with the usage exit code.
    let e = broken("no session", &|s| s.retain(|st| !st.line.contains("session start")));
    assert!(
        e.contains("exited with exit status: 2") && e.contains("no session named"),
        "{e}"
    );
    // A ref the screen does not show: caught before it is passed, as an agent reads the screen.
    let e = broken("a stale ref", &|s| {
        for st in s.iter_mut() {
            st.line = st.line.replace("ref=d803", "ref=n012");
        }
    });
    assert!(
        e.contains("passes ref n012, which the latest snapshot does not show"),
        "{e}"
    );
    // The skill quoting a screen the app does not show.
    let e = broken("a wrong screen", &|s| {
        if let Some(st) = s.iter_mut().find(|st| !st.shows.is_empty()) {
            st.shows[0] = st.shows[0].replace("Demo Mail", "Demo Post");
        }
    });
    assert!(e.contains("the skill shows lines") && e.contains("Demo Post"), "{e}");
    // A tool that fails (exit 1) stops the run at once.
    let e = broken("a failing assertion", &|s| {
        if let Some(st) = s.iter_mut().find(|st| st.line.contains("assertVisible")) {
            st.line = st
                .line
                .replace("assertVisible ref=n012", "assertNotVisibleWithText text=Inbox");
        }
    });
    assert!(e.contains("exited with exit status: 1"), "{e}");
}
