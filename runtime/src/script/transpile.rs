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

/// Deepest nesting accepted, as estimated by `check_nesting`. swc's parser and visitors
/// recurse per level, and a stack overflow aborts the process (it is not a panic
/// `catch_unwind` could stop), so a pathological file is refused up front. Real tools reach a
/// few dozen levels.
pub const MAX_NESTING: usize = 1000;

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
    isolated(file, || run_swc(file, source))
}

/// Runs `job` on a dedicated thread, which gives swc's recursion a known stack whatever the
/// caller's is, and turns a panic into an error instead of taking the caller down.
fn isolated(
    file: &str,
    job: impl FnOnce() -> Result<Transpiled, TranspileError> + Send,
) -> Result<Transpiled, TranspileError> {
    let mut job = Some(job);
    let mut run = || catch_unwind(AssertUnwindSafe(|| job.take().map(|f| f())));
    let outcome = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("swc-transpile".into())
            .stack_size(SWC_STACK_BYTES)
            .spawn_scoped(scope, &mut run);
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(Err),
            // No thread to be had (a thread limit): run on the caller's, as a last resort.
            Err(_) => Ok(None),
        }
    });
    let outcome = match outcome {
        Ok(None) => run(),
        other => other,
    };
    match outcome {
        Ok(Some(result)) => result,
        Ok(None) => Err(TranspileError::Internal {
            file: file.to_owned(),
            message: "the transpile job did not run".to_owned(),
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".to_owned());
            Err(TranspileError::Internal {
                file: file.to_owned(),
                message: format!("swc panicked: {message}"),
            })
        }
    }
}

/// Refuses sources whose syntax nests deeper than [`MAX_NESTING`] levels, before swc can
/// overflow its stack on them.
///
/// The estimate over-approximates the AST depth from tokens: every open bracket and every
/// token that nests what follows without a bracket (`!`, unary `-`, `?`, `:`, `=`, `=>`, `<`,
/// `new`, `await`, `else`, ...) adds a level; a closing bracket restores the level from before
/// its opener; a statement or list boundary (`;`, `,`, a newline where ASI would end the
/// statement) restores the level of the enclosing bracket, except before `else`, which keeps an
/// `if`/`else if` chain counted. Strings, comments, regexes and template text are skipped.
/// Measured in a debug build, swc needs at most ~6 KiB of stack per level of the worst shape
/// (`() => {` repeated), so the limit keeps swc under ~6 MiB of its 64 MiB stack.
fn check_nesting(file: &str, source: &str) -> Result<(), TranspileError> {
    NestingScan {
        src: source,
        b: source.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
    }
    .run()
    .map_err(|(line, col)| TranspileError::Unsupported {
        file: file.to_owned(),
        line,
        col,
        message: format!(
            "code nested more than {MAX_NESTING} levels deep (brackets and chained operators); \
             split it up"
        ),
    })
}

/// An open bracket on the nesting scanner's stack, with the level just inside it.
#[derive(Clone, Copy)]
enum Open {
    Bracket(usize),
    /// `${` inside a template literal: its `}` resumes the template text.
    TemplateExpr(usize),
}

impl Open {
    fn level(self) -> usize {
        match self {
            Open::Bracket(l) | Open::TemplateExpr(l) => l,
        }
    }
}

struct NestingScan<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
}

impl NestingScan<'_> {
    /// `Err((line, col))` of the token that went past the limit.
    fn run(&mut self) -> Result<(), (u32, u32)> {
        let mut stack: Vec<Open> = Vec::new();
        let mut level = 0usize;
        // Whether the previous token ends a value: decides unary vs binary `+`/`-`, regex vs
        // division, and whether a newline can end the statement.
        let mut prev_value = false;
        loop {
            let newline = self.skip_trivia();
            let Some(&c) = self.b.get(self.i) else {
                return Ok(());
            };
            let base = stack.last().map_or(0, |o| o.level());
            let starts_statement = is_word_byte(c) || matches!(c, b'"' | b'\'' | b'`' | b'}');
            if newline && prev_value && starts_statement && !self.next_word_continues() {
                level = base;
            }
            let mut nests = false;
            match c {
                b'"' | b'\'' => {
                    self.skip_string(c);
                    prev_value = true;
                    continue;
                }
                b'`' => {
                    self.i += 1;
                    if self.skip_template_text() {
                        level += 1;
                        stack.push(Open::TemplateExpr(level));
                        self.check(level)?;
                        prev_value = false;
                    } else {
                        prev_value = true;
                    }
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    level += 1;
                    self.check(level)?;
                    stack.push(Open::Bracket(level));
                    self.i += 1;
                    prev_value = false;
                    continue;
                }
                b')' | b']' | b'}' => {
                    self.i += 1;
                    prev_value = true;
                    match stack.pop() {
                        Some(Open::Bracket(l)) => level = l - 1,
                        Some(Open::TemplateExpr(l)) => {
                            level = l - 1;
                            if self.skip_template_text() {
                                level += 1;
                                stack.push(Open::TemplateExpr(level));
                                prev_value = false;
                            }
                        }
                        None => level = 0,
                    }
                    continue;
                }
                b';' | b',' => {
                    self.i += 1;
                    if !self.next_word_continues() {
                        level = base;
                    }
                    prev_value = false;
                    continue;
                }
                b'/' if !prev_value => {
                    self.skip_regex();
                    prev_value = true;
                    continue;
                }
                c if is_word_byte(c) => {
                    let word = self.word();
                    nests = NESTING_WORDS.contains(&word);
                    prev_value = !nests && !EXPRESSION_WORDS.contains(&word);
                }
                b'=' => match self.b.get(self.i + 1) {
                    Some(b'>') => {
                        self.i += 2;
                        nests = true;
                        prev_value = false;
                    }
                    Some(b'=') => {
                        self.i += 2;
                        prev_value = false;
                    }
                    _ => {
                        self.i += 1;
                        nests = true;
                        prev_value = false;
                    }
                },
                b'+' | b'-' => {
                    if self.b.get(self.i + 1) == Some(&c) {
                        // `++`/`--`: postfix keeps a value, prefix nests.
                        self.i += 2;
                        nests = !prev_value;
                    } else {
                        self.i += 1;
                        nests = !prev_value;
                        prev_value = false;
                    }
                }
                b'!' | b'~' | b'?' | b':' | b'<' => {
                    self.i += 1;
                    nests = true;
                    prev_value = false;
                }
                _ => {
                    self.i += 1;
                    prev_value = false;
                }
            }
            if nests {
                level += 1;
                self.check(level)?;
            }
        }
    }

    fn check(&self, level: usize) -> Result<(), (u32, u32)> {
        if level <= MAX_NESTING {
            return Ok(());
        }
        let col = self.src.get(self.line_start..self.i).map_or(0, |s| s.chars().count()) + 1;
        Err((self.line, u32::try_from(col).unwrap_or(u32::MAX)))
    }

    fn newline_at(&mut self, i: usize) {
        self.line += 1;
        self.line_start = i + 1;
    }

    /// Skips whitespace and comments; says whether a newline was crossed.
    fn skip_trivia(&mut self) -> bool {
        let mut newline = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\n' => {
                    newline = true;
                    self.newline_at(self.i);
                    self.i += 1;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.b.get(self.i).is_some_and(|&c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    while let Some(&c) = self.b.get(self.i) {
                        if c == b'*' && self.b.get(self.i + 1) == Some(&b'/') {
                            self.i += 2;
                            break;
                        }
                        if c == b'\n' {
                            newline = true;
                            self.newline_at(self.i);
                        }
                        self.i += 1;
                    }
                    if self.i > self.b.len() {
                        self.i = self.b.len();
                    }
                }
                _ => break,
            }
        }
        newline
    }

    /// Whether the next token is a word that continues the statement before it, so a boundary
    /// here does not end the nesting (`x; else if ...`).
    fn next_word_continues(&self) -> bool {
        let mut probe = NestingScan {
            src: self.src,
            b: self.b,
            i: self.i,
            line: self.line,
            line_start: self.line_start,
        };
        probe.skip_trivia();
        probe.b.get(probe.i).is_some_and(|&c| is_word_byte(c)) && CONTINUING_WORDS.contains(&probe.word())
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        while self.b.get(self.i).is_some_and(|&c| is_word_byte(c)) {
            self.i += 1;
        }
        self.src.get(start..self.i).unwrap_or("")
    }

    /// A quoted string; an unescaped newline ends it (that is a syntax error swc reports).
    fn skip_string(&mut self, quote: u8) {
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => {
                    if self.b.get(self.i + 1) == Some(&b'\n') {
                        self.newline_at(self.i + 1);
                    }
                    self.i += 2;
                }
                b'\n' => return,
                c => {
                    self.i += 1;
                    if c == quote {
                        return;
                    }
                }
            }
        }
    }

    /// Template text up to the closing backtick (false) or a `${` (true).
    fn skip_template_text(&mut self) -> bool {
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'`' => {
                    self.i += 1;
                    return false;
                }
                b'$' if self.b.get(self.i + 1) == Some(&b'{') => {
                    self.i += 2;
                    return true;
                }
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        false
    }

    /// A regex literal: up to the next `/` outside a character class, on the same line.
    fn skip_regex(&mut self) {
        self.i += 1;
        let mut in_class = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'\n' => return,
                b'[' => {
                    in_class = true;
                    self.i += 1;
                }
                b']' => {
                    in_class = false;
                    self.i += 1;
                }
                b'/' if !in_class => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'\\' | b'#') || c >= 0x80
}

/// Words that nest the expression or statement after them without a bracket.
const NESTING_WORDS: &[&str] = &[
    "new", "typeof", "void", "delete", "await", "yield", "else", "if", "while", "for", "do", "with", "extends",
    "keyof", "infer", "throw", "return", "case",
];
/// Words after which an expression starts (so `/` begins a regex and `-` is unary).
const EXPRESSION_WORDS: &[&str] = &["in", "of", "instanceof", "as", "satisfies", "is"];
/// Words that continue the previous statement across a boundary.
const CONTINUING_WORDS: &[&str] = &[
    "else",
    "instanceof",
    "in",
    "as",
    "satisfies",
    "extends",
    "implements",
    "of",
];

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
        // Each of these overflowed a 64 MiB stack in swc (or would, at a larger count).
        let n = 50_000;
        let shapes = [
            format!("export const x = {}1{};\n", "(".repeat(n), ")".repeat(n)),
            format!("export const x = {}true;\n", "!".repeat(n)),
            format!("export const x = {}1;\n", "- ".repeat(n)),
            format!("export const x = {}c;\n", "a ? b : ".repeat(n)),
            format!("export const x = {}c;\n", "a =>\n".repeat(n)),
            format!("export const x = {}X;\n", "new ".repeat(n)),
            format!("let a;\nexport const x = {}1;\n", "a = ".repeat(n)),
            format!("export const x = {}{};\n", "() => {".repeat(n), "}".repeat(n)),
            format!("export const x = {}1{};\n", "`${".repeat(n), "}`".repeat(n)),
            format!("export const x: {}number{} = [];\n", "Array<".repeat(n), ">".repeat(n)),
            format!(
                "export function f(a) {{\n  if (a) return 0;\n{}}}\n",
                "  else if (a) return 1; /* */\n".repeat(n)
            ),
            format!(
                "export function f(a) {{\n  if (a) return 0\n{}}}\n",
                "  else if (a) return 1\n".repeat(n)
            ),
        ];
        for src in &shapes {
            let e = err(src);
            assert!(
                matches!(e, TranspileError::Unsupported { .. })
                    && e.to_string().contains("nested more than 1000 levels"),
                "{e} for {}",
                &src[..60]
            );
        }
        let e = err(&shapes[0]);
        // `export const x = ` is 17 characters and its `=` one level: the bracket that goes
        // past the limit is the 1000th.
        let col = 17 + u32::try_from(MAX_NESTING).unwrap_or(0);
        assert!(
            matches!(e, TranspileError::Unsupported { line: 1, col: c, .. } if c == col),
            "{e}"
        );
    }

    #[test]
    fn long_but_shallow_code_is_not_refused() {
        let n = 3 * MAX_NESTING;
        // Brackets and operators inside strings, comments, regexes and template text.
        ok(&format!(
            "// {}\n/* {} */\nexport const s = \"{}\";\nexport const t = '{}';\n\
             export const r = /[(]{}/;\nexport const u = `{}`;\n",
            "(".repeat(n),
            "!".repeat(n),
            "[".repeat(n),
            "?".repeat(n),
            "\\(".repeat(n),
            "{".repeat(n),
        ));
        // Many statements, with and without semicolons; long lists; a long flat chain.
        let mut src = String::new();
        for i in 0..n {
            src.push_str(&format!("export const a{i}: number = -{i} + (x ? 1 : 2)\n"));
            src.push_str(&format!("let b{i} = !a{i};\n"));
        }
        src.push_str(&format!("const list = [{}];\n", "!1, ".repeat(n)));
        src.push_str(&format!("const sum = {}1;\n", "1 + ".repeat(n)));
        src.push_str("declare const x: boolean;\n");
        ok(&src);
    }

    #[test]
    fn nesting_just_under_the_limit_does_not_overflow() {
        // The most stack-hungry shape measured, at the deepest the check lets through, on a
        // 2 MiB test thread: swc's own thread must be what carries it.
        let n = MAX_NESTING / 2 - 10;
        ok(&format!("export const x = {}{};\n", "() => {".repeat(n), "}".repeat(n)));
        ok(&format!(
            "export const x = {}1{};\n",
            "(".repeat(MAX_NESTING - 5),
            ")".repeat(MAX_NESTING - 5)
        ));
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
    fn a_panic_becomes_an_error() {
        let e = isolated("tools/p.ts", || panic!("boom {}", 42));
        assert_eq!(
            e.err().map(|e| e.to_string()),
            Some("tools/p.ts: internal error while transpiling: swc panicked: boom 42".to_owned())
        );
    }

    #[test]
    fn empty_and_crlf_sources() {
        assert_eq!(ok("").code, "");
        assert_eq!(ok("\u{feff}// only a comment\n").code, "");
        let t = ok("type A = {\r\n  a: 1;\r\n};\r\nexport const b = 2;\r\n");
        assert_eq!(t.source_line(out_line_of(&t, "b = 2")), Some(4), "{t:?}");
    }

    #[test]
    fn concurrent_writers_leave_a_whole_entry() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let tp = Transpiler::new(Some(dir.path().to_path_buf()));
                    tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
                });
            }
        });
        let tp = Transpiler::new(Some(dir.path().to_path_buf()));
        tp.transpile("tools/a.ts", TOOL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((tp.transpile_count(), tp.disk_hits()), (0, 1));
        let entries = fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0);
        assert_eq!(entries, 1);
    }

    #[test]
    fn the_key_depends_on_content_only() {
        assert_eq!(cache_key("a"), cache_key("a"));
        assert_ne!(cache_key("a"), cache_key("b"));
    }
}
