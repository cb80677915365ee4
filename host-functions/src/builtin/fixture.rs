//! `readFixture {path}`: a UTF-8 text file from the trailmap's `fixtures/` folder.

use std::fs::{self, File};
use std::io::{ErrorKind, Read};
use std::path::{Component, Path};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{HostContext, HostError, HostFunction};

/// The largest fixture `readFixture` returns: scripts hold the text in memory, twice over.
pub const FIXTURE_MAX_BYTES: u64 = 1024 * 1024;

/// The text of a UTF-8 file in the trailmap's `fixtures/` folder, at most 1 MiB. The path is
/// relative to `fixtures/`; absolute paths, `..` and symlinks leading outside are refused.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFixture {
    /// A path relative to `fixtures/`, e.g. `users/jane.json`.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FixtureText {
    pub text: String,
}

impl HostFunction for ReadFixture {
    const NAME: &'static str = "readFixture";
    type Output = FixtureText;

    fn call(self, cx: &mut dyn HostContext) -> Result<FixtureText, HostError> {
        let env = cx.env();
        let shown = &self.path;
        // Lexical checks first: a refused path never touches the file system.
        let relative = checked_relative(shown)?;
        let root = fs::canonicalize(env.fixtures_dir()).map_err(|_| {
            HostError(format!(
                "fixture `{shown}`: trailmap `{}` has no fixtures/ folder",
                env.trailmap_id
            ))
        })?;
        let full = fs::canonicalize(root.join(relative)).map_err(|e| match e.kind() {
            ErrorKind::NotFound => HostError(format!(
                "fixture `{shown}` not found in the fixtures/ folder of trailmap `{}`",
                env.trailmap_id
            )),
            _ => HostError(format!("cannot read fixture `{shown}`: {e}")),
        })?;
        // Canonical paths have no symlinks left, so this catches a link pointing outside.
        if !full.starts_with(&root) {
            return Err(HostError(format!(
                "fixture `{shown}` resolves outside fixtures/ (a symlink); refused"
            )));
        }
        let io_error = |e: std::io::Error| HostError(format!("cannot read fixture `{shown}`: {e}"));
        // Check the kind before opening: opening a FIFO or a device could block or never end.
        let metadata = fs::metadata(&full).map_err(io_error)?;
        if !metadata.is_file() {
            return Err(HostError(format!("fixture `{shown}` is not a file")));
        }
        let too_large = || {
            HostError(format!(
                "fixture `{shown}` is larger than the {FIXTURE_MAX_BYTES}-byte limit"
            ))
        };
        if metadata.len() > FIXTURE_MAX_BYTES {
            return Err(too_large());
        }
        let file = File::open(&full).map_err(io_error)?;
        // Read one byte past the cap in case the file grew after `metadata`.
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        file.take(FIXTURE_MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error)?;
        if bytes.len() as u64 > FIXTURE_MAX_BYTES {
            return Err(too_large());
        }
        let text = String::from_utf8(bytes).map_err(|_| HostError(format!("fixture `{shown}` is not UTF-8 text")))?;
        Ok(FixtureText { text })
    }
}

/// The path as a relative path with no `..`, or a refusal.
fn checked_relative(path: &str) -> Result<&Path, HostError> {
    if path.trim().is_empty() {
        return Err(HostError("readFixture: `path` is empty".to_string()));
    }
    let relative = Path::new(path);
    for component in relative.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(HostError(format!("fixture path `{path}` contains `..`; refused")));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(HostError(format!(
                    "fixture path `{path}` is absolute; give a path relative to the trailmap's fixtures/ folder"
                )));
            }
        }
    }
    Ok(relative)
}
