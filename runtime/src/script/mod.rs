//! Scripted tools: swc transpiles and analyzes `.ts`, QuickJS runs it.

#[path = "analyze_stub.rs"]
pub mod analyze;
pub mod convert;
pub mod engine;
pub mod transpile;
