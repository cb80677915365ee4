//! Trails: YAML files whose steps hold recorded tool calls, in Trailblaze's format (DESIGN.md,
//! "Trails"), and the reports a run of them leaves.
//!
//! - [`parse_trail`] / [`load_trail`] are the **parse gate**: strict everywhere. An unknown, stale or
//!   mis-nested key is an error at `file:line:col` naming the nearest valid key; a wrong type points at
//!   the value; every error of a file comes back at once. Scalars keep their quote style, so
//!   `text: '12345678'` reaches the type gate as a string and `text: 12345678` as a number.
//! - The parsed [`Trail`] keeps its [`Document`](crate::yaml::Document): each [`ToolCall`] has the
//!   YAML path of its arguments, so the type gate positions findings inside them
//!   ([`Trail::error_in_call`]).
//! - [`find_trails`] and [`shard`] pick the files a run covers; [`report`] writes what it did.
//!
//! Step numbers: the trailhead is 0, the `trail` steps count from 1, as reports and findings show them.

mod find;
mod migrate;
pub mod model;
mod parse;
pub mod report;

pub use find::{FindError, filter_by_tags, find_trails, is_trail_name, parse_shard, shard, trail_stem};
pub use migrate::{MigrateError, migrate_file, migrate_in_place, migrate_text};
pub use model::{Step, Trail};
pub use parse::{load_trail, parse_trail, parse_trail_owned, read_trail};
pub use report::{CallReport, Outcome, RunReport, StepReport, TrailReport};

#[cfg(test)]
mod tests;
