//! Scripted tools: swc transpiles and analyzes `.ts`; a script runtime runs it behind one port
//! ([`port`]): embedded QuickJS ([`quickjs`]) or a Node.js subprocess ([`subprocess`]). Nothing here
//! knows the dispatcher or the session: runtimes reach them only through the port.

pub mod analyze;
mod errors;
mod isolate;
mod nesting;
pub mod port;
pub mod quickjs;
pub mod sdk;
pub mod subprocess;
pub mod transpile;
