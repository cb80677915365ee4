//! Where a project's trailmaps are, seen from a folder inside it. Two layouts, looked for in each
//! folder from the current one up, the nearest winning:
//!
//! - the original's: `trails/config/trailblaze.yaml` anchors it; `trails/` is the root trails live
//!   anywhere under, `trails/config/trailmaps/<id>/` the trailmaps;
//! - this project's own: `trailmaps/<id>/`, each trailmap's trails in its `trails/` folder.
//!
//! So `trailblaze` works from any subfolder of either. What a project loaded from there is
//! [`Trailmaps`] (`Project::trailmaps`): each [`Trailmap`] with its files.

use std::path::{Path, PathBuf};

mod llm;

pub use crate::trailmap::{Trailmap, Trailmaps};
pub use llm::WorkspaceLlm;

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

/// `trails/config/trailblaze.yaml`: the original's workspace config, read strictly (an unknown key is
/// an error with line:col). `targets` is acted on: each must be a trailmap of the workspace or one of
/// the framework's. The rest is kept as data: this host's LLM settings come from flags and the
/// environment, and its toolsets are the catalog.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    #[serde(default)]
    pub defaults: Option<WorkspaceDefaults>,
    /// The target trailmaps the workspace opts into (all found ones load either way).
    #[serde(default)]
    pub targets: Vec<String>,
    #[serde(default)]
    pub toolsets: Vec<serde_json::Value>,
    #[serde(default)]
    pub tools: Vec<serde_json::Value>,
    #[serde(default)]
    pub providers: Vec<serde_json::Value>,
    #[serde(default)]
    pub llm: Option<serde_json::Value>,
}

/// `defaults:` of the workspace config (kept as data).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceDefaults {
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub llm: Option<String>,
    #[serde(default, rename = "max-llm-calls")]
    pub max_llm_calls: Option<u32>,
}

impl WorkspaceConfig {
    /// Reads the anchor file. An empty (or all-comments) file is an empty config.
    pub fn load(file: &Path) -> Result<WorkspaceConfig, crate::yaml::YamlError> {
        let doc = crate::yaml::parse_file(file)?;
        if doc.value.is_null() {
            return Ok(WorkspaceConfig::default());
        }
        doc.decode()
    }

    /// The LLM the `llm:` block names by default (`defaults.model`), if any; an error names the key.
    pub fn llm_settings(&self) -> Result<Option<WorkspaceLlm>, String> {
        match &self.llm {
            None => Ok(None),
            Some(v) => llm::resolve(v),
        }
    }

    /// A warning for each of `targets` that is neither one of `trailmaps` nor a framework trailmap:
    /// the original lets such a workspace load (the target may come from elsewhere), so it is no error.
    pub fn unknown_targets(&self, trailmaps: &[&str]) -> Vec<String> {
        self.targets
            .iter()
            .filter(|t| !trailmaps.contains(&t.as_str()) && !crate::trailmap::FRAMEWORK_TRAILMAPS.contains(&t.as_str()))
            .map(|t| {
                format!("trailblaze.yaml: target `{t}` is no trailmap of this workspace (no trails/config/trailmaps/{t}/trailmap.yaml)")
            })
            .collect()
    }
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
