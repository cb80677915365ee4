//! Reads scripted tools' declarations from `.ts` source and lowers their TypeScript input and
//! output types to JSON Schema, the project's one type model.
//!
//! A tool module exports `const <name> = trailblaze.tool<I, O>(spec?, handler)`. swc parses the
//! module (types are *read*, not checked: that is tsc's job); the analyzer finds those exports,
//! reads the spec's literal flags and the export's doc comment, and lowers `I` and `O` through
//! the interfaces, aliases and enums declared in the module or imported from sibling modules
//! (fetched through the caller's `load`). The lowering rules are listed atop `analyze/lower.rs`.
//!
//! swc runs on a dedicated thread with a large stack, behind a size cap and a bracket-nesting
//! check, and inside `catch_unwind`, so no input can take the process down. `load` runs on the
//! analyzer threads (it must be `Sync`); a trailmap's modules share a few of them.

use std::{
    collections::{HashMap, HashSet},
    rc::Rc,
};

use serde_json::Value;
use swc_core::{
    common::{SourceMap, Span, comments::Comment, sync::Lrc},
    ecma::ast::{Expr, TsEnumDecl, TsInterfaceDecl, TsTypeAliasDecl},
};

use super::{isolate, nesting};

mod lower;
mod lowered_schema;
mod module;
#[cfg(test)]
mod tests;
mod tool;

use tool::unwrap_expr;

/// The module scripts import the SDK from.
pub use super::sdk::MODULE as SDK_MODULE;

/// What a `TrailblazeNodeSelector` lowers to. The selector grammar is recursive and defined once
/// by the host, so whoever publishes a schema holding this must add `$defs.TrailblazeNodeSelector`.
/// The selector type's name: in TypeScript, in JSON Schema `$defs`, everywhere. Defined here once.
macro_rules! selector_type {
    () => {
        "TrailblazeNodeSelector"
    };
}
pub const SELECTOR_TYPE: &str = selector_type!();
pub const SELECTOR_REF: &str = concat!("#/$defs/", selector_type!());

/// Largest module the analyzer parses. swc's parser recurses per nesting level and a stack
/// overflow aborts the process, so the worker's stack is sized per source byte: measured in a
/// debug build, the worst shapes cost ~1.4 KiB of stack per byte (`[[[[`, also refused by the
/// bracket check) and ~0.85 KiB (`a=>a=>`, which no bracket check sees). Tool and type modules
/// are a few KiB.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

/// Deepest nesting accepted, brackets and type arguments counted (see [`nesting::Counted`]).
/// Operators are not: the worker's stack is sized per source byte for the worst shape, so
/// this only refuses early what would cost swc the most.
const MAX_NESTING: usize = 500;

/// Stack of the worker thread per byte of the largest module accepted. The stack is only
/// reserved address space: pages are touched as the recursion goes.
const STACK_PER_BYTE: usize = 2048;

/// Worker stacks tried in turn: 512 MiB (for [`MAX_SOURCE_BYTES`]), else, where that much
/// address space cannot be reserved (32-bit devices), 64 MiB with an 8 times smaller cap.
const STACKS: [usize; 2] = [STACK_PER_BYTE * MAX_SOURCE_BYTES, STACK_PER_BYTE * MAX_SOURCE_BYTES / 8];

/// Modules one analysis may load (the tool module included): a guard against runaway imports.
const MAX_MODULES: usize = 64;

/// Reads a sibling module for imported types: given the import specifier as written (e.g.
/// "./types" or "./types.ts") and the importing file's name, returns (that module's file name,
/// its source), or None if not found. It runs on the analyzer threads.
pub type LoadModule<'a> = dyn Fn(&str, &str) -> Option<(String, String)> + Sync + 'a;

/// One `export const <name> = trailblaze.tool<I, O>(spec?, handler)` found in a module.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzedTool {
    /// The export name = the tool name.
    pub name: String,
    /// `spec.description` when given as a string literal, else the export's own doc comment
    /// (`/** ... */`), cleaned: no leading `*`, trimmed, cut before the first block tag (`@param`...).
    pub description: Option<String>,
    /// From the spec object literal.
    pub surface_to_llm: Option<bool>,
    pub is_recordable: Option<bool>,
    pub read_only: Option<bool>,
    /// The original's `supportedPlatforms` (`android`, `ios`, `web`, `desktop`): a device of another
    /// platform refuses the call. `None`: every platform.
    pub supported_platforms: Option<Vec<String>>,
    /// JSON Schema of `I`, always an object schema; `None` when the tool names no input type
    /// (neither a type argument nor an annotation on the handler's first parameter) or when
    /// [`AnalyzeOptions::inputs_declared`] lists the tool.
    pub input_schema: Option<Value>,
    /// JSON Schema of `O` (a `Promise<T>` is unwrapped); `None` when absent.
    pub output_schema: Option<Value>,
    /// 1-based line of the export.
    pub line: u32,
}

/// Where and why analysis failed. `line` and `col` (1-based, in characters) are 0 when unknown.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct AnalyzeError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// Knobs for [`analyze_module_with`].
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Tools whose input schema is declared elsewhere (`inputSchema` in `<name>.tool.yaml`):
    /// their `I` is not lowered, so a type the analyzer cannot lower does not fail the module.
    pub inputs_declared: Vec<String>,
}

/// Reads `source` (the file `file`, e.g. "demo/tools/signIn.ts"). `load` reads a sibling module
/// for imported types: it gets the import specifier as written (e.g. "./types" or "./types.ts")
/// and the importing file's name, and returns (that module's file name, its source), or None if
/// not found.
#[cfg(test)]
pub fn analyze_module(file: &str, source: &str, load: &LoadModule<'_>) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
    analyze_module_with(file, source, load, &AnalyzeOptions::default())
}

/// [`analyze_module`] with options.
#[cfg(test)]
pub fn analyze_module_with(
    file: &str,
    source: &str,
    load: &LoadModule<'_>,
    options: &AnalyzeOptions,
) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
    let modules = [(file.to_owned(), source.to_owned())];
    analyze_modules_with(&modules, load, options, 1)
        .pop()
        .unwrap_or_else(|| Err(unlocated(file, "internal error: not analyzed".into())))
}

/// [`analyze_module_with`] of several modules (file name, source), on up to `threads` analyzer
/// threads, each reading its share of the modules in turn; the results in the modules' order.
/// `load` runs on the analyzer threads. Starting an analyzer thread (its stack reserved, then
/// unmapped) cost more than reading a small module: a trailmap's tools share them.
pub fn analyze_modules_with(
    modules: &[(String, String)],
    load: &LoadModule<'_>,
    options: &AnalyzeOptions,
    threads: usize,
) -> Vec<Result<Vec<AnalyzedTool>, AnalyzeError>> {
    let mut spawn_error = None;
    for stack in STACKS {
        match on_workers(stack, modules, load, options, threads) {
            Ok(results) => return results,
            Err(e) => spawn_error = Some(e),
        }
    }
    let why = spawn_error.map_or_else(String::new, |e| e.to_string());
    modules
        .iter()
        .map(|(file, _)| Err(unlocated(file, format!("could not start the analyzer thread: {why}"))))
        .collect()
}

/// [`analyze_modules_with`] on threads with `stack` bytes of stack; `Err` if one cannot start.
fn on_workers(
    stack: usize,
    modules: &[(String, String)],
    load: &LoadModule<'_>,
    options: &AnalyzeOptions,
    threads: usize,
) -> std::io::Result<Vec<Result<Vec<AnalyzedTool>, AnalyzeError>>> {
    let per = modules.len().div_ceil(threads.max(1)).max(1);
    let max_source = stack / STACK_PER_BYTE;
    let analyze = |run: &[(String, String)]| -> Vec<_> {
        run.iter()
            .map(|(file, source)| {
                let analyzer = || Analyzer::new(load, max_source).run(file, source, options);
                isolate::catch_panic(analyzer).unwrap_or_else(|message| {
                    Err(unlocated(
                        file,
                        format!("internal error: the analyzer panicked: {message}"),
                    ))
                })
            })
            .collect()
    };
    std::thread::scope(|scope| {
        let workers = modules
            .chunks(per)
            .map(|run| {
                std::thread::Builder::new()
                    .name("swc-analyze".into())
                    .stack_size(stack)
                    .spawn_scoped(scope, move || analyze(run))
                    .map(|worker| (run, worker))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        // A worker that died fails its own modules, not the others'.
        Ok(workers
            .into_iter()
            .flat_map(|(run, worker)| {
                worker.join().unwrap_or_else(|_| {
                    run.iter()
                        .map(|(file, _)| Err(unlocated(file, "internal error: the analyzer stopped".into())))
                        .collect()
                })
            })
            .collect())
    })
}

fn unlocated(file: &str, message: String) -> AnalyzeError {
    AnalyzeError {
        file: file.to_owned(),
        line: 0,
        col: 0,
        message,
    }
}

/// A module, parsed and indexed by name. Declarations are moved out of the AST (the rest is
/// dropped) so lowering can borrow them while more modules are loaded.
struct ModuleInfo {
    /// Position in `Analyzer::modules`.
    idx: usize,
    file: String,
    /// Interfaces, aliases and enums by name; several for a merged interface.
    types: HashMap<String, Vec<TypeDecl>>,
    /// Class and function names, only to say why such a name is not a type we can lower.
    classes: HashSet<String>,
    /// Top-level `const`/`let`/`var` declarators with an initializer.
    values: HashMap<String, ValueDecl>,
    /// Imports by local name.
    imports: HashMap<String, Import>,
    /// Exports in source order (a name may be both a type and a value).
    exports: Vec<(String, Export)>,
    /// `export * from "<specifier>"`.
    star_exports: Vec<(String, Span)>,
}

struct TypeDecl {
    doc: Option<String>,
    kind: TypeDeclKind,
}

enum TypeDeclKind {
    Interface(Box<TsInterfaceDecl>),
    Alias(Box<TsTypeAliasDecl>),
    Enum(Box<TsEnumDecl>),
}

struct ValueDecl {
    init: Box<Expr>,
    doc: Option<String>,
    /// The whole statement (from `export` when exported).
    span: Span,
}

struct Import {
    specifier: String,
    imported: Imported,
    span: Span,
}

enum Imported {
    Named(String),
    Default,
    Namespace,
}

enum Export {
    /// `export <decl>`, `export { local as name }`.
    Local(String),
    /// `export { orig as name } from "<specifier>"`.
    From {
        specifier: String,
        orig: String,
        span: Span,
    },
}

/// All the modules of one analysis, sharing one source map (so any span names its file).
struct Analyzer<'l> {
    cm: Lrc<SourceMap>,
    /// Every comment of every module, in source-map order (each new file is placed after the
    /// previous ones, and comments do not overlap).
    comments: Vec<Comment>,
    modules: Vec<Rc<ModuleInfo>>,
    by_file: HashMap<String, usize>,
    /// (importer, specifier) → module, so `load` is asked once per import.
    by_import: HashMap<(usize, String), usize>,
    loader: &'l LoadModule<'l>,
    /// Largest module accepted, for the worker's stack.
    max_source: usize,
}

#[derive(Default)]
struct Spec {
    description: Option<String>,
    surface_to_llm: Option<bool>,
    is_recordable: Option<bool>,
    read_only: Option<bool>,
    supported_platforms: Option<Vec<String>>,
}

/// Refuses sources nested deeper than [`MAX_NESTING`] levels before swc can recurse into them.
fn check_nesting(file: &str, source: &str) -> Result<(), AnalyzeError> {
    nesting::check(source, MAX_NESTING, nesting::Counted::TypeArguments).map_err(|(line, col)| AnalyzeError {
        file: file.to_owned(),
        line,
        col,
        message: format!("brackets nested deeper than {MAX_NESTING} levels"),
    })
}
