//! `trailblaze init`: a new workspace, or a new trailmap in an existing one, that passes `check` and
//! `run` at once. Writes only files that are not there: the first one that is stops it, named.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use trailblaze::ProjectOptions;

use super::output::out;
use super::{Failure, usage_help};

#[derive(Args)]
#[command(after_help = "\
Examples:
  trailblaze init                      a workspace here: trailmaps/<this folder's name>/
  trailblaze init shop --id shop       a workspace in ./shop with the trailmap `shop`
  trailblaze init --id admin           a second trailmap in the workspace here
  trailblaze init site --device web    a trailmap for a web page (site/index.html) instead of an app

It refuses to overwrite anything: the first file already there is named and nothing is written.")]
pub struct InitArgs {
    /// The workspace folder (made if missing) [default: the current folder].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The new trailmap's id: letters, digits, `-`, `_` [default: the folder's name].
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// What the trail runs on: `sim`, an app on the simulated device (`app.yaml`), or `web`, a page
    /// in headless Chromium.
    #[arg(long, value_enum, default_value = "sim", value_name = "DEVICE")]
    pub device: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Sim,
    Web,
}

/// The files of a new trailmap, relative to it, with `{{ID}}` and `{{PKG}}` to fill in.
fn templates(kind: Kind) -> &'static [(&'static str, &'static str)] {
    match kind {
        Kind::Sim => &[
            ("trailmap.yaml", include_str!("init/sim/trailmap.yaml")),
            ("app.yaml", include_str!("init/sim/app.yaml")),
            ("tools/addItem.ts", include_str!("init/sim/addItem.ts")),
            (
                "trails/add-item.trail.yaml",
                include_str!("init/sim/add-item.trail.yaml"),
            ),
        ],
        Kind::Web => &[
            ("trailmap.yaml", include_str!("init/web/trailmap.yaml")),
            ("site/index.html", include_str!("init/web/index.html")),
            ("tools/addItem.ts", include_str!("init/web/addItem.ts")),
            (
                "trails/add-item.trail.yaml",
                include_str!("init/web/add-item.trail.yaml"),
            ),
        ],
    }
}

const GITIGNORE: &str = include_str!("init/gitignore");

pub fn init(a: &InitArgs) -> Result<(), Failure> {
    // Empty for the current folder: paths print as `trailmaps/...`, not `./trailmaps/...`.
    let dir = a.dir.clone().unwrap_or_default();
    let id = match &a.id {
        Some(id) => id.clone(),
        None => default_id(&dir)?,
    };
    if !valid_id(&id) {
        return Err(usage_help(
            format!("--id: `{id}` is not a trailmap id"),
            "letters, digits, `-` and `_`, starting with a letter (e.g. --id shop)",
        ));
    }
    let pkg: String = id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_lowercase();
    let trailmaps = dir.join("trailmaps");
    let map = trailmaps.join(&id);
    let mut plan: Vec<(PathBuf, String)> = templates(a.device)
        .iter()
        .map(|(rel, text)| (map.join(rel), text.replace("{{ID}}", &id).replace("{{PKG}}", &pkg)))
        .collect();
    // A workspace's own `.gitignore` is kept as it is: a new trailmap in it needs nothing new there.
    let gitignore = dir.join(".gitignore");
    if !gitignore.exists() {
        plan.push((gitignore, GITIGNORE.to_string()));
    }
    if map.exists() {
        return Err(refuse(&map));
    }
    if let Some((there, _)) = plan.iter().find(|(p, _)| p.exists()) {
        return Err(refuse(there));
    }
    for (path, text) in &plan {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| anyhow!("cannot make {}: {e}", parent.display()))?;
        }
        write_new(path, text)?;
        out!("created {}", path.display());
    }
    // The generated files: the tools' types and the editor's schemas, as `dts` writes them.
    let project = trailblaze::open(&trailmaps, ProjectOptions::default())?;
    for path in super::trails::write_generated(&project, &id, &dir)? {
        out!("wrote   {}", path.display());
    }
    let here = dir.as_os_str().is_empty() || dir == Path::new(".");
    let on = match a.device {
        Kind::Sim => "on the simulated device",
        Kind::Web => "in headless Chromium",
    };
    let w = id.len().max(6);
    out!("\nNext:");
    if !here {
        out!("  cd {}", shell_word(&dir.display().to_string()));
    }
    out!("  trailblaze check {id:<w$}   the parse gate and the type gate");
    out!("  trailblaze run {id:<w$}     replay the trail {on}");
    out!("  trailblaze tools {:<w$}   what an LLM is offered", "");
    out!("The walkthrough: docs/first-trailmap.md");
    Ok(())
}

fn refuse(path: &Path) -> Failure {
    usage_help(
        format!(
            "{} already exists: init writes only new files, and wrote nothing",
            path.display()
        ),
        "pick another --id or folder, or move it away",
    )
}

/// Writes `path` only if it is not there (a file made between the check and now is not replaced).
fn write_new(path: &Path, text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => refuse(path),
            _ => Failure::Usage(anyhow!("cannot write {}: {e}", path.display())),
        })?;
    f.write_all(text.as_bytes())
        .map_err(|e| Failure::Usage(anyhow!("cannot write {}: {e}", path.display())))
}

/// The folder's name as an id: lower case, anything but letters and digits as `-`.
fn default_id(dir: &Path) -> Result<String, Failure> {
    let abs = if dir.as_os_str().is_empty() {
        std::env::current_dir()
    } else {
        std::path::absolute(dir)
    }
    .map_err(|e| anyhow!("the folder cannot be read: {e}"))?;
    let name = abs
        .components()
        .next_back()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let id: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .trim_matches('-')
        .to_string();
    if valid_id(&id) {
        Ok(id)
    } else {
        Err(usage_help(
            format!("the folder's name `{name}` does not make a trailmap id"),
            "pass --id ID",
        ))
    }
}

fn valid_id(id: &str) -> bool {
    id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_alphabetic())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `s` quoted for a POSIX shell when it needs to be.
fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
