//! TypeScript → JavaScript for scripted tools, with a content-hash cache.
//!
//! swc parses the `.ts` file as an ES module and runs resolver → strip → hygiene → fixer →
//! codegen. The output stays an ES module (QuickJS loads it with its module loader) and keeps
//! modern syntax (QuickJS-ng runs ES2023: no downleveling). A line map from the codegen's
//! source-map records lets the host point a runtime error back at the `.ts` line.
//!
//! Outputs are cached by SHA-256 of (transpiler version, swc version, source): in memory for
//! the process, and optionally on disk as `<cache_dir>/<hex>.json` so a second process
//! transpiles nothing. Only successes are cached: errors must name the file, and the file name
//! is deliberately not part of the key.

use std::{
    collections::HashMap,
    fs, io,
    panic::{AssertUnwindSafe, catch_unwind},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use swc_core::{
    common::{
        BytePos, FileName, GLOBALS, Globals, LineCol, Mark, SourceFile, SourceMap, Span, Spanned,
        errors::{DiagnosticBuilder, Emitter, HANDLER, Handler},
        sync::Lrc,
    },
    ecma::{
        ast::{EsVersion, Program},
        codegen::{self, text_writer::JsWriter},
        parser::{Syntax, TsSyntax, parse_file_as_module},
        transforms::{
            base::{fixer::fixer, hygiene::hygiene, resolver},
            typescript::{self, TsImportExportAssignConfig},
        },
    },
};

/// Part of the cache key: bump whenever the pipeline or its options change, so stale disk
/// entries written by an older build are never reused.
const TRANSPILER_VERSION: &str = "trailblaze-transpile/1";

/// Deepest bracket nesting accepted. swc's parser and visitors recurse per nesting level, and a
/// stack overflow aborts the process (it is not a panic `catch_unwind` could stop), so a
/// pathological file is refused up front. Real tools nest a few dozen levels at most.
pub const MAX_NESTING: usize = 500;

/// swc runs on its own thread with this stack, so the depth it can handle does not depend on
/// the caller's stack (test threads get 2 MiB, the main thread 8 MiB). It is only reserved
/// address space: pages are touched as the recursion goes.
const SWC_STACK_BYTES: usize = 64 * 1024 * 1024;

/// The JavaScript for one `.ts` file, and where each output line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transpiled {
    /// ES module source for QuickJS.
    pub code: String,
    /// For each 1-based output line `n`, `line_map[n - 1]` is the 1-based `.ts` line it came
    /// from (0 = unknown, e.g. a line swc synthesised).
    pub line_map: Vec<u32>,
}

impl Transpiled {
    /// Maps a 1-based line of [`Transpiled::code`] back to the 1-based `.ts` source line.
    pub fn source_line(&self, out_line: u32) -> Option<u32> {
        let index = usize::try_from(out_line.checked_sub(1)?).ok()?;
        self.line_map.get(index).copied().filter(|&l| l != 0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TranspileError {
    /// The file does not parse as a TypeScript module.
    #[error("{file}:{line}:{col}: {message}")]
    Syntax {
        file: String,
        line: u32,
        col: u32,
        message: String,
    },
    /// The file parses but uses something the runtime cannot run (decorators, `import x =
    /// require(...)`, `export =`, nesting deeper than [`MAX_NESTING`]...).
    #[error("{file}:{line}:{col}: unsupported: {message}")]
    Unsupported {
        file: String,
        line: u32,
        col: u32,
        message: String,
    },
    /// swc panicked or failed to emit code: a bug in swc or here, never the script's fault.
    #[error("{file}: internal error while transpiling: {message}")]
    Internal { file: String, message: String },
    /// Reading the `.ts` file failed (cache I/O never fails a transpile).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

type Key = [u8; 32];

/// Transpiles `.ts` files, caching results in memory and (optionally) on disk.
/// Shareable across threads; concurrent misses on the same content may both run swc.
pub struct Transpiler {
    memory: Mutex<HashMap<Key, Arc<Transpiled>>>,
    cache_dir: Option<PathBuf>,
    transpiles: AtomicU64,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
}

impl Transpiler {
    /// A transpiler with an in-memory cache, plus an on-disk one in `cache_dir` when given
    /// (created on first write).
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        Self {
            memory: Mutex::new(HashMap::new()),
            cache_dir,
            transpiles: AtomicU64::new(0),
            memory_hits: AtomicU64::new(0),
            disk_hits: AtomicU64::new(0),
        }
    }

    /// Default on-disk cache location: `$TRAILBLAZE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/trailblaze/transpile`, else `~/.cache/trailblaze/transpile`; `None`
    /// when none of these variables is set (e.g. on Android).
    pub fn default_cache_dir() -> Option<PathBuf> {
        cache_dir_from(|name| std::env::var_os(name))
    }

    /// The on-disk cache directory, if any.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// Transpiles `source`; `file` is the display name used in errors (e.g. `tools/signIn.ts`).
    pub fn transpile(&self, file: &str, source: &str) -> Result<Arc<Transpiled>, TranspileError> {
        let key = cache_key(source);
        if let Some(hit) = self.memory_get(&key) {
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit);
        }
        if let Some(hit) = self.disk_get(&key) {
            self.disk_hits.fetch_add(1, Ordering::Relaxed);
            let hit = Arc::new(hit);
            self.memory_put(key, hit.clone());
            return Ok(hit);
        }
        self.transpiles.fetch_add(1, Ordering::Relaxed);
        let out = Arc::new(transpile_uncached(file, source)?);
        self.disk_put(&key, &out);
        self.memory_put(key, out.clone());
        Ok(out)
    }

    /// Reads `path` and transpiles it; `file` is the display name used in errors.
    pub fn transpile_file(&self, file: &str, path: &Path) -> Result<Arc<Transpiled>, TranspileError> {
        let source = fs::read_to_string(path).map_err(|source| TranspileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        self.transpile(file, &source)
    }

    /// How many times swc actually ran in this process (cache misses).
    pub fn transpile_count(&self) -> u64 {
        self.transpiles.load(Ordering::Relaxed)
    }

    /// Calls answered from the in-memory cache.
    pub fn memory_hits(&self) -> u64 {
        self.memory_hits.load(Ordering::Relaxed)
    }

    /// Calls answered from the on-disk cache.
    pub fn disk_hits(&self) -> u64 {
        self.disk_hits.load(Ordering::Relaxed)
    }

    /// Maps a 1-based output line back to the 1-based `.ts` line.
    pub fn source_line(t: &Transpiled, out_line: u32) -> Option<u32> {
        t.source_line(out_line)
    }

    fn memory_get(&self, key: &Key) -> Option<Arc<Transpiled>> {
        // A poisoned lock only means another thread panicked mid-insert; the map is still valid.
        let map = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key).cloned()
    }

    fn memory_put(&self, key: Key, value: Arc<Transpiled>) {
        let mut map = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(key, value);
    }

    fn disk_path(&self, key: &Key) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(dir.join(format!("{}.json", hex(key))))
    }

    fn disk_get(&self, key: &Key) -> Option<Transpiled> {
        let path = self.disk_path(key)?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "transpile cache unreadable; ignoring");
                return None;
            }
        };
        match serde_json::from_slice::<Transpiled>(&bytes) {
            Ok(t) if t.line_map.len() == count_lines(&t.code) => Some(t),
            Ok(_) => {
                tracing::debug!(path = %path.display(), "transpile cache entry inconsistent; ignoring");
                None
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "transpile cache entry corrupt; ignoring");
                None
            }
        }
    }

    fn disk_put(&self, key: &Key, value: &Transpiled) {
        let Some(path) = self.disk_path(key) else {
            return;
        };
        // The cache is an optimisation: failing to write it must not fail the transpile.
        if let Err(e) = write_atomically(&path, value) {
            tracing::debug!(path = %path.display(), error = %e, "could not write transpile cache");
        }
    }
}

impl Default for Transpiler {
    fn default() -> Self {
        Self::new(Self::default_cache_dir())
    }
}

impl std::fmt::Debug for Transpiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transpiler")
            .field("cache_dir", &self.cache_dir)
            .field("transpiles", &self.transpile_count())
            .field("memory_hits", &self.memory_hits())
            .field("disk_hits", &self.disk_hits())
            .finish_non_exhaustive()
    }
}

fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let non_empty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("TRAILBLAZE_CACHE_DIR") {
        return Some(dir);
    }
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("trailblaze").join("transpile"));
    }
    non_empty("HOME").map(|home| home.join(".cache").join("trailblaze").join("transpile"))
}

fn cache_key(source: &str) -> Key {
    let mut h = Sha256::new();
    // Length-prefix each part so no two different triples hash the same bytes.
    for part in [TRANSPILER_VERSION, swc_core::SWC_CORE_VERSION, source] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Temp file + rename in the same directory: a concurrent reader sees the old file, no file,
/// or the whole new one, never half of it.
fn write_atomically(path: &Path, value: &Transpiled) -> io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("cache path has no parent"))?;
    fs::create_dir_all(dir)?;
    let json = serde_json::to_vec(value).map_err(io::Error::other)?;
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let tmp = dir.join(format!(
        ".{file_name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        use std::io::Write;
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&json)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Number of lines as an editor (and QuickJS's line numbers) counts them; a trailing newline
/// does not open a new line.
fn count_lines(code: &str) -> usize {
    code.lines().count()
}

/// Runs swc on `source` with no caching at all (the benchmark measures this).
pub fn transpile_uncached(file: &str, source: &str) -> Result<Transpiled, TranspileError> {
    check_nesting(file, source)?;
    // A dedicated thread gives swc's recursion a known stack whatever the caller's is, and
    // `catch_unwind` turns a panic inside swc into an error instead of taking the caller down.
    let joined = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("swc-transpile".into())
            .stack_size(SWC_STACK_BYTES)
            .spawn_scoped(scope, || catch_unwind(AssertUnwindSafe(|| run_swc(file, source))));
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(Err),
            // Could not spawn (thread limit): fall back to the caller's thread.
            Err(_) => catch_unwind(AssertUnwindSafe(|| run_swc(file, source))),
        }
    });
    joined.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic with a non-string payload".to_owned());
        Err(TranspileError::Internal {
            file: file.to_owned(),
            message: format!("swc panicked: {message}"),
        })
    })
}

/// Refuses sources nested deeper than [`MAX_NESTING`] brackets, before swc can overflow its
/// stack on them. Counts brackets outside strings, template literals and comments, roughly:
/// it only needs to be right for files deep enough to matter.
fn check_nesting(file: &str, source: &str) -> Result<(), TranspileError> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut line = 1u32;
    let mut line_start = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
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
            b'"' | b'\'' => {
                // Skip a string literal; it cannot span lines unescaped.
                i += 1;
                while i < bytes.len() && bytes[i] != b && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let col = source.get(line_start..i).map_or(0, |s| s.chars().count()) + 1;
                    return Err(TranspileError::Unsupported {
                        file: file.to_owned(),
                        line,
                        col: u32::try_from(col).unwrap_or(u32::MAX),
                        message: format!("brackets nested deeper than {MAX_NESTING} levels"),
                    });
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

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

fn run_swc(file: &str, source: &str) -> Result<Transpiled, TranspileError> {
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(Lrc::new(FileName::Custom(file.to_owned())), source.to_owned());
    let syntax = Syntax::Typescript(TsSyntax {
        // QuickJS-ng cannot run decorators, so let the parser refuse them with a position.
        decorators: false,
        ..Default::default()
    });

    let mut recovered = Vec::new();
    let parsed = parse_file_as_module(&fm, syntax, EsVersion::latest(), None, &mut recovered);
    let syntax_error = |e: swc_core::ecma::parser::error::Error| {
        let lo = e.span().lo;
        let (line, col) = position(&fm, &cm, lo);
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
    };
    // The parser recovers from some errors (e.g. strict-mode violations); they are still
    // errors for a module. Report the earliest.
    let module = match parsed {
        Err(e) => return Err(syntax_error(e)),
        Ok(module) => match recovered.into_iter().min_by_key(|e| e.span().lo) {
            Some(e) => return Err(syntax_error(e)),
            None => module,
        },
    };

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
        let (line, col) = d.span.map_or((0, 0), |s| position(&fm, &cm, s.lo));
        return Err(TranspileError::Unsupported {
            file: file.to_owned(),
            line,
            col,
            message: d.message,
        });
    }

    let mut code = Vec::with_capacity(source.len());
    let mut mappings = Vec::new();
    {
        let mut emitter = codegen::Emitter {
            cfg: codegen::Config::default().with_target(EsVersion::latest()),
            cm: cm.clone(),
            comments: None,
            wr: JsWriter::new(cm.clone(), "\n", &mut code, Some(&mut mappings)),
        };
        emitter.emit_program(&program).map_err(|e| TranspileError::Internal {
            file: file.to_owned(),
            message: format!("code generation failed: {e}"),
        })?;
    }
    let code = String::from_utf8(code).map_err(|e| TranspileError::Internal {
        file: file.to_owned(),
        message: format!("code generation produced invalid UTF-8: {e}"),
    })?;

    let line_map = build_line_map(&code, &fm, mappings);
    Ok(Transpiled { code, line_map })
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
        let Some(src_line) = fm.lookup_line(pos).and_then(|l| u32::try_from(l + 1).ok()) else {
            continue;
        };
        if fallback[line] == 0 {
            fallback[line] = src_line;
        }
        // `lead` counts chars and `col` UTF-16 units; they agree on the ASCII closers counted.
        if best[line] == 0 && out.col >= lead[line] {
            best[line] = src_line;
        }
    }
    best.iter()
        .zip(fallback)
        .map(|(&b, f)| if b != 0 { b } else { f })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(source: &str) -> Transpiled {
        match transpile_uncached("tools/test.ts", source) {
            Ok(t) => t,
            Err(e) => panic!("transpile failed: {e}"),
        }
    }

    fn err(source: &str) -> TranspileError {
        match transpile_uncached("tools/bad.ts", source) {
            Ok(t) => panic!("expected an error, got:\n{}", t.code),
            Err(e) => e,
        }
    }

    /// The 1-based output line holding `needle`.
    fn out_line_of(t: &Transpiled, needle: &str) -> u32 {
        let index = t
            .code
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in output:\n{}", t.code));
        u32::try_from(index + 1).unwrap_or(u32::MAX)
    }

    const TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
import type { ToolContext } from "@trailblaze/scripting";
import { type Selector, helper } from "./helpers";

/** Input of the tool. */
interface SignInInput {
  email: string;
  password?: string;
}
type Pair<T> = [T, T];

function first<T>(xs: readonly T[]): T | undefined {
  return xs[0];
}

enum Mode { Fast = 1, Slow }

class Counter<T> {
  private count: number = 0;
  constructor(public readonly label: string) {}
  bump(by: number = 1): number { return this.count += by; }
}

export const signIn = trailblaze.tool<SignInInput, { ok: boolean }>(
  { description: "Sign in" },
  async (input: SignInInput, ctx: ToolContext) => {
    const sel = { textRegex: input.email } as Selector;
    const cfg = { retries: 2 } satisfies Record<string, number>;
    const el = ctx.find(sel)!;
    const pair: Pair<number> = [1, 2];
    await ctx.tools.tap({ ref: el?.ref ?? first<string>(["x"]) });
    helper(cfg, pair, Mode.Slow, new Counter<string>("c").bump());
    return { ok: true };
  },
);
"#;

    #[test]
    fn strips_types_and_keeps_the_module() {
        let t = ok(TOOL);
        let code = &t.code;
        for gone in [
            "interface",
            "SignInInput",
            "type Pair",
            "ToolContext",
            "Selector",
            " as ",
            "satisfies",
            "<T>",
            "<string>",
            ": number",
            "private ",
            "readonly",
            ")!",
        ] {
            assert!(!code.contains(gone), "{gone:?} survived:\n{code}");
        }
        for kept in [
            r#"import { trailblaze } from "@trailblaze/scripting";"#,
            r#"import { helper } from "./helpers";"#,
            "export const signIn = trailblaze.tool(",
            "async (input, ctx)=>",
            "await ctx.tools.tap(",
            "el?.ref ?? first([",
            "class Counter {",
            "count = 0;",
            "this.label = label;",
            "Mode[Mode[\"Fast\"] = 1]",
        ] {
            assert!(code.contains(kept), "{kept:?} missing:\n{code}");
        }
        // The type-only import disappears entirely rather than becoming a side-effect import.
        assert_eq!(code.matches("@trailblaze/scripting").count(), 1, "{code}");
        assert_eq!(t.line_map.len(), code.lines().count());
    }

    #[test]
    fn output_is_javascript_that_reparses_as_a_module() {
        let t = ok(TOOL);
        let cm: Lrc<SourceMap> = Default::default();
        let fm = cm.new_source_file(Lrc::new(FileName::Anon), t.code.clone());
        let mut recovered = Vec::new();
        let parsed = parse_file_as_module(
            &fm,
            Syntax::Es(Default::default()),
            EsVersion::latest(),
            None,
            &mut recovered,
        );
        assert!(parsed.is_ok() && recovered.is_empty(), "not valid JS:\n{}", t.code);
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let e = err("const a = 1;\n\nfunction f(x: number {\n  return x;\n}\n");
        let TranspileError::Syntax { file, line, col, .. } = &e else {
            panic!("expected a syntax error, got {e:?}");
        };
        assert_eq!((file.as_str(), *line, *col), ("tools/bad.ts", 3, 22), "{e}");
        assert!(e.to_string().starts_with("tools/bad.ts:3:22: "), "{e}");
    }

    #[test]
    fn a_syntax_error_after_multibyte_text_counts_characters() {
        // `;` is the 26th character but the 27th byte.
        let e = err("const s = \"héllo\"; let = ;\n");
        assert!(e.to_string().starts_with("tools/bad.ts:1:26: "), "{e}");
    }

    #[test]
    fn unsupported_syntax_is_an_error_not_a_panic() {
        let e = err("function dec(x: any) { return x; }\n@dec\nexport class A {}\n");
        assert_eq!(
            e.to_string(),
            "tools/bad.ts:2:1: decorators are not supported (QuickJS cannot run them)"
        );

        let e = err("import fs = require(\"fs\");\nexport const x = fs;\n");
        let TranspileError::Unsupported { line, .. } = &e else {
            panic!("expected unsupported, got {e:?}");
        };
        assert_eq!(*line, 1, "{e}");
        assert!(e.to_string().contains("Import assignment"), "{e}");

        let e = err("const x = 1;\nexport = x;\n");
        assert!(matches!(e, TranspileError::Unsupported { line: 2, .. }), "{e}");
    }

    #[test]
    fn namespaces_and_enums_become_javascript() {
        let t = ok("export namespace Keys {\n  export const enter = 66;\n}\n\
                    export const enum Dir { Up = \"up\", Down = \"down\" }\n\
                    export const d = Dir.Up;\n");
        assert!(t.code.contains("(function(Keys)"), "{}", t.code);
        assert!(t.code.contains("\"up\""), "{}", t.code);
    }

    #[test]
    fn absurd_nesting_is_refused_before_swc_recurses() {
        let deep = format!("export const x = {}1{};\n", "(".repeat(20_000), ")".repeat(20_000));
        let e = err(&deep);
        assert!(matches!(e, TranspileError::Unsupported { line: 1, .. }), "{e}");
        // Brackets inside strings and comments do not count.
        let strings = format!("// {}\nexport const s = \"{}\";\n", "(".repeat(2000), "[".repeat(2000));
        ok(&strings);
    }

    #[test]
    fn deep_but_allowed_nesting_does_not_overflow() {
        // Other recursion shapes (unary chains) are bounded only by the worker's stack.
        let n = MAX_NESTING;
        let src = format!(
            "export const x = {}1{};\nexport const y = {}true;\n",
            "[".repeat(n),
            "]".repeat(n),
            "!".repeat(5000)
        );
        ok(&src);
    }

    #[test]
    fn line_map_survives_removed_multiline_types() {
        let src = "interface A {\n  a: string;\n  b: number;\n}\n\
                   type B =\n  | { kind: \"x\" }\n  | { kind: \"y\" };\n\
                   export function f(\n  a: A,\n  b: B,\n): void {\n  console.log(a, b);\n}\n\
                   export const marker = 42;\n";
        let t = ok(src);
        assert_eq!(t.source_line(out_line_of(&t, "console.log")), Some(12), "{t:?}");
        assert_eq!(t.source_line(out_line_of(&t, "marker = 42")), Some(14), "{t:?}");
        assert_eq!(t.source_line(out_line_of(&t, "export function f")), Some(8), "{t:?}");
        assert_eq!(Transpiler::source_line(&t, 0), None);

        // `}, async (input, ctx)=>{` belongs to the arrow's line, not the `}` before it.
        let t = ok(TOOL);
        let arrow = TOOL.lines().position(|l| l.contains("async (input")).map(|i| i + 1);
        let arrow = arrow.and_then(|l| u32::try_from(l).ok());
        assert_eq!(t.source_line(out_line_of(&t, "async (input, ctx)")), arrow);
        // A line of closers only (`});`) still maps to where they closed.
        let end = out_line_of(&t, "return {") + 3;
        assert!(matches!(t.source_line(end), Some(34 | 35)), "{t:?}");
        assert_eq!(Transpiler::source_line(&t, 10_000), None);
    }

    #[test]
    fn second_call_is_a_memory_hit() {
        let tp = Transpiler::new(None);
        let a = tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((tp.transpile_count(), tp.memory_hits()), (1, 0));
        // Same content under another name: still a hit (the name is not in the key).
        let b = tp.transpile("tools/b.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((tp.transpile_count(), tp.memory_hits()), (1, 1));
        assert!(Arc::ptr_eq(&a, &b));
        tp.transpile("tools/c.ts", "export const c = 1;\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tp.transpile_count(), 2);
    }

    #[test]
    fn errors_are_not_cached_and_name_each_file() {
        let tp = Transpiler::new(None);
        let bad = "let = ;\n";
        let e1 = tp.transpile("tools/one.ts", bad).err().map(|e| e.to_string());
        let e2 = tp.transpile("tools/two.ts", bad).err().map(|e| e.to_string());
        assert!(e1.is_some_and(|e| e.starts_with("tools/one.ts:1:")));
        assert!(e2.is_some_and(|e| e.starts_with("tools/two.ts:1:")));
        assert_eq!(tp.transpile_count(), 2);
    }

    #[test]
    fn a_second_process_hits_the_disk_cache() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let first = Transpiler::new(Some(dir.path().to_path_buf()));
        let a = first.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.transpile_count(), 1);

        let second = Transpiler::new(Some(dir.path().to_path_buf()));
        let b = second.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((second.transpile_count(), second.disk_hits()), (0, 1));
        assert_eq!(*a, *b);
        // Then memory serves it.
        second.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((second.disk_hits(), second.memory_hits()), (1, 1));
        // Only the entry is left behind, no temp files.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_corrupt_cache_file_is_ignored_and_rewritten() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let entry = dir.path().join(format!("{}.json", hex(&cache_key(TOOL))));
        for garbage in [&b"{\"code\": \"trunc"[..], b"{\"code\":\"x\",\"line_map\":[]}"] {
            fs::write(&entry, garbage).unwrap_or_else(|e| panic!("{e}"));
            let tp = Transpiler::new(Some(dir.path().to_path_buf()));
            let t = tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((tp.transpile_count(), tp.disk_hits()), (1, 0));
            let on_disk: Transpiled = serde_json::from_slice(&fs::read(&entry).unwrap_or_else(|e| panic!("{e}")))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(on_disk, *t);
        }
    }

    #[test]
    fn an_unwritable_cache_dir_does_not_fail_the_transpile() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("not-a-dir");
        fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
        let tp = Transpiler::new(Some(file.join("cache")));
        tp.transpile("tools/a.ts", "export const a = 1;\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tp.transpile_count(), 1);
    }

    #[test]
    fn default_cache_dir_follows_the_environment() {
        use std::ffi::OsString;
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        assert_eq!(
            cache_dir_from(env(&[("TRAILBLAZE_CACHE_DIR", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/trailblaze/transpile"))
        );
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/trailblaze/transpile"))
        );
        assert_eq!(cache_dir_from(env(&[("TRAILBLAZE_CACHE_DIR", "")])), None);
    }

    #[test]
    fn the_key_depends_on_content_only() {
        assert_eq!(cache_key("a"), cache_key("a"));
        assert_ne!(cache_key("a"), cache_key("b"));
    }
}
