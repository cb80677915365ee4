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
//! check, and inside `catch_unwind`, so no input can take the process down. `load` is the
//! caller's and need not be `Send`: the worker asks the caller's thread for each module over a
//! channel.

use std::{
    collections::{HashMap, HashSet},
    panic::{AssertUnwindSafe, catch_unwind},
    rc::Rc,
    sync::mpsc,
};

use serde_json::Value;
use swc_core::{
    common::{
        BytePos, FileName, SourceMap, SourceMapper, Span, Spanned,
        comments::{Comment, CommentKind, SingleThreadedComments},
        sync::Lrc,
    },
    ecma::{
        ast::{
            Callee, Decl, DefaultDecl, EsVersion, ExportSpecifier, Expr, ExprOrSpread, ImportSpecifier, Lit,
            MemberProp, Module, ModuleDecl, ModuleExportName, ModuleItem, Pat, Prop, PropName, PropOrSpread, Stmt,
            TsEnumDecl, TsInterfaceDecl, TsType, TsTypeAliasDecl,
        },
        parser::{Syntax, TsSyntax, parse_file_as_module},
    },
};

#[path = "analyze/lower.rs"]
mod lower;
#[path = "analyze/schema.rs"]
mod schema;
#[cfg(test)]
#[path = "analyze/tests.rs"]
mod tests;

use lower::{Fail, Role};

/// The module scripts import the SDK from.
pub const SDK_MODULE: &str = "@trailblaze/scripting";

/// What a `TrailblazeNodeSelector` lowers to. The selector grammar is recursive and defined once
/// by the host, so whoever publishes a schema holding this must add `$defs.TrailblazeNodeSelector`.
pub const SELECTOR_REF: &str = "#/$defs/TrailblazeNodeSelector";

/// Largest module the analyzer parses. swc's parser recurses per nesting level and a stack
/// overflow aborts the process, so the worker's stack is sized per source byte: measured in a
/// debug build, the worst shapes cost ~1.4 KiB of stack per byte (`[[[[`, also refused by the
/// bracket check) and ~0.85 KiB (`a=>a=>`, which no bracket check sees). Tool and type modules
/// are a few KiB.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

/// Deepest bracket nesting accepted, as in `transpile`.
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
/// its source), or None if not found.
pub type LoadModule<'a> = dyn Fn(&str, &str) -> Option<(String, String)> + 'a;

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
pub fn analyze_module(file: &str, source: &str, load: &LoadModule<'_>) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
    analyze_module_with(file, source, load, &AnalyzeOptions::default())
}

/// [`analyze_module`] with options.
pub fn analyze_module_with(
    file: &str,
    source: &str,
    load: &LoadModule<'_>,
    options: &AnalyzeOptions,
) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
    let mut spawn_error = None;
    for stack in STACKS {
        match on_worker(stack, file, source, load, options) {
            Ok(result) => return result,
            Err(e) => spawn_error = Some(e),
        }
    }
    let why = spawn_error.map_or_else(String::new, |e| e.to_string());
    Err(unlocated(file, format!("could not start the analyzer thread: {why}")))
}

/// Runs the analysis on a thread with `stack` bytes of stack; `Err` if it cannot start.
fn on_worker(
    stack: usize,
    file: &str,
    source: &str,
    load: &LoadModule<'_>,
    options: &AnalyzeOptions,
) -> std::io::Result<Result<Vec<AnalyzedTool>, AnalyzeError>> {
    enum ToCaller {
        Load { specifier: String, importer: String },
        Done(Result<Vec<AnalyzedTool>, AnalyzeError>),
    }
    std::thread::scope(|scope| {
        let (to_caller, from_worker) = mpsc::channel();
        let (to_worker, from_caller) = mpsc::channel::<Option<(String, String)>>();
        let spawned = std::thread::Builder::new()
            .name("swc-analyze".into())
            .stack_size(stack)
            .spawn_scoped(scope, move || {
                let loader = |specifier: &str, importer: &str| {
                    let request = ToCaller::Load {
                        specifier: specifier.to_owned(),
                        importer: importer.to_owned(),
                    };
                    to_caller.send(request).ok()?;
                    from_caller.recv().ok().flatten()
                };
                let max_source = stack / STACK_PER_BYTE;
                let analyzer = || Analyzer::new(&loader, max_source).run(file, source, options);
                let result = catch_unwind(AssertUnwindSafe(analyzer)).unwrap_or_else(|panic| {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic with a non-string payload".to_owned());
                    Err(unlocated(
                        file,
                        format!("internal error: the analyzer panicked: {message}"),
                    ))
                });
                let _ = to_caller.send(ToCaller::Done(result));
            });
        // No fallback to the caller's thread: its stack is not known to be deep enough.
        let handle = spawned?;
        let mut result = None;
        // `load` runs here, on the caller's thread, while the worker waits for the answer.
        for message in from_worker.iter() {
            match message {
                ToCaller::Load { specifier, importer } => {
                    let _ = to_worker.send(load(&specifier, &importer));
                }
                ToCaller::Done(done) => {
                    result = Some(done);
                    break;
                }
            }
        }
        // Joined explicitly so a worker that died is an error here, not a panic of `scope`.
        let _ = handle.join();
        Ok(result.unwrap_or_else(|| Err(unlocated(file, "internal error: the analyzer stopped".into()))))
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
}

impl<'l> Analyzer<'l> {
    fn new(loader: &'l LoadModule<'l>, max_source: usize) -> Self {
        Self {
            cm: Default::default(),
            comments: Vec::new(),
            modules: Vec::new(),
            by_file: HashMap::new(),
            by_import: HashMap::new(),
            loader,
            max_source,
        }
    }

    fn run(mut self, file: &str, source: &str, options: &AnalyzeOptions) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
        let main = self.parse(file.to_owned(), source.to_owned())?;
        let (namespaces, tool_fns) = sdk_bindings(&main);
        let mut seen = HashSet::new();
        let mut tools = Vec::new();
        for (name, export) in &main.exports {
            let Export::Local(local) = export else {
                continue; // a tool re-exported from elsewhere belongs to that module
            };
            let Some(value) = main.values.get(local) else {
                continue;
            };
            let Some(call) = tool_call(&value.init, &namespaces, &tool_fns) else {
                continue;
            };
            if name == "default" || !seen.insert(name.clone()) {
                continue;
            }
            tools.push(self.tool(&main, name, value, call, options)?);
        }
        Ok(tools)
    }

    fn tool(
        &mut self,
        main: &Rc<ModuleInfo>,
        name: &str,
        value: &ValueDecl,
        call: &swc_core::ecma::ast::CallExpr,
        options: &AnalyzeOptions,
    ) -> Result<AnalyzedTool, AnalyzeError> {
        let args: Vec<&ExprOrSpread> = call.args.iter().filter(|a| a.spread.is_none()).collect();
        let (spec, handler) = match args.as_slice() {
            [] => (None, None),
            [one] if is_spec(main, &one.expr) => (Some(&*one.expr), None),
            [one] => (None, Some(&*one.expr)),
            [spec, handler, ..] => (Some(&*spec.expr), Some(&*handler.expr)),
        };
        let spec = match spec {
            Some(expr) => self.read_spec(main, name, expr)?,
            None => Spec::default(),
        };
        // Type arguments first; else what the handler's own annotations say, as tsc would infer.
        let type_args: &[Box<TsType>] = call.type_args.as_ref().map_or(&[], |t| &t.params);
        // A handler declared apart (`const handler = async (input: In) => ...`) is read there.
        let handler = handler.map(|h| match unwrap_expr(h) {
            Expr::Ident(id) => main.values.get(&*id.sym).map_or(h, |v| &*v.init),
            _ => h,
        });
        let (handler_in, handler_out) = handler.map_or((None, None), handler_types);
        let input_ty = type_args.first().map(|t| &**t).or(handler_in);
        let output_ty = type_args.get(1).map(|t| &**t).or(handler_out);

        let input_schema = match input_ty {
            Some(_) if options.inputs_declared.iter().any(|n| n == name) => None,
            Some(ty) => Some(self.lower_for(main, name, ty, Role::Input)?),
            None => None,
        };
        let output_schema = match output_ty {
            Some(ty) => Some(self.lower_for(main, name, ty, Role::Output)?),
            None => None,
        };
        Ok(AnalyzedTool {
            name: name.to_owned(),
            description: spec.description.or_else(|| value.doc.clone()),
            surface_to_llm: spec.surface_to_llm,
            is_recordable: spec.is_recordable,
            read_only: spec.read_only,
            input_schema,
            output_schema,
            line: self.locate(value.span.lo).1,
        })
    }

    fn lower_for(&mut self, main: &Rc<ModuleInfo>, tool: &str, ty: &TsType, role: Role) -> Result<Value, AnalyzeError> {
        lower::lower_root(self, main, ty, role).map_err(|fail| match fail {
            Fail::Fatal(e) => e,
            Fail::Type { span, what } => {
                let hint = match role {
                    Role::Input => {
                        format!("declare the input schema by hand in `{tool}.tool.yaml` under `inputSchema`")
                    }
                    Role::Output => "use JSON-shaped types for the output, or `unknown`".to_owned(),
                };
                self.error_at(
                    span,
                    format!("tool `{tool}`: cannot lower the {role} type: {what}; {hint}"),
                )
            }
        })
    }

    /// Reads the spec object literal. Flags hidden behind expressions would be silently
    /// dropped (a `surfaceToLlm: false` lost means a tool shown to the LLM), so anything but
    /// literals is an error.
    fn read_spec(&self, main: &ModuleInfo, tool: &str, expr: &Expr) -> Result<Spec, AnalyzeError> {
        let expr = unwrap_expr(expr);
        let object = match expr {
            Expr::Object(object) => object,
            Expr::Ident(id) => match main.values.get(&*id.sym).map(|v| unwrap_expr(&v.init)) {
                Some(Expr::Object(object)) => object,
                _ => return Err(self.spec_error(tool, expr.span(), "is not an object literal")),
            },
            _ => return Err(self.spec_error(tool, expr.span(), "is not an object literal")),
        };
        let mut spec = Spec::default();
        for prop in &object.props {
            let PropOrSpread::Prop(prop) = prop else {
                return Err(self.spec_error(tool, prop.span(), "uses a spread"));
            };
            let Prop::KeyValue(kv) = &**prop else {
                return Err(self.spec_error(tool, prop.span(), "has a property that is not `key: literal`"));
            };
            let key = match &kv.key {
                PropName::Ident(id) => id.sym.to_string(),
                PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                _ => return Err(self.spec_error(tool, kv.key.span(), "has a computed key")),
            };
            let value = unwrap_expr(&kv.value);
            let flag = |slot: &mut Option<bool>| match value {
                Expr::Lit(Lit::Bool(b)) => {
                    *slot = Some(b.value);
                    Ok(())
                }
                _ => Err(self.spec_error(
                    tool,
                    value.span(),
                    &format!("sets `{key}` to something other than `true` or `false`"),
                )),
            };
            match key.as_str() {
                "surfaceToLlm" => flag(&mut spec.surface_to_llm)?,
                "isRecordable" => flag(&mut spec.is_recordable)?,
                "readOnly" => flag(&mut spec.read_only)?,
                "description" => {
                    let text = match value {
                        Expr::Lit(Lit::Str(s)) => s.value.to_string_lossy().into_owned(),
                        Expr::Tpl(t) if t.exprs.is_empty() => t
                            .quasis
                            .iter()
                            .filter_map(|q| q.cooked.as_ref())
                            .map(|c| c.to_string_lossy().into_owned())
                            .collect(),
                        _ => {
                            return Err(self.spec_error(
                                tool,
                                value.span(),
                                "sets `description` to something other than a string literal",
                            ));
                        }
                    };
                    let text = text.trim();
                    spec.description = (!text.is_empty()).then(|| text.to_owned());
                }
                _ => {
                    return Err(self.spec_error(
                        tool,
                        kv.key.span(),
                        &format!(
                            "has the unknown key `{key}` (expected description, surfaceToLlm, \
                             isRecordable or readOnly)"
                        ),
                    ));
                }
            }
        }
        Ok(spec)
    }

    fn spec_error(&self, tool: &str, span: Span, what: &str) -> AnalyzeError {
        self.error_at(
            span,
            format!(
                "tool `{tool}`: the spec {what}; the analyzer reads the spec from the source, so \
                 write it as an object literal such as `{{ readOnly: true }}`"
            ),
        )
    }

    /// Parses and indexes one module.
    fn parse(&mut self, file: String, source: String) -> Result<Rc<ModuleInfo>, AnalyzeError> {
        if source.len() > self.max_source {
            return Err(AnalyzeError {
                file,
                line: 1,
                col: 1,
                message: format!(
                    "the file is {} bytes, more than the analyzer's limit of {}",
                    source.len(),
                    self.max_source
                ),
            });
        }
        check_nesting(&file, &source)?;
        let fm = self
            .cm
            .new_source_file(Lrc::new(FileName::Custom(file.clone())), source);
        let syntax = Syntax::Typescript(TsSyntax {
            // As in `transpile`, so both report the same syntax errors.
            decorators: false,
            dts: file.ends_with(".d.ts"),
            ..Default::default()
        });
        let mut recovered = Vec::new();
        let comments = SingleThreadedComments::default();
        let parsed = parse_file_as_module(&fm, syntax, EsVersion::latest(), Some(&comments), &mut recovered);
        // The parser recovers from some errors; they are still errors. Report the earliest.
        let module = match parsed {
            Err(e) => return Err(self.error_at(e.span(), e.kind().msg().into_owned())),
            Ok(module) => match recovered.into_iter().min_by_key(|e| e.span().lo) {
                Some(e) => return Err(self.error_at(e.span(), e.kind().msg().into_owned())),
                None => module,
            },
        };
        // swc files a comment as trailing the token before it when on the same line
        // (`{ /** doc */ id: string }`); a doc comment is found by position instead.
        let (leading, trailing) = comments.take_all();
        let mut found: Vec<Comment> = leading
            .borrow()
            .values()
            .chain(trailing.borrow().values())
            .flatten()
            .cloned()
            .collect();
        found.sort_by_key(|c| c.span.lo);
        found.dedup_by_key(|c| c.span.lo);
        self.comments.extend(found);
        let idx = self.modules.len();
        let info = Rc::new(self.index(module, idx, file.clone()));
        self.modules.push(info.clone());
        self.by_file.insert(file, idx);
        Ok(info)
    }

    /// The module `specifier` names, imported from `from`, parsed on first use.
    fn load(&mut self, from: &ModuleInfo, specifier: &str, span: Span) -> Result<Rc<ModuleInfo>, Fail> {
        let key = (from.idx, specifier.to_owned());
        if let Some(module) = self.by_import.get(&key).and_then(|&i| self.modules.get(i)) {
            return Ok(module.clone());
        }
        let Some((file, source)) = (self.loader)(specifier, &from.file) else {
            return Err(Fail::Type {
                span,
                what: format!("cannot find the module `{specifier}` imported by `{}`", from.file),
            });
        };
        let module = match self.by_file.get(&file).and_then(|&i| self.modules.get(i)) {
            Some(module) => module.clone(),
            None if self.modules.len() >= MAX_MODULES => {
                return Err(Fail::Type {
                    span,
                    what: format!("the types span more than {MAX_MODULES} modules"),
                });
            }
            None => self.parse(file, source).map_err(Fail::Fatal)?,
        };
        self.by_import.insert(key, module.idx);
        Ok(module)
    }

    fn index(&self, module: Module, idx: usize, file: String) -> ModuleInfo {
        let mut info = ModuleInfo {
            idx,
            file,
            types: HashMap::new(),
            classes: HashSet::new(),
            values: HashMap::new(),
            imports: HashMap::new(),
            exports: Vec::new(),
            star_exports: Vec::new(),
        };
        for item in module.body {
            match item {
                ModuleItem::Stmt(Stmt::Decl(decl)) => {
                    let span = decl.span();
                    self.add_decl(&mut info, decl, span, false);
                }
                ModuleItem::Stmt(_) => {}
                ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(export)) => {
                    self.add_decl(&mut info, export.decl, export.span, true);
                }
                ModuleItem::ModuleDecl(ModuleDecl::Import(import)) => {
                    let specifier = import.src.value.to_string_lossy().into_owned();
                    for s in import.specifiers {
                        let (local, imported) = match s {
                            ImportSpecifier::Named(n) => {
                                let imported = n.imported.as_ref().map_or_else(|| n.local.sym.to_string(), export_name);
                                (n.local.sym.to_string(), Imported::Named(imported))
                            }
                            ImportSpecifier::Default(d) => (d.local.sym.to_string(), Imported::Default),
                            ImportSpecifier::Namespace(n) => (n.local.sym.to_string(), Imported::Namespace),
                        };
                        info.imports.insert(
                            local,
                            Import {
                                specifier: specifier.clone(),
                                imported,
                                span: import.span,
                            },
                        );
                    }
                }
                ModuleItem::ModuleDecl(ModuleDecl::ExportNamed(named)) => {
                    let specifier = named.src.map(|s| s.value.to_string_lossy().into_owned());
                    for s in named.specifiers {
                        let ExportSpecifier::Named(n) = s else {
                            continue; // `export * as ns from`: not followed for types
                        };
                        let orig = export_name(&n.orig);
                        let name = n.exported.as_ref().map_or_else(|| orig.clone(), export_name);
                        let export = match &specifier {
                            Some(specifier) => Export::From {
                                specifier: specifier.clone(),
                                orig,
                                span: n.span,
                            },
                            None => Export::Local(orig),
                        };
                        info.exports.push((name, export));
                    }
                }
                ModuleItem::ModuleDecl(ModuleDecl::ExportDefaultDecl(d)) => {
                    if let DefaultDecl::TsInterfaceDecl(i) = d.decl {
                        let name = i.id.sym.to_string();
                        info.exports.push(("default".into(), Export::Local(name.clone())));
                        let doc = self.doc_at(d.span.lo);
                        info.types.entry(name).or_default().push(TypeDecl {
                            doc,
                            kind: TypeDeclKind::Interface(i),
                        });
                    }
                }
                ModuleItem::ModuleDecl(ModuleDecl::ExportAll(all)) => {
                    let specifier = all.src.value.to_string_lossy().into_owned();
                    info.star_exports.push((specifier, all.span));
                }
                ModuleItem::ModuleDecl(_) => {}
            }
        }
        info
    }

    /// Indexes one declaration; `span` is the statement's, from `export` when exported, which
    /// is where its doc comment sits.
    fn add_decl(&self, info: &mut ModuleInfo, decl: Decl, span: Span, exported: bool) {
        let doc = self.doc_at(span.lo);
        let (name, kind) = match decl {
            Decl::TsInterface(i) => (i.id.sym.to_string(), TypeDeclKind::Interface(i)),
            Decl::TsTypeAlias(a) => (a.id.sym.to_string(), TypeDeclKind::Alias(a)),
            Decl::TsEnum(e) => (e.id.sym.to_string(), TypeDeclKind::Enum(e)),
            Decl::Class(c) => {
                info.classes.insert(c.ident.sym.to_string());
                return;
            }
            Decl::Fn(f) => {
                info.classes.insert(f.ident.sym.to_string());
                return;
            }
            Decl::Var(var) => {
                for d in var.decls {
                    let (Pat::Ident(id), Some(init)) = (d.name, d.init) else {
                        continue;
                    };
                    let name = id.id.sym.to_string();
                    if exported {
                        info.exports.push((name.clone(), Export::Local(name.clone())));
                    }
                    let doc = doc.clone();
                    info.values.insert(name, ValueDecl { init, doc, span });
                }
                return;
            }
            _ => return,
        };
        if exported {
            info.exports.push((name.clone(), Export::Local(name.clone())));
        }
        info.types.entry(name).or_default().push(TypeDecl { doc, kind });
    }

    /// The doc comment (`/** ... */`) right before `pos`, with only blanks and other comments
    /// between them, cleaned.
    fn doc_at(&self, pos: BytePos) -> Option<String> {
        let before = self.comments.partition_point(|c| c.span.hi <= pos);
        let mut end = pos;
        for c in self.comments.get(..before)?.iter().rev() {
            let gap = self.cm.span_to_snippet(Span::new(c.span.hi, end)).ok()?;
            if !gap.trim().is_empty() {
                return None;
            }
            if c.kind == CommentKind::Block && c.text.starts_with('*') {
                return clean_doc(&c.text);
            }
            end = c.span.lo;
        }
        None
    }

    /// (file, 1-based line, 1-based column in characters) of `pos`.
    fn locate(&self, pos: BytePos) -> (String, u32, u32) {
        let fallback = || {
            let file = self.modules.first().map_or_else(String::new, |m| m.file.clone());
            (file, 0, 0)
        };
        match self.cm.try_lookup_char_pos(pos) {
            Ok(loc) => {
                let file = match &*loc.file.name {
                    FileName::Custom(name) => name.clone(),
                    other => other.to_string(),
                };
                (
                    file,
                    u32::try_from(loc.line).unwrap_or(u32::MAX),
                    u32::try_from(loc.col.0 + 1).unwrap_or(u32::MAX),
                )
            }
            Err(_) => fallback(),
        }
    }

    fn error_at(&self, span: Span, message: String) -> AnalyzeError {
        let (file, line, col) = self.locate(span.lo);
        AnalyzeError {
            file,
            line,
            col,
            message,
        }
    }

    /// The source text of `span`, on one line and shortened, to name a type in a message.
    fn snippet(&self, span: Span) -> String {
        let text = self.cm.span_to_snippet(span).unwrap_or_default();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > 60 {
            format!("{}…", text.chars().take(59).collect::<String>())
        } else {
            text
        }
    }
}

fn export_name(name: &ModuleExportName) -> String {
    match name {
        ModuleExportName::Ident(id) => id.sym.to_string(),
        ModuleExportName::Str(s) => s.value.to_string_lossy().into_owned(),
    }
}

/// Local names bound to the SDK's `trailblaze` object (always including the bare
/// `trailblaze`), and to a named import of `tool`.
fn sdk_bindings(main: &ModuleInfo) -> (HashSet<String>, HashSet<String>) {
    let mut namespaces = HashSet::from(["trailblaze".to_owned()]);
    let mut tool_fns = HashSet::new();
    for (local, import) in &main.imports {
        if import.specifier != SDK_MODULE {
            continue;
        }
        match &import.imported {
            Imported::Named(n) if n == "trailblaze" => {
                namespaces.insert(local.clone());
            }
            Imported::Default => {
                namespaces.insert(local.clone());
            }
            Imported::Named(n) if n == "tool" => {
                tool_fns.insert(local.clone());
            }
            _ => {}
        }
    }
    (namespaces, tool_fns)
}

/// The `trailblaze.tool(...)` / `tool(...)` call `init` is, if it is one.
fn tool_call<'e>(
    init: &'e Expr,
    namespaces: &HashSet<String>,
    tool_fns: &HashSet<String>,
) -> Option<&'e swc_core::ecma::ast::CallExpr> {
    let Expr::Call(call) = unwrap_expr(init) else {
        return None;
    };
    let Callee::Expr(callee) = &call.callee else {
        return None;
    };
    let is_tool = match unwrap_expr(callee) {
        Expr::Member(member) => {
            matches!(&member.prop, MemberProp::Ident(p) if &*p.sym == "tool")
                && matches!(unwrap_expr(&member.obj), Expr::Ident(o) if namespaces.contains(&*o.sym))
        }
        Expr::Ident(id) => tool_fns.contains(&*id.sym),
        _ => false,
    };
    is_tool.then_some(call)
}

/// Sees through parentheses and type-only wrappers (`as`, `satisfies`, `!`, `as const`).
fn unwrap_expr(mut expr: &Expr) -> &Expr {
    loop {
        expr = match expr {
            Expr::Paren(p) => &p.expr,
            Expr::TsAs(a) => &a.expr,
            Expr::TsSatisfies(s) => &s.expr,
            Expr::TsNonNull(n) => &n.expr,
            Expr::TsConstAssertion(c) => &c.expr,
            Expr::TsTypeAssertion(t) => &t.expr,
            _ => return expr,
        };
    }
}

/// Whether a lone argument is the spec (an object literal, maybe through a `const`) rather
/// than the handler.
fn is_spec(main: &ModuleInfo, expr: &Expr) -> bool {
    match unwrap_expr(expr) {
        Expr::Object(_) => true,
        Expr::Ident(id) => main
            .values
            .get(&*id.sym)
            .is_some_and(|v| matches!(unwrap_expr(&v.init), Expr::Object(_))),
        _ => false,
    }
}

/// The annotated type of the handler's first parameter and its annotated return type.
fn handler_types(handler: &Expr) -> (Option<&TsType>, Option<&TsType>) {
    fn param_type(pat: &Pat) -> Option<&TsType> {
        match pat {
            Pat::Ident(b) => b.type_ann.as_ref().map(|a| &*a.type_ann),
            Pat::Object(o) => o.type_ann.as_ref().map(|a| &*a.type_ann),
            Pat::Assign(a) => param_type(&a.left),
            _ => None,
        }
    }
    match unwrap_expr(handler) {
        Expr::Arrow(arrow) => (
            arrow.params.first().and_then(param_type),
            arrow.return_type.as_ref().map(|a| &*a.type_ann),
        ),
        Expr::Fn(f) => (
            f.function.params.first().and_then(|p| param_type(&p.pat)),
            f.function.return_type.as_ref().map(|a| &*a.type_ann),
        ),
        _ => (None, None),
    }
}

/// The text of a `/** ... */` comment (`text` holds what is between `/*` and `*/`): each line
/// without its leading `*`, cut before the first block tag (`@param`, `@example`...), which is
/// for readers of the code, not for the LLM.
fn clean_doc(text: &str) -> Option<String> {
    let body = text.strip_prefix('*').unwrap_or(text);
    let mut lines = Vec::new();
    for line in body.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix('*').unwrap_or(line);
        let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
        if line.starts_with('@') {
            break;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let first = lines.iter().position(|l| !l.is_empty())?;
    Some(lines[first..].join("\n"))
}

/// Refuses sources nested deeper than [`MAX_NESTING`] levels before swc can recurse into
/// them. Counts brackets, and the `<` of type arguments (`Array<Array<...`), outside strings and
/// comments, roughly: it only needs to be right for files deep enough to matter. Mirrors
/// `transpile`'s check, which does not count `<`.
fn check_nesting(file: &str, source: &str) -> Result<(), AnalyzeError> {
    let bytes = source.as_bytes();
    let (mut depth, mut angles) = (0usize, 0usize);
    let (mut line, mut line_start, mut i) = (1u32, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                angles = 0;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                angles = 0;
            }
            // A comparison (`i<n`) is not closed by a `>`; forgetting angles at the end of
            // every statement and bracket keeps such leftovers from adding up.
            b';' => angles = 0,
            b'<' if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') => {
                angles += 1;
            }
            b'>' if i > 0 && bytes[i - 1] != b'=' => angles = angles.saturating_sub(1),
            _ => {}
        }
        if depth + angles > MAX_NESTING {
            let col = source.get(line_start..i).map_or(0, |s| s.chars().count()) + 1;
            return Err(AnalyzeError {
                file: file.to_owned(),
                line,
                col: u32::try_from(col).unwrap_or(u32::MAX),
                message: format!("brackets nested deeper than {MAX_NESTING} levels"),
            });
        }
        i += 1;
    }
    Ok(())
}
