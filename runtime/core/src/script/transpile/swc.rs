//! The swc pipeline: parse as a TypeScript module, resolver → strip → hygiene → fixer →
//! codegen, and the line map back to the `.ts` source.

use std::sync::{Arc, Mutex};

use swc_core::{
    common::{
        BytePos, FileName, GLOBALS, Globals, LineCol, Mark, SourceFile, SourceMap, Span, Spanned,
        errors::{DiagnosticBuilder, Emitter, HANDLER, Handler},
        sync::Lrc,
    },
    ecma::{
        ast::{EsVersion, Module, Program},
        codegen::{self, text_writer::JsWriter},
        parser::{Syntax, TsSyntax, error::Error as ParseError, parse_file_as_module},
        transforms::{
            base::{fixer::fixer, hygiene::hygiene, resolver},
            typescript::{self, TsImportExportAssignConfig},
        },
    },
};

use super::{TranspileError, Transpiled};

/// A diagnostic swc reported through its `Handler`, kept instead of printed.
struct Captured {
    is_error: bool,
    message: String,
    span: Option<Span>,
}

struct CaptureEmitter(Arc<Mutex<Vec<Captured>>>);

impl Emitter for CaptureEmitter {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let captured = Captured {
            is_error: db.is_error(),
            message: db.message(),
            span: db.span.primary_span(),
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(captured);
    }
}

fn position(fm: &SourceFile, cm: &SourceMap, pos: BytePos) -> (u32, u32) {
    if pos < fm.start_pos || pos > fm.end_pos {
        return (0, 0);
    }
    match cm.try_lookup_char_pos(pos) {
        Ok(loc) => (
            u32::try_from(loc.line).unwrap_or(u32::MAX),
            u32::try_from(loc.col.0 + 1).unwrap_or(u32::MAX),
        ),
        Err(_) => (0, 0),
    }
}

pub(super) fn run_swc(file: &str, source: &str) -> Result<Transpiled, TranspileError> {
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(Lrc::new(FileName::Custom(file.to_owned())), source.to_owned());
    let module = parse(file, &cm, &fm)?;
    let program = transform(file, &cm, &fm, module)?;
    let (code, mappings) = emit(file, &cm, &program, source.len())?;
    let line_map = build_line_map(&code, &fm, mappings);
    Ok(Transpiled {
        code,
        line_map,
        bytecode: Default::default(),
    })
}

/// Parses `fm` as a TypeScript module; any error, recovered or not, is a syntax error.
fn parse(file: &str, cm: &SourceMap, fm: &SourceFile) -> Result<Module, TranspileError> {
    let syntax = Syntax::Typescript(TsSyntax {
        // QuickJS-ng cannot run decorators, so let the parser refuse them with a position.
        decorators: false,
        ..Default::default()
    });

    let mut recovered = Vec::new();
    let parsed = parse_file_as_module(fm, syntax, EsVersion::latest(), None, &mut recovered);
    // The parser recovers from some errors (e.g. strict-mode violations); they are still
    // errors for a module. Report the earliest.
    match parsed {
        Err(e) => Err(syntax_error(file, cm, fm, e)),
        Ok(module) => match recovered.into_iter().min_by_key(|e| e.span().lo) {
            Some(e) => Err(syntax_error(file, cm, fm, e)),
            None => Ok(module),
        },
    }
}

/// A parser error as a [`TranspileError::Syntax`] at its position.
fn syntax_error(file: &str, cm: &SourceMap, fm: &SourceFile, e: ParseError) -> TranspileError {
    let lo = e.span().lo;
    let (line, col) = position(fm, cm, lo);
    // With decorators off, swc only says "Expression expected" at the `@`: say why.
    let at_sign =
        (lo.0.checked_sub(fm.start_pos.0)).and_then(|offset| fm.src.as_bytes().get(offset as usize)) == Some(&b'@');
    let message = if at_sign {
        "decorators are not supported (QuickJS cannot run them)".to_owned()
    } else {
        e.kind().msg().into_owned()
    };
    TranspileError::Syntax {
        file: file.to_owned(),
        line,
        col,
        message,
    }
}

/// resolver → strip types → hygiene → fixer; the first error swc reports on the way fails it.
fn transform(file: &str, cm: &SourceMap, fm: &SourceFile, module: Module) -> Result<Program, TranspileError> {
    let diagnostics = Arc::new(Mutex::new(Vec::new()));
    let handler = Handler::with_emitter(false, false, Box::new(CaptureEmitter(diagnostics.clone())));
    let program = GLOBALS.set(&Globals::new(), || {
        HANDLER.set(&handler, || {
            let unresolved_mark = Mark::new();
            let top_level_mark = Mark::new();
            let config = typescript::Config {
                // ES2022 class-field semantics, as tsc emits for a modern target.
                native_class_properties: true,
                // `import x = require()` / `export =` have no ES-module meaning: report them.
                import_export_assign_config: TsImportExportAssignConfig::EsNext,
                ..Default::default()
            };
            Program::Module(module)
                .apply(resolver(unresolved_mark, top_level_mark, true))
                .apply(typescript::typescript(config, unresolved_mark, top_level_mark))
                .apply(hygiene())
                .apply(fixer(None))
        })
    });

    let captured = std::mem::take(&mut *diagnostics.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(d) = captured.into_iter().find(|d| d.is_error) {
        let (line, col) = d.span.map_or((0, 0), |s| position(fm, cm, s.lo));
        return Err(TranspileError::Unsupported {
            file: file.to_owned(),
            line,
            col,
            message: d.message,
        });
    }
    Ok(program)
}

/// Generates the JavaScript, with the codegen's (source position, output position) records.
fn emit(
    file: &str,
    cm: &Lrc<SourceMap>,
    program: &Program,
    capacity: usize,
) -> Result<(String, Vec<(BytePos, LineCol)>), TranspileError> {
    let mut code = Vec::with_capacity(capacity);
    let mut mappings = Vec::new();
    {
        let mut emitter = codegen::Emitter {
            cfg: codegen::Config::default().with_target(EsVersion::latest()),
            cm: cm.clone(),
            comments: None,
            wr: JsWriter::new(cm.clone(), "\n", &mut code, Some(&mut mappings)),
        };
        emitter.emit_program(program).map_err(|e| TranspileError::Internal {
            file: file.to_owned(),
            message: format!("code generation failed: {e}"),
        })?;
    }
    let code = String::from_utf8(code).map_err(|e| TranspileError::Internal {
        file: file.to_owned(),
        message: format!("code generation produced invalid UTF-8: {e}"),
    })?;
    Ok((code, mappings))
}

/// The codegen records (source position, output line/col) for each token it emits. An output
/// line maps to its first token, skipping leading closers (`}, async () => {` belongs to the
/// arrow, not to the object literal the `}` closes); a line made only of closers maps to them.
fn build_line_map(code: &str, fm: &SourceFile, mappings: Vec<(BytePos, LineCol)>) -> Vec<u32> {
    let lead: Vec<u32> = code
        .lines()
        .map(|l| {
            let n = l
                .chars()
                .take_while(|c| c.is_whitespace() || matches!(c, '}' | ')' | ']' | ',' | ';'))
                .count();
            u32::try_from(n).unwrap_or(u32::MAX)
        })
        .collect();
    let mut best = vec![0u32; lead.len()];
    let mut fallback = vec![0u32; lead.len()];
    for (pos, out) in mappings {
        if pos.is_dummy() || pos < fm.start_pos || pos > fm.end_pos {
            continue;
        }
        let Some(line) = usize::try_from(out.line).ok().filter(|&l| l < lead.len()) else {
            continue;
        };
        let wants_best = best[line] == 0 && out.col >= lead[line];
        // Most records land on a line already mapped: skip the line lookup for them.
        if !wants_best && fallback[line] != 0 {
            continue;
        }
        let Some(src_line) = fm.lookup_line(pos).and_then(|l| u32::try_from(l + 1).ok()) else {
            continue;
        };
        if fallback[line] == 0 {
            fallback[line] = src_line;
        }
        // `lead` counts chars and `col` UTF-16 units; they agree on the ASCII closers counted.
        if wants_best {
            best[line] = src_line;
        }
    }
    best.iter()
        .zip(fallback)
        .map(|(&b, f)| if b != 0 { b } else { f })
        .collect()
}
