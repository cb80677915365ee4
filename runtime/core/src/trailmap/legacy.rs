//! The original's legacy flat targets: `trails/config/targets/<id>.yaml`, one file per app target,
//! from before targets were trailmaps. Each loads as a trailmap with no folder of its own: no
//! scripted tools, no host functions, no simulated app.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{ElectronSpec, PlatformSpec, TargetSpec, Trailmap, TrailmapSpec};
use crate::yaml::{self, YamlError};

/// `config/targets/<id>.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyTarget {
    id: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    platforms: Option<BTreeMap<String, PlatformSpec>>,
    #[serde(default)]
    has_custom_ios_driver: bool,
    /// Read so the file parses; nothing here uses it yet (the agent has `system_prompt_file`).
    #[serde(default)]
    #[allow(dead_code)]
    system_prompt: Option<String>,
    /// Inline script tools: read so the file parses; a legacy target's scripts are not discovered.
    #[serde(default)]
    #[allow(dead_code)]
    tools: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    icon: Option<String>,
    #[serde(default)]
    electron: Option<ElectronSpec>,
}

/// Loads one legacy target file as a trailmap named by its `id`, which must equal the file's stem.
pub(super) fn load_target(file: &Path) -> Result<Trailmap, YamlError> {
    let doc = yaml::parse_file(file)?;
    let t: LegacyTarget = doc.decode()?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if t.id != stem {
        return Err(doc.error_at(
            "id",
            format!("the id `{}` must equal the file name `{stem}.yaml`", t.id),
        ));
    }
    let spec = TrailmapSpec {
        id: t.id.clone(),
        dependencies: Vec::new(),
        target: Some(TargetSpec {
            display_name: t.display_name,
            platforms: t.platforms,
            has_custom_ios_driver: t.has_custom_ios_driver,
            icon: t.icon,
            electron: t.electron,
            ..TargetSpec::default()
        }),
        defaults: None,
        platforms: None,
        exports: None,
        toolsets: Vec::new(),
        waypoints: Vec::new(),
        trails: Vec::new(),
        trail_validation: None,
        host_env: Vec::new(),
        network: None,
    };
    Ok(Trailmap {
        id: t.id,
        dir: file.parent().unwrap_or(Path::new(".")).to_path_buf(),
        spec,
        scripts: Vec::new(),
        tool_yamls: BTreeMap::new(),
        script_descriptors: Vec::new(),
        host_decls: Vec::new(),
        app_yaml: None,
        waypoints: Vec::new(),
        nav_tools: Vec::new(),
        toolsets: Vec::new(),
    })
}
