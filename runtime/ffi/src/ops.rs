//! What the C ABI and JNI both do, in plain Rust: open a project, open a session, call, replay,
//! run. The two front ends only convert their arguments and results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use trailblaze::device::Device;
use trailblaze::{Project, ProjectOptions, RunOptions, Session, SessionOptions};
use trailblaze_host_functions::SecretStore;

use crate::handles::Table;
use crate::{FfiError, TbStatus};

pub(crate) struct ProjectEntry {
    pub(crate) project: Project,
    /// The private folder of a project opened from in-memory files; removed with the project.
    _files: Option<tempfile::TempDir>,
}

pub(crate) static PROJECTS: Table<ProjectEntry> = Table::new("project");
pub(crate) static SESSIONS: Table<Session> = Table::new("session");
/// A finished run: its report as JSON.
pub(crate) static RUNS: Table<String> = Table::new("run");

fn bad(m: impl Into<String>) -> FfiError {
    FfiError::new(TbStatus::BadInput, m)
}

/// `{"NAME": "value"}` → a secret store. Messages name the key, never the value.
fn secrets(v: &Value, what: &str) -> Result<SecretStore, FfiError> {
    let map = v
        .as_object()
        .ok_or_else(|| bad(format!("{what}: expected an object of NAME → value")))?;
    let mut pairs = Vec::new();
    for (k, v) in map {
        let s = v
            .as_str()
            .ok_or_else(|| bad(format!("{what}: `{k}` must be a string")))?;
        pairs.push((k.clone(), s.to_string()));
    }
    Ok(SecretStore::from_pairs(pairs))
}

fn opt_str<'a>(options: &'a Value, key: &str) -> Result<Option<&'a str>, FfiError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(format!("options: `{key}` must be a string"))),
    }
}

/// Checks that `options` is an object with only `known` keys.
fn check_keys(options: &Value, known: &[&str]) -> Result<(), FfiError> {
    let map = options
        .as_object()
        .ok_or_else(|| bad("options: expected a JSON object"))?;
    if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(bad(format!("options: unknown key `{k}` (known: {})", known.join(", "))));
    }
    Ok(())
}

/// Opens the trailmaps folder `root`. Options: `cacheDir`, `secrets` (the project's secrets, used
/// by runs and by sessions given none; without it, `TRAILBLAZE_SECRET_*` from the environment).
pub(crate) fn open_project(root: &Path, options: &Value, files: Option<tempfile::TempDir>) -> Result<u64, FfiError> {
    check_keys(options, &["cacheDir", "secrets"])?;
    let opts = ProjectOptions {
        cache_dir: opt_str(options, "cacheDir")?.map(PathBuf::from),
        ..ProjectOptions::default()
    };
    let mut project = trailblaze::open(root, opts)?;
    if let Some(s) = options.get("secrets") {
        project = project.with_secrets(secrets(s, "options.secrets")?);
    }
    Ok(PROJECTS.insert(ProjectEntry { project, _files: files }))
}

/// Opens a session of trailmap `trailmap`. Options: `secrets` (this session's), `outDir` (write
/// `<outDir>/<id>/log.jsonl`), `id`. `device`: `None` for the trailmap's simulated app.
pub(crate) fn open_session(
    project: u64,
    trailmap: &str,
    options: &Value,
    device: Option<Box<dyn Device>>,
) -> Result<u64, FfiError> {
    check_keys(options, &["secrets", "outDir", "id"])?;
    let entry = PROJECTS.get(project)?;
    let secrets = match options.get("secrets") {
        Some(s) => Some(Arc::new(secrets(s, "options.secrets")?)),
        None => None,
    };
    let session = entry.project.open_session(
        trailmap,
        SessionOptions {
            device,
            out_dir: opt_str(options, "outDir")?.map(PathBuf::from),
            id: opt_str(options, "id")?.map(str::to_string),
            secrets,
            ..SessionOptions::default()
        },
    )?;
    Ok(SESSIONS.insert(session))
}

pub(crate) fn call(session: u64, name: &str, args: Value) -> Result<String, FfiError> {
    let s = SESSIONS.get(session)?;
    let v = s.call(name, args)?;
    Ok(v.to_string())
}

pub(crate) fn steps(session: u64) -> Result<String, FfiError> {
    let s = SESSIONS.get(session)?;
    serde_json::to_string(&s.steps()).map_err(|e| FfiError::new(TbStatus::Io, e.to_string()))
}

/// `{{args.NAME}}` values: an object of strings.
fn args_map(v: Option<&Value>) -> Result<BTreeMap<String, String>, FfiError> {
    let Some(v) = v else { return Ok(BTreeMap::new()) };
    let map = v.as_object().ok_or_else(|| bad("`args` must be an object"))?;
    map.iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_string())),
            None => Err(bad(format!("args: `{k}` must be a string"))),
        })
        .collect()
}

/// Replays the trail file `path` on the session's own device; options: `args`.
pub(crate) fn run_trail(session: u64, path: &str, options: &Value) -> Result<String, FfiError> {
    check_keys(options, &["args"])?;
    let s = SESSIONS.get(session)?;
    let trail = trailblaze::Trail::load(Path::new(path)).map_err(|errors| {
        // Every parse error of the trail, one per line (each names file:line:col).
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        FfiError::new(TbStatus::BadInput, text.join("\n"))
    })?;
    let opts = trailblaze::ReplayOptions {
        args: args_map(options.get("args"))?,
        ..Default::default()
    };
    let mut json = crate::trail_json::TrailJson::default();
    s.replay(&trail, &opts, &mut json);
    Ok(json.into_json().to_string())
}

/// Runs trails on the simulated device, writing reports; the report JSON gains `dir` and
/// `summary` (`total`, `passed`, `failed`, `skipped`, `not_recorded`, `errors`). Options: `trails` (file paths; default:
/// every trail under the project), `out` (required), `args`.
pub(crate) fn run_trails(project: u64, options: &Value) -> Result<u64, FfiError> {
    check_keys(options, &["trails", "out", "args"])?;
    let entry = PROJECTS.get(project)?;
    let out = opt_str(options, "out")?.ok_or_else(|| bad("options: `out` (the reports folder) is required"))?;
    let files: Vec<PathBuf> = match options.get("trails") {
        None => trailblaze::trails::find_trails(std::slice::from_ref(&entry.project.trailmaps.root))
            .map_err(|e| bad(e.to_string()))?,
        Some(Value::Array(a)) => a
            .iter()
            .map(|p| {
                p.as_str()
                    .map(PathBuf::from)
                    .ok_or_else(|| bad("options: `trails` must hold strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad("options: `trails` must be an array of paths")),
    };
    let opts = RunOptions {
        out: PathBuf::from(out),
        args: args_map(options.get("args"))?,
        ..RunOptions::default()
    };
    let output = trailblaze::run_trails(&entry.project, &files, &opts, &mut ())?;
    let mut report = serde_json::to_value(&output.report).map_err(|e| FfiError::new(TbStatus::Io, e.to_string()))?;
    if let Some(m) = report.as_object_mut() {
        m.insert("dir".into(), Value::String(output.dir.display().to_string()));
        // Counts of trails by outcome, so an embedder need not walk `trails`.
        let summary = serde_json::to_value(output.report.summary()).unwrap_or(Value::Null);
        m.insert("summary".into(), summary);
    }
    Ok(RUNS.insert(report.to_string()))
}

pub(crate) fn run_report(run: u64) -> Result<String, FfiError> {
    Ok(RUNS.get(run)?.as_ref().clone())
}
