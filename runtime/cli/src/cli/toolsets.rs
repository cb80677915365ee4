//! `trailblaze tools --toolsets`, and what `tools` says about toolsets and shortcuts under its list.

use trailblaze::Catalog;
use trailblaze::device::Platform;

use super::Failure;
use super::output::{err, out};

/// Every toolset the trailmap knows: active at a session's start or not, its tools.
pub fn list(catalog: &Catalog, platform: Platform, json: bool) -> Result<(), Failure> {
    let sets = catalog.toolset_list(platform);
    if json {
        super::output::out_json!(&sets);
        return Ok(());
    }
    for t in &sets {
        let state = match (t.fits, t.active, t.always_enabled) {
            (false, _, _) => "other platforms",
            (true, true, true) => "active, always",
            (true, true, false) => "active",
            (true, false, _) => "inactive",
        };
        let from = t
            .file
            .as_ref()
            .map(|f| format!(", {}", f.display()))
            .unwrap_or_else(|| ", built in".into());
        out!("{} [{state}{from}]", t.id);
        if !t.description.is_empty() {
            out!("    {}", t.description);
        }
        out!("    {}", t.tools.join(", "));
        if !t.unknown.is_empty() {
            err!(
                "warning: toolset `{}` lists tools this trailmap does not have: {}",
                t.id,
                t.unknown.join(", ")
            );
        }
    }
    Ok(())
}

/// Under `tools`: the active toolsets, and the shortcuts (offered when the screen is at their start).
pub fn footer(catalog: &Catalog, platform: Platform) {
    let active: Vec<String> = catalog
        .toolset_list(platform)
        .into_iter()
        .filter(|t| t.active)
        .map(|t| t.id)
        .collect();
    err!(
        "toolsets active at the start: {} (`tools --toolsets` lists them all; `setActiveToolSets` changes them)",
        active.join(", ")
    );
    let shortcuts: Vec<String> = catalog
        .edge_list()
        .into_iter()
        .filter_map(|e| e.from.map(|from| format!("{} (at `{from}`)", e.tool)))
        .collect();
    if !shortcuts.is_empty() {
        err!(
            "{} shortcut(s), offered when the screen is at their start waypoint: {}",
            shortcuts.len(),
            shortcuts.join(", ")
        );
    }
}
