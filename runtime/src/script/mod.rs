//! Scripted tools: swc transpiles and analyzes `.ts`, QuickJS runs it.

pub mod analyze;
pub mod convert;
pub mod engine;
mod isolate;
mod nesting;
pub mod transpile;
