//! trailblaze: a Rust host for TypeScript scripted tools that drive mobile apps.
//!
//! Modules follow DESIGN.md's words: a [`trailmap`] declares [`tool`]s and host functions; a
//! [`session`] runs them through the one [`dispatch`]er against a [`device`]; scripted tools run in the
//! [`script`] engine.

pub mod budget;
pub mod catalog;
pub mod check;
pub mod device;
pub mod dispatch;
pub mod markup;
pub mod project;
pub mod run;
pub mod script;
pub mod secret;
pub mod selector;
pub mod session;
pub mod snapshot;
pub mod state;
pub mod surface;
pub mod tool;
pub mod trail;
pub mod trailmap;
pub mod yaml;
