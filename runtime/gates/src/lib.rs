//! The gates a trail passes before it runs ([`check`]: the strict parse gate and the type gate,
//! native or the real TypeScript compiler) and the typed surface they check against ([`surface`]:
//! a catalog's tools as TypeScript, the `.d.ts` and editor schema files, `tools.md`).

pub mod check;
pub mod surface;

pub use check::{
    CheckOptions, CheckReport, CheckStats, Finding, NavCounts, TOOLS_NOT_TYPE_CHECKED, check_native, check_native_with,
    check_nav, check_nav_tsc, check_tools_tsc, check_tsc,
};
pub use surface::{TscError, find_tsc, run_tsc};
pub use trailblaze_core::yaml::parse as parse_yaml;

use std::sync::Arc;
use trailblaze_core::{Project, ProjectError};

/// Trailmap `id`'s typed surface, made once per catalog.
pub fn surface_of(project: &Project, id: &str) -> Result<Arc<surface::client_files::Surface>, ProjectError> {
    project.memo(id, surface::client_files::Surface::of)
}

/// [`Project::load_tools_for`] and the surfaces of those trailmaps, for a `run` or `check` that
/// builds them on another core while it reads its trails.
pub fn load_for(project: &Project, files: &[std::path::PathBuf]) {
    for id in project.load_tools_for(files) {
        let _ = surface_of(project, &id);
    }
}
