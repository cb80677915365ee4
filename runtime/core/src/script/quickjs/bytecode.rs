//! Modules compiled once per process: the first engine to import a module parses it and keeps its
//! bytecode; every later engine (each session has one) loads that instead of parsing again. Parsing
//! was most of a small tool's first import and most of the SDK's share of starting an engine.
//!
//! The bytecode comes only from this process's own QuickJS, in memory, and is never read from
//! anywhere else, which is what makes loading it sound.

use std::sync::OnceLock;

use rquickjs::module::{Declared, WriteOptions};
use rquickjs::{Ctx, Module};

/// Declares module `name` from `source`, through `cell`: loaded from its bytecode when `cell` holds
/// one compiled under this name, else compiled and (if the cell is empty) remembered.
///
/// `cell` must outlive every engine that loads from it: QuickJS keeps pointers into the bytes
/// (read-only data, not copied). The built-in modules' cells are statics; a trailmap module's is in
/// its `Arc<Transpiled>`, which the engine keeps to its end.
pub(super) fn declare<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    source: &str,
    cell: &OnceLock<(String, Vec<u8>)>,
) -> rquickjs::Result<Module<'js, Declared>> {
    if let Some((compiled_as, bytes)) = cell.get()
        && compiled_as == name
    {
        // SAFETY: the bytes are this process's own `Module::write` of the same source under the
        // same name, with the same QuickJS, and they outlive the engine (see above).
        return unsafe { Module::load(ctx.clone(), bytes) };
    }
    let module = Module::declare(ctx.clone(), name, source)?;
    if cell.get().is_none()
        && let Ok(bytes) = module.write(WriteOptions::default())
    {
        let _ = cell.set((name.to_string(), bytes));
    }
    Ok(module)
}
