//! The native type gate over many trails. Each file is read, parsed, resolved to its target, checked
//! and dropped by one worker: nothing of a trail outlives its worker, so its memory is freed on the
//! thread that allocated it (a single thread dropping every trail at the end cost a quarter of a
//! check, most of it in glibc's cross-thread free). Results are merged in file order, so a report is
//! the same whatever the number of threads, and whether it came from the cache ([`super::cache`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cache::Cache;
use super::targets::{Targets, TrailResult, Uses};
use super::{CheckReport, Finding, TOOLS_NOT_TYPE_CHECKED, check_trail, gate, sort};
use crate::surface::client_files::selectors;
use trailblaze_core::project::Project;
use trailblaze_core::trail::{Trail, parse_trail_owned, read_trail};
use trailblaze_core::yaml::{Pos, YamlError};

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
    // Said only when there is something it did not compile: a project with no `.ts` tool has none.
    if project.trailmaps.maps.values().any(|m| !m.scripts.is_empty()) {
        report.notices.push(TOOLS_NOT_TYPE_CHECKED.to_string());
    }
    report
}

struct Outcome {
    result: TrailResult,
    cached: bool,
    /// The cache line to write for a result checked now.
    entry: Option<(String, String)>,
}

fn check_file(targets: &Targets<'_>, cache: Option<&Cache>, file: &Path) -> Outcome {
    // `run` parsed its trails already (to pick their device): check that parse, not a second one.
    // A parse that succeeded has no parse findings, so what follows is what the file's check finds.
    if let Some(outcome) = targets.project.with_kept_trail(file, |trail| {
        through_cache(
            targets,
            cache,
            file,
            trail,
            |t| &t.text,
            |t, c| check_parsed(targets, t, c),
        )
    }) {
        return outcome;
    }
    // A file that cannot be read is reported, never cached: there is no content to key it by.
    match read_trail(file) {
        Ok(text) => through_cache(targets, cache, file, text, String::as_str, |text, c| {
            check_text(targets, file, text, c)
        }),
        Err(e) => Outcome {
            result: TrailResult {
                findings: vec![Finding::at(&e)],
                ..TrailResult::default()
            },
            cached: false,
            entry: None,
        },
    }
}

/// `check`'s result for `file`, whose content is `input` (`text_of` reads its text, the cache's
/// key): the cache's when it has one, else checked now (told whether to say which tools the result
/// depends on, which only a cache entry needs) and the entry to record.
fn through_cache<T>(
    targets: &Targets<'_>,
    cache: Option<&Cache>,
    file: &Path,
    input: T,
    text_of: impl FnOnce(&T) -> &str,
    check: impl FnOnce(T, bool) -> (TrailResult, Uses),
) -> Outcome {
    let Some(cache) = cache else {
        return Outcome {
            result: check(input, false).0,
            cached: false,
            entry: None,
        };
    };
    let key = cache.key(file, text_of(&input));
    if let Some(result) = cache.get(&key, targets) {
        return Outcome {
            result,
            cached: true,
            entry: None,
        };
    }
    let (result, uses) = check(input, true);
    let entry = cache.entry(&key, &uses, &result);
    Outcome {
        result,
        cached: false,
        entry,
    }
}

/// The parse gate, the target and the type gate over one trail's text; with `cached`, which tools
/// its result depends on (only a cache entry needs them).
fn check_text(targets: &Targets<'_>, file: &Path, text: String, cached: bool) -> (TrailResult, Uses) {
    match parse_trail_owned(text, file) {
        Ok(trail) => check_parsed(targets, &trail, cached),
        Err(errors) => (
            TrailResult {
                findings: errors.iter().map(Finding::at).collect(),
                ..TrailResult::default()
            },
            Uses::default(),
        ),
    }
}

/// The target and the type gate over one parsed trail.
fn check_parsed(targets: &Targets<'_>, trail: &Trail, cached: bool) -> (TrailResult, Uses) {
    let mut r = TrailResult::default();
    let mut uses = Uses::default();
    let project = targets.project;
    let map = project.target_of(trail);
    let load_error = |id: &str| {
        let env = targets.get(id);
        let error = env.loaded.as_ref().err().cloned();
        uses.target = Some(env);
        error
    };
    if !gate(
        project,
        trail,
        map.as_deref(),
        load_error,
        &mut r.notices,
        &mut r.findings,
    ) {
        return (r, uses);
    }
    if let Some(Ok(loaded)) = uses.target.as_ref().map(|e| &e.loaded) {
        let (calls, findings) = check_trail(trail, &loaded.surface, selectors(), loaded.warning);
        r.calls = calls;
        r.findings = findings;
        if !cached {
            return (r, uses);
        }
        let tools: BTreeSet<&str> = trail.calls().map(|(_, _, c)| c.tool.as_str()).collect();
        uses.unknown = tools.iter().any(|t| loaded.surface.tool(t).is_none());
        uses.tools = tools.into_iter().map(str::to_string).collect();
    }
    (r, uses)
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
    let threads = trailblaze_core::cores::count().min(8);
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
