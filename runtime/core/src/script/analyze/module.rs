//! Parsing modules and indexing their declarations, imports, exports and doc comments.

use std::{
    collections::{HashMap, HashSet},
    rc::Rc,
};

use swc_core::{
    common::{
        BytePos, FileName, SourceMapper, Span, Spanned,
        comments::{Comment, CommentKind, SingleThreadedComments},
        sync::Lrc,
    },
    ecma::{
        ast::{
            Decl, DefaultDecl, EsVersion, ExportSpecifier, ImportDecl, ImportSpecifier, Module, ModuleDecl,
            ModuleExportName, ModuleItem, NamedExport, Pat, Stmt,
        },
        parser::{Syntax, TsSyntax, parse_file_as_module},
    },
};

use super::{
    AnalyzeError, Analyzer, Export, Import, Imported, LoadModule, MAX_MODULES, ModuleInfo, TypeDecl, TypeDeclKind,
    ValueDecl, check_nesting, lower::Fail,
};

impl<'l> Analyzer<'l> {
    pub(super) fn new(loader: &'l LoadModule<'l>, max_source: usize) -> Self {
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
    /// Parses and indexes one module.
    pub(super) fn parse(&mut self, file: String, source: String) -> Result<Rc<ModuleInfo>, AnalyzeError> {
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
    pub(super) fn load(&mut self, from: &ModuleInfo, specifier: &str, span: Span) -> Result<Rc<ModuleInfo>, Fail> {
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

    pub(super) fn index(&self, module: Module, idx: usize, file: String) -> ModuleInfo {
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
                ModuleItem::ModuleDecl(ModuleDecl::Import(import)) => add_import(&mut info, import),
                ModuleItem::ModuleDecl(ModuleDecl::ExportNamed(named)) => add_named_exports(&mut info, named),
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
    pub(super) fn add_decl(&self, info: &mut ModuleInfo, decl: Decl, span: Span, exported: bool) {
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
    pub(super) fn doc_at(&self, pos: BytePos) -> Option<String> {
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
    pub(super) fn locate(&self, pos: BytePos) -> (String, u32, u32) {
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

    pub(super) fn error_at(&self, span: Span, message: String) -> AnalyzeError {
        let (file, line, col) = self.locate(span.lo);
        AnalyzeError {
            file,
            line,
            col,
            message,
        }
    }

    /// The source text of `span`, on one line and shortened, to name a type in a message.
    pub(super) fn snippet(&self, span: Span) -> String {
        let text = self.cm.span_to_snippet(span).unwrap_or_default();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > 60 {
            format!("{}…", text.chars().take(59).collect::<String>())
        } else {
            text
        }
    }
}

/// Records an `import` declaration's names, by local name.
fn add_import(info: &mut ModuleInfo, import: ImportDecl) {
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

/// Records `export { a, b as c }`, local or re-exported `from` a module.
fn add_named_exports(info: &mut ModuleInfo, named: NamedExport) {
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

fn export_name(name: &ModuleExportName) -> String {
    match name {
        ModuleExportName::Ident(id) => id.sym.to_string(),
        ModuleExportName::Str(s) => s.value.to_string_lossy().into_owned(),
    }
}

/// The text of a `/** ... */` comment (`text` holds what is between `/*` and `*/`): each line
/// without its leading `*`, cut before the first block tag (`@param`, `@example`...), which is
/// for readers of the code, not for the LLM.
pub(super) fn clean_doc(text: &str) -> Option<String> {
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
