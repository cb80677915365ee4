//! The typed surface, as the gates use it: a catalog's tools and host functions as TypeScript and
//! the files `dts` writes; the core's schema readers ([`trailblaze_core::surface`]) beside them.
//!
//! - [`client_files`]: a catalog's tools and host functions as entries, and the files `dts` writes;
//! - [`dts`]: schemas as TypeScript, the generated `trailblaze-client.d.ts` and `tsconfig.json`;
//! - [`tsgen`]: recorded trail calls as a `.trail.gen.ts` file with a line table (`check --tsc`);
//! - [`tsc`]: running the pinned TypeScript compiler and reading its diagnostics;
//! - [`schemas`]: the editor's JSON Schemas; [`reference`]: `docs/tools.md`.

pub mod client_files;
pub mod dts;
pub mod reference;
pub mod schemas;
#[cfg(test)]
mod test_support;
pub mod tsc;
pub mod tsgen;
#[cfg(test)]
mod value_check_tests;

pub use dts::{client_dts, tools_tsconfig};
pub use trailblaze_core::surface::*;
pub use tsc::{TscError, find_tsc, run_tsc};
pub use tsgen::{GenCall, LineEntry, entry_for_line, trail_gen_ts, trails_tsconfig};
