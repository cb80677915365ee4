//! The native type gate over many trails. Each file is read, parsed, resolved to its target, checked
//! and dropped by one worker: nothing of a trail outlives its worker, so its memory is freed on the
//! thread that allocated it (a single thread dropping every trail at the end cost a quarter of a
//! check, most of it in glibc's cross-thread free). Results are merged in file order, so a report is
//! the same whatever the number of threads, and whether it came from the cache ([`super::cache`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use super::cache::{Cache, Hashes};
use super::{CheckReport, Finding, TOOLS_NOT_TYPE_CHECKED, check_trail, exempt, gate, sort, target_of};
use crate::project::Project;
use crate::surface::catalog::{Surface, selectors};
use crate::trail::{parse_trail_owned, read_trail};
use crate::yaml::{Pos, YamlError};

/// How to run the native gate.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Reuse and record results in the project's cache folder (`<cache_dir>/check/`), when it has
    /// one. A result is reused only for the same file, the same content and the same types of the
    /// tools it calls; the cache never changes what a check reports.
    pub cache: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions { cache: true }
    }
}

/// The native type gate over `files`, with the cache ([`CheckOptions::default`]).
pub fn check_native(project: &Project, files: &[std::path::PathBuf]) -> CheckReport {
    check_native_with(project, files, &CheckOptions::default())
}

/// The native type gate over `files`.
pub fn check_native_with(project: &Project, files: &[std::path::PathBuf], opts: &CheckOptions) -> CheckReport {
    let targets = Targets::new(project);
    let cache = if opts.cache { Cache::open(project) } else { None };
    let outcomes = in_parallel(files.len(), |i| check_file(&targets, cache.as_ref(), &files[i]));
    let mut report = CheckReport::default();
    let mut fresh = Vec::new();
    for (file, outcome) in files.iter().zip(outcomes) {
        report.trails += 1;
        let Some(o) = outcome else {
            report.stats.checked += 1;
            report.findings.push(Finding::at(&failed(file)));
            continue;
        };
        if o.cached {
            report.stats.cached += 1;
        } else {
            report.stats.checked += 1;
        }
        fresh.extend(o.entry);
        report.calls += o.result.calls;
        report.findings.extend(o.result.findings);
        report.notices.extend(o.result.notices);
    }
    if let Some(cache) = cache {
        cache.store(fresh);
    }
    sort(&mut report.findings);
    report.notices.push(TOOLS_NOT_TYPE_CHECKED.to_string());
    report
}

/// What the native gate says about one trail file: what it adds to the report.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct TrailResult {
    pub calls: usize,
    pub findings: Vec<Finding>,
    pub notices: Vec<String>,
}

/// What a trail's result depends on besides its file's path and content: the target whose surface
/// checked it and the tools it calls there. `None` target: the result depends on nothing else (a
/// parse error, or no target to check against).
#[derive(Default)]
pub(super) struct Uses {
    pub target: Option<Arc<TargetEnv>>,
    /// The distinct tools it calls, sorted.
    pub tools: Vec<String>,
    /// It calls a tool its target does not have: the finding suggests the nearest recordable names.
    pub unknown: bool,
}

struct Outcome {
    result: TrailResult,
    cached: bool,
    /// The cache line to write for a result checked now.
    entry: Option<(String, String)>,
}

fn check_file(targets: &Targets<'_>, cache: Option<&Cache>, file: &Path) -> Outcome {
    let fresh = |result| Outcome {
        result,
        cached: false,
        entry: None,
    };
    // A file that cannot be read is reported, never cached: there is no content to key it by.
    let text = match read_trail(file) {
        Ok(text) => text,
        Err(e) => {
            return fresh(TrailResult {
                findings: vec![Finding::at(&e)],
                ..TrailResult::default()
            });
        }
    };
    let Some(cache) = cache else {
        return fresh(check_text(targets, file, text).0);
    };
    let key = cache.key(file, &text);
    if let Some(result) = cache.get(&key, targets) {
        return Outcome {
            result,
            cached: true,
            entry: None,
        };
    }
    let (result, uses) = check_text(targets, file, text);
    let entry = cache.entry(&key, &uses, &result);
    Outcome {
        result,
        cached: false,
        entry,
    }
}

/// The parse gate, the target and the type gate over one trail's text.
fn check_text(targets: &Targets<'_>, file: &Path, text: String) -> (TrailResult, Uses) {
    let mut r = TrailResult::default();
    let mut uses = Uses::default();
    let trail = match parse_trail_owned(text, file) {
        Ok(trail) => trail,
        Err(errors) => {
            r.findings = errors.iter().map(Finding::at).collect();
            return (r, uses);
        }
    };
    let project = targets.project;
    let map = target_of(project, &trail);
    let load_error = |id: &str| {
        let env = targets.get(id);
        let error = env.loaded.as_ref().err().cloned();
        uses.target = Some(env);
        error
    };
    if !gate(
        project,
        &trail,
        map.as_deref(),
        load_error,
        &mut r.notices,
        &mut r.findings,
    ) {
        return (r, uses);
    }
    if let Some(Ok(loaded)) = uses.target.as_ref().map(|e| &e.loaded) {
        let (calls, findings) = check_trail(&trail, &loaded.surface, selectors(), loaded.warning);
        r.calls = calls;
        r.findings = findings;
        let tools: BTreeSet<&str> = trail.calls().map(|(_, _, c)| c.tool.as_str()).collect();
        uses.unknown = tools.iter().any(|t| loaded.surface.tool(t).is_none());
        uses.tools = tools.into_iter().map(str::to_string).collect();
    }
    (r, uses)
}

/// A target trailmap as the native gate sees it: its surface, or why its catalog does not load.
pub(super) struct TargetEnv {
    pub id: String,
    pub loaded: Result<Loaded, String>,
    /// What cache entries are compared with, computed on first use (a check without the cache
    /// never needs them).
    hashes: OnceLock<Hashes>,
}

pub(super) struct Loaded {
    pub surface: Arc<Surface>,
    /// An exempt trailmap's findings are warnings.
    pub warning: bool,
}

impl TargetEnv {
    pub fn hashes(&self) -> &Hashes {
        self.hashes.get_or_init(|| Hashes::of(self))
    }
}

/// Each target's surface, built once per check by the first worker that needs it.
pub(super) struct Targets<'p> {
    pub project: &'p Project,
    built: Mutex<HashMap<String, Arc<TargetEnv>>>,
}

impl<'p> Targets<'p> {
    fn new(project: &'p Project) -> Self {
        Targets {
            project,
            built: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, id: &str) -> Arc<TargetEnv> {
        // A worker that panicked while holding the lock left the map usable: entries are inserted whole.
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(env) = built.get(id) {
            return env.clone();
        }
        let loaded = self
            .project
            .surface(id)
            .map(|surface| Loaded {
                surface,
                warning: exempt(self.project, id),
            })
            .map_err(|e| e.to_string());
        let env = Arc::new(TargetEnv {
            id: id.to_string(),
            loaded,
            hashes: OnceLock::new(),
        });
        built.insert(id.to_string(), env.clone());
        env
    }
}

/// The finding of a file whose parse or check panicked: reported, not lost.
pub(super) fn failed(file: &Path) -> YamlError {
    YamlError::new(file, "", Pos::default(), "the parser failed on this file")
}

/// Files handed to a worker at a time: small enough to balance cached and uncached files.
const BATCH: usize = 8;

/// `work(0..n)` on every core (the calling thread too), in order; `None` where `work` panicked.
pub(super) fn in_parallel<T: Send>(n: usize, work: impl Fn(usize) -> T + Sync) -> Vec<Option<T>> {
    let one = |i: usize| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i))).ok();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads < 2 || n < 2 * BATCH {
        return (0..n).map(one).collect();
    }
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(BATCH, Ordering::Relaxed);
            if start >= n {
                return done;
            }
            for i in start..(start + BATCH).min(n) {
                done.push((i, one(i)));
            }
        }
    };
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
        let mut parts = vec![worker()];
        parts.extend(handles.into_iter().filter_map(|h| h.join().ok()));
        for (i, v) in parts.into_iter().flatten() {
            slots[i] = v;
        }
    });
    slots
}
