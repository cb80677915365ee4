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
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use serde::{Deserialize, Serialize};

use super::{isolate, nesting};

mod disk;
mod swc;
#[cfg(test)]
mod tests;

use disk::{cache_dir_from, cache_key};

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
    /// QuickJS's bytecode for `code`, made by the first engine that compiles it and loaded by the
    /// rest (parsing is most of a small module's import). Never written to disk.
    #[serde(skip)]
    pub bytecode: Bytecode,
}

/// A compiled module and the name it was compiled under (QuickJS bytecode carries the name; the
/// same content under another name compiles again).
#[derive(Default, Clone)]
pub struct Bytecode(pub std::sync::OnceLock<(String, Vec<u8>)>);

impl PartialEq for Bytecode {
    /// A cache of what `code` compiles to: never part of what a transpile result is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Bytecode {}

impl std::fmt::Debug for Bytecode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = self.0.get().map(|(_, b)| b.len());
        f.debug_tuple("Bytecode").field(&size).finish()
    }
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
/// Shareable across threads; concurrent misses on the same content run swc once (single flight:
/// the others wait for its result).
pub struct Transpiler {
    memory: Mutex<HashMap<Key, Arc<Transpiled>>>,
    /// One gate per content being transpiled now: a thread that misses takes it, so a second
    /// thread missing the same content waits and then reads the first one's result.
    inflight: Mutex<HashMap<Key, Arc<Mutex<()>>>>,
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
            inflight: Mutex::new(HashMap::new()),
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
        let gate = {
            let mut m = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            m.entry(key).or_default().clone()
        };
        let result = {
            let _turn = gate.lock().unwrap_or_else(|e| e.into_inner());
            self.miss(key, file, source)
        };
        // The last one through removes the gate (a waiter still holds a clone of it).
        let mut m = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        if m.get(&key).is_some_and(|g| Arc::ptr_eq(g, &gate)) && Arc::strong_count(&gate) <= 2 {
            m.remove(&key);
        }
        result
    }

    /// A memory miss, with this content's gate held: another thread may have filled it meanwhile.
    fn miss(&self, key: Key, file: &str, source: &str) -> Result<Arc<Transpiled>, TranspileError> {
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

/// Runs swc on `source` with no caching at all (the benchmark measures this).
pub fn transpile_uncached(file: &str, source: &str) -> Result<Transpiled, TranspileError> {
    check_nesting(file, source)?;
    isolated(file, || swc::run_swc(file, source))
}

/// Runs `job` on a dedicated thread, which gives swc's recursion a known stack whatever the
/// caller's is, and turns a panic into an error instead of taking the caller down.
fn isolated(
    file: &str,
    job: impl FnOnce() -> Result<Transpiled, TranspileError> + Send,
) -> Result<Transpiled, TranspileError> {
    let mut job = Some(job);
    let mut run = || isolate::catch_panic(|| job.take().map(|f| f()));
    let outcome = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("swc-transpile".into())
            .stack_size(SWC_STACK_BYTES)
            .spawn_scoped(scope, &mut run);
        match worker {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| Err(isolate::panic_message(&*panic))),
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
        Err(message) => Err(TranspileError::Internal {
            file: file.to_owned(),
            message: format!("swc panicked: {message}"),
        }),
    }
}

/// Refuses sources whose syntax nests deeper than [`MAX_NESTING`] levels, brackets and
/// chaining operators both counted (see [`nesting`]), before swc can overflow its stack on
/// them. Measured in a debug build, swc needs at most ~6 KiB of stack per level of the worst
/// shape (`() => {` repeated), so the limit keeps swc under ~6 MiB of its 64 MiB stack.
fn check_nesting(file: &str, source: &str) -> Result<(), TranspileError> {
    nesting::check(source, MAX_NESTING, nesting::Counted::Operators).map_err(|(line, col)| {
        TranspileError::Unsupported {
            file: file.to_owned(),
            line,
            col,
            message: format!(
                "code nested more than {MAX_NESTING} levels deep (brackets and chained operators); \
                 split it up"
            ),
        }
    })
}
