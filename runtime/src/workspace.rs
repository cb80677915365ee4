//! Where a project's trailmaps are, seen from a folder inside it: `trailmaps/` (this project's
//! layout) or `trails/config/trailmaps/` (the original's, anchored by `trails/config/trailblaze.yaml`),
//! in that folder or the nearest parent that has one. So `trailblaze` works from any subfolder.

use std::path::{Path, PathBuf};

/// A project found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The folder holding the layout: outputs (`trailblaze-out/`) go here.
    pub root: PathBuf,
    /// The trailmaps folder.
    pub trailmaps: PathBuf,
}

/// The layouts looked for in each folder, in order.
pub const LAYOUTS: [&str; 2] = ["trailmaps", "trails/config/trailmaps"];

/// The nearest workspace at `start` or above it.
pub fn find(start: &Path) -> Option<Workspace> {
    start.ancestors().find_map(|dir| {
        LAYOUTS
            .iter()
            .map(|l| dir.join(l))
            .find(|p| p.is_dir())
            .map(|trailmaps| Workspace {
                root: dir.to_path_buf(),
                trailmaps,
            })
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
        assert_eq!(found.root, root);
        assert_eq!(found.trailmaps, root.join("trailmaps"));
        // The original's layout.
        let other = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(other.path().join("trails/config/trailmaps")).expect("dirs");
        std::fs::create_dir_all(other.path().join("trails/login")).expect("dirs");
        let found = find(&other.path().join("trails/login")).expect("found");
        assert_eq!(found.trailmaps, other.path().join("trails/config/trailmaps"));
        // Control: a folder with neither layout above it finds nothing of ours.
        let none = tempfile::tempdir().expect("temp dir");
        let found = find(none.path());
        assert!(found.is_none_or(|w| !w.root.starts_with(none.path())));
    }
}
