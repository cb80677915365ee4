//! What a saved file touches, for `run --watch` and `check --watch`: a trail file is itself; any other
//! file of a trailmap (its `trailmap.yaml`, `app.yaml`, tools, host declarations, waypoints,
//! fixtures) touches every trail whose target sees that trailmap (its own, or one depending on it).
//! Files the host writes itself (the generated `.d.ts` and `tsconfig.json`, `.trail.gen.ts`, healed
//! recordings) and editors' scratch files touch nothing, so a check that regenerates them does not
//! wake itself up. The project then reloads what changed ([`Project::reload`]) and keeps the rest
//! warm: the transpile cache, unchanged trailmaps' catalogs and their warm sessions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::project::Project;
use crate::trail::is_trail_name;

/// What a batch of changed files touches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Touched {
    /// Trail files that changed (or appeared).
    pub trails: BTreeSet<PathBuf>,
    /// Trailmaps whose declarations changed (a tool, `trailmap.yaml`, `app.yaml`, ...).
    pub trailmaps: BTreeSet<String>,
    /// The changed files that count, as given, for the line that says what changed.
    pub files: Vec<PathBuf>,
}

impl Touched {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Whether a changed file is one the host writes itself, or an editor's scratch file: such a file
/// touches nothing. `path` is relative to the folder watched (a hidden folder in it, `.git/`, is
/// skipped whole).
pub fn is_ignored(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
        return true;
    };
    let generated = name == "trailblaze-client.d.ts"
        || name == "tsconfig.json"
        || name.ends_with(".trail.gen.ts")
        || name.ends_with(".healed.yaml")
        || name.ends_with(".lock");
    let scratch = name.starts_with('.')
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".tmp")
        || name == "4913";
    // Under a hidden folder (`.git/`, `.trailblaze/`).
    let hidden_dir = path.components().any(|c| {
        let c = c.as_os_str().to_string_lossy();
        c.len() > 1 && c.starts_with('.') && c != ".."
    });
    generated || scratch || hidden_dir
}

/// What `changed` touches in `project`. Paths may be absolute or relative to the working folder.
pub fn touched(project: &Project, changed: &[PathBuf]) -> Touched {
    let mut out = Touched::default();
    let root = absolute(&project.trailmaps.root);
    for path in changed {
        let abs = absolute(path);
        let shown = abs
            .strip_prefix(&root)
            .ok()
            .map_or_else(|| PathBuf::from(abs.file_name().unwrap_or_default()), Path::to_path_buf);
        if is_ignored(&shown) {
            continue;
        }
        let name = abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let map = abs
            .strip_prefix(&root)
            .ok()
            .and_then(|rel| rel.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        let under_trails = |id: &str| abs.starts_with(root.join(id).join("trails"));
        if is_trail_name(&name) {
            out.trails.insert(abs.clone());
        } else if let Some(id) = map {
            // A trail's neighbour under `trails/` (a fixture page, notes) is not the trailmap's.
            if !under_trails(&id) {
                out.trailmaps.insert(id);
            }
        } else {
            continue;
        }
        if !out.files.contains(path) {
            out.files.push(path.clone());
        }
    }
    out
}

/// Of `trails` (the trails being watched), those `touched` says to run again: the changed ones and
/// those whose target sees a changed trailmap. In the order given.
pub fn trails_to_rerun(project: &Project, trails: &[PathBuf], touched: &Touched) -> Vec<PathBuf> {
    trails
        .iter()
        .filter(|file| {
            if touched.trails.contains(&absolute(file)) {
                return true;
            }
            if touched.trailmaps.is_empty() {
                return false;
            }
            // A trail that does not parse is run again too: its error is the news.
            let Ok(trail) = crate::trail::load_trail(file) else {
                return true;
            };
            let Some(target) = project.target_of(&trail) else {
                return false;
            };
            project
                .trailmaps
                .closure(&target)
                .iter()
                .any(|m| touched.trailmaps.contains(&m.id))
        })
        .cloned()
        .collect()
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_and_scratch_files_touch_nothing() {
        for p in [
            "t/demo/tools/trailblaze-client.d.ts",
            "t/demo/tools/tsconfig.json",
            "t/demo/trails/a.trail.gen.ts",
            "t/demo/tools/.signIn.ts.swp",
            "t/demo/tools/signIn.ts~",
            "t/demo/.git/index",
            "t/demo/tools/4913",
        ] {
            assert!(is_ignored(Path::new(p)), "{p}");
        }
        for p in [
            "t/demo/tools/signIn.ts",
            "t/demo/app.yaml",
            "t/demo/trails/a.trail.yaml",
            "../t/demo/trailmap.yaml",
        ] {
            assert!(!is_ignored(Path::new(p)), "{p} is a real change (control)");
        }
    }
}
