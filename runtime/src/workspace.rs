//! Where a project's trailmaps are, seen from a folder inside it. Two layouts, looked for in each
//! folder from the current one up, the nearest winning:
//!
//! - the original's: `trails/config/trailblaze.yaml` anchors it; `trails/` is the root trails live
//!   anywhere under, `trails/config/trailmaps/<id>/` the trailmaps;
//! - this project's own: `trailmaps/<id>/`, each trailmap's trails in its `trails/` folder.
//!
//! So `trailblaze` works from any subfolder of either.

use std::path::{Path, PathBuf};

/// A project found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The folder that holds the layout (`trails/` or `trailmaps/` is in it): outputs go here.
    pub home: PathBuf,
    /// The trailmaps folder (it may not exist in an anchored workspace without trailmaps).
    pub trailmaps: PathBuf,
    /// The original's layout: the `trails/` folder every trail under which belongs to the project,
    /// and the anchor file. `None` for the `trailmaps/` layout.
    pub anchored: Option<Anchored>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchored {
    pub trails: PathBuf,
    pub config: PathBuf,
}

/// The anchor of the original's layout, relative to the folder that holds it.
pub const ANCHOR: &str = "trails/config/trailblaze.yaml";

/// What is looked for, in order, for messages.
pub const LAYOUTS: [&str; 2] = [ANCHOR, "trailmaps/"];

/// The nearest workspace at `start` or above it.
pub fn find(start: &Path) -> Option<Workspace> {
    start.ancestors().find_map(at)
}

/// The workspace `dir` holds, if any.
fn at(dir: &Path) -> Option<Workspace> {
    let anchor = dir.join(ANCHOR);
    if anchor.is_file() {
        let trails = dir.join("trails");
        return Some(Workspace {
            home: dir.to_path_buf(),
            trailmaps: trails.join("config/trailmaps"),
            anchored: Some(Anchored { trails, config: anchor }),
        });
    }
    let trailmaps = dir.join("trailmaps");
    trailmaps.is_dir().then(|| Workspace {
        home: dir.to_path_buf(),
        trailmaps,
        anchored: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_layout_above_a_subfolder_is_found() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("trailmaps/demo/trails/deep")).expect("dirs");
        let found = find(&root.join("trailmaps/demo/trails/deep")).expect("found from a subfolder");
        assert_eq!(found.home, root);
        assert_eq!(found.trailmaps, root.join("trailmaps"));
        assert!(found.anchored.is_none());
        // The original's layout, anchored by its config file, found from a trail's folder.
        let other = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(other.path().join("trails/config")).expect("dirs");
        std::fs::create_dir_all(other.path().join("trails/login/deep")).expect("dirs");
        std::fs::write(other.path().join(ANCHOR), "").expect("anchor");
        let found = find(&other.path().join("trails/login/deep")).expect("found");
        assert_eq!(found.trailmaps, other.path().join("trails/config/trailmaps"));
        assert_eq!(found.anchored.map(|a| a.trails), Some(other.path().join("trails")));
        // Control: without the anchor file a `trails/` folder is nothing of ours.
        std::fs::remove_file(other.path().join(ANCHOR)).expect("rm");
        let found = find(&other.path().join("trails/login"));
        assert!(found.is_none_or(|w| !w.home.starts_with(other.path())));
    }
}
