//! trailblaze: a Rust host for TypeScript scripted tools that drive mobile apps.
//!
//! The crate embedders depend on. It re-exports the core ([`trailblaze_core`]: trails, trailmaps,
//! the catalog, the dispatcher, sessions, the script runtimes, replay and run) and the
//! parts, each a crate of its own: [`gates`] (`check` and the typed surface, always in), and by
//! feature [`web`] (`--device web`), [`android`] (`--device
//! android`), [`ios`] (`--device ios`), [`agent`] (the LLM agent and judge), [`fetch`] (`ctx.fetch`), [`reports`] (pictures:
//! the storyboard GIF, screens for the agent's eyes).
//!
//! [`open`] opens a project with every part this build has ([`all_parts`]); the rest of the everyday API is the
//! core's (docs/embedding.md shows it on one screen).

pub use trailblaze_core::*;

/// The gates a trail passes before it runs: the strict parse gate and the type gate (native, or
/// the real TypeScript compiler with `check_tsc`), and the typed surface they check against.
pub use trailblaze_gates as gates;

/// The tools a catalog offers, writing a built-in tool of your own in Rust
/// ([`Catalog::register_builtin`]), and the files `dts` writes of them.
pub mod tools {
    pub use trailblaze_core::tools::*;
    pub use trailblaze_gates::surface::client_files::{write_client_files, write_surface_files};
    pub use trailblaze_gates::surface::schemas::{
        SCHEMA_DIR, SettingsError, bind_schemas, trail_schema, write_schemas,
    };
}

#[cfg(feature = "agent")]
pub use trailblaze_agent as agent;
#[cfg(feature = "adb")]
pub use trailblaze_android as android;
#[cfg(feature = "fetch")]
pub use trailblaze_fetch as fetch;
#[cfg(feature = "ios")]
pub use trailblaze_ios as ios;
#[cfg(feature = "raster")]
pub use trailblaze_reports as reports;
#[cfg(feature = "web")]
pub use trailblaze_web as web;

/// Every part this build has: the devices, tools, `ctx.fetch` and run files of the features on.
pub fn all_parts() -> Parts {
    #[allow(unused_mut)]
    let mut parts = Parts::default();
    #[cfg(feature = "adb")]
    {
        parts = parts.with(android::parts());
    }
    #[cfg(feature = "fetch")]
    {
        parts = parts.with(fetch::parts());
    }
    #[cfg(feature = "ios")]
    {
        parts = parts.with(ios::parts());
    }
    #[cfg(feature = "raster")]
    {
        parts = parts.with(reports::parts());
    }
    #[cfg(feature = "web")]
    {
        parts = parts.with(web::parts());
    }
    parts
}

/// Opens the trailmaps folder at `root` with [`all_parts`] added to `opts`' own.
pub fn open(root: &std::path::Path, opts: ProjectOptions) -> Result<Project, ProjectError> {
    let ProjectOptions {
        cache_dir,
        secrets_file,
        parts,
    } = opts;
    let parts = all_parts().with(parts);
    Project::open(
        root,
        ProjectOptions {
            cache_dir,
            secrets_file,
            parts,
        },
    )
}
