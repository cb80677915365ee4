//! The `tb_*` entry points. Each one: checks its pointers, runs under [`guarded`] (no panic crosses
//! the boundary), returns a [`TbStatus`], and writes the result (JSON) or the error message into
//! `out` when `out` is not null. Text arguments are UTF-8 with an explicit length.

use std::path::Path;

use serde_json::{Value, json};

use crate::buf::{TbBuf, finish, json, put, text};
use crate::device::{CDevice, TbDevice};
use crate::host::{self, TbHostFunction, c_host_function};
use crate::ops::{self, PROJECTS, RUNS, SESSIONS};
use crate::{FfiError, TbStatus, guarded};

/// A project handle (a trailmaps folder opened once). `id` 0 is no project.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TbProject {
    pub id: u64,
}

/// A session handle: one device, one log, calls run one at a time. `id` 0 is no session.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TbSession {
    pub id: u64,
}

/// A finished run's handle (its report). `id` 0 is no run.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TbRun {
    pub id: u64,
}

/// Stores `id` into `*handle` (when the pointer is not null).
fn set<T>(handle: *mut T, make: impl FnOnce(u64) -> T, id: u64) {
    // SAFETY: entry points document the handle pointer as null or writable.
    if let Some(h) = unsafe { handle.as_mut() } {
        *h = make(id);
    }
}

/// The version of the library, as JSON text in `out` (`{"version": "0.1.0"}`).
///
/// # Safety
/// `out` is null or a valid `TbBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_version(out: *mut TbBuf) -> TbStatus {
    finish(
        out,
        guarded(|| Ok(json!({"version": env!("CARGO_PKG_VERSION")}).to_string())),
    )
}

/// Opens the trailmaps folder at `root`. `options` (JSON, may be empty): `cacheDir`, `secrets`
/// (`{"NAME": "value"}`: the project's secrets for runs and for sessions given none).
///
/// # Safety
/// Pointers are null or valid for their lengths; `project` and `out` are null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_project_open(
    root: *const u8,
    root_len: usize,
    options: *const u8,
    options_len: usize,
    project: *mut TbProject,
    out: *mut TbBuf,
) -> TbStatus {
    set(project, |id| TbProject { id }, 0);
    let r = guarded(|| {
        let root = text(root, root_len, "root")?;
        let opts = json(options, options_len, "options", json!({}))?;
        ops::open_project(Path::new(root), &opts, None)
    });
    finish_handle(r, project, |id| TbProject { id }, out)
}

/// Opens a project from in-memory files: `files` is JSON `{"demo/trailmap.yaml": "text", ...}`
/// (paths relative to the trailmaps root). They are written to a private temporary folder under
/// `options.tempDir` (default: the system's), removed when the project is freed.
///
/// # Safety
/// As [`tb_project_open`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_project_open_files(
    files: *const u8,
    files_len: usize,
    options: *const u8,
    options_len: usize,
    project: *mut TbProject,
    out: *mut TbBuf,
) -> TbStatus {
    set(project, |id| TbProject { id }, 0);
    let r = guarded(|| {
        let files = json(files, files_len, "files", Value::Null)?;
        let mut opts = json(options, options_len, "options", json!({}))?;
        let temp = match opts.as_object_mut().and_then(|m| m.remove("tempDir")) {
            Some(Value::String(s)) => Some(s),
            None => None,
            Some(_) => return Err(FfiError::new(TbStatus::BadInput, "options: `tempDir` must be a string")),
        };
        let dir = crate::files::materialize(&files, temp.as_deref().map(Path::new))?;
        let root = dir.path().to_path_buf();
        ops::open_project(&root, &opts, Some(dir))
    });
    finish_handle(r, project, |id| TbProject { id }, out)
}

/// Frees a project. Sessions already open keep working. A second free returns `BadHandle`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_project_free(project: TbProject) -> TbStatus {
    status(guarded(|| PROJECTS.remove(project.id).map(drop)))
}

/// Opens a session of trailmap `trailmap`. `device`: null for the trailmap's simulated app, or the
/// embedder's callbacks (copied; once passed here, its `drop` is called exactly once, also when
/// opening fails). `options` (JSON, may be empty): `secrets` (`{"NAME": "value"}`, this session's
/// only), `outDir`, `id`.
///
/// # Safety
/// Pointers are null or valid for their lengths; `device` is null or a valid table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_session_open(
    project: TbProject,
    trailmap: *const u8,
    trailmap_len: usize,
    options: *const u8,
    options_len: usize,
    device: *const TbDevice,
    session: *mut TbSession,
    out: *mut TbBuf,
) -> TbStatus {
    set(session, |id| TbSession { id }, 0);
    // SAFETY: the caller passes null or a valid table; it is copied at once.
    let table = unsafe { device.as_ref() }.copied();
    let r = guarded(|| {
        let device: Option<Box<dyn trailblaze::device::Device>> = match table {
            None => None,
            Some(t) => match CDevice::new(t, "embedder".into()) {
                Ok(d) => Some(Box::new(d)),
                Err(e) => {
                    if let Some(drop) = t.drop {
                        // SAFETY: ownership passed to us; this is its only drop.
                        unsafe { drop(t.user_data) };
                    }
                    return Err(FfiError::new(TbStatus::BadInput, e));
                }
            },
        };
        let trailmap = text(trailmap, trailmap_len, "trailmap")?;
        let opts = json(options, options_len, "options", json!({}))?;
        ops::open_session(project.id, trailmap, &opts, device)
    });
    finish_handle(r, session, |id| TbSession { id }, out)
}

/// Adds host function `name` to `project`, for scripts' `ctx.host.<name>(args)` in trailmaps that
/// declare it (`host/<name>.host.yaml` with `id: <name>` and `class: <name>`). `schema` is the
/// arguments' JSON Schema (`"type": "object"`; its `description` is the function's); arguments are
/// checked against it before `function.call` runs. Add host functions right after opening the
/// project, before another thread uses it. The library owns `function` from here on: its `drop` is
/// called once, when it is no longer used (at once, when adding fails).
///
/// # Safety
/// Pointers are null or valid for their lengths; `function` is null or a valid table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_project_add_host_function(
    project: TbProject,
    name: *const u8,
    name_len: usize,
    schema: *const u8,
    schema_len: usize,
    function: *const TbHostFunction,
    out: *mut TbBuf,
) -> TbStatus {
    // SAFETY: the caller passes null or a valid table; it is copied at once.
    let table = unsafe { function.as_ref() }.copied();
    let r = guarded(|| {
        // Owned from here: dropped on every error path below with the closure.
        let f = c_host_function(table.ok_or_else(|| FfiError::new(TbStatus::BadInput, "function: null"))?)?;
        let name = text(name, name_len, "name")?;
        let schema = json(schema, schema_len, "schema", json!({"type": "object"}))?;
        host::add(project.id, name, schema, f).map(|()| String::new())
    });
    finish(out, r)
}

/// Calls tool `name` with `args` (a JSON object; empty text is `{}`). On success `out` holds the
/// result as JSON; on an error its message (secrets redacted, argument values never quoted).
///
/// # Safety
/// Pointers are null or valid for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_session_call(
    session: TbSession,
    name: *const u8,
    name_len: usize,
    args: *const u8,
    args_len: usize,
    out: *mut TbBuf,
) -> TbStatus {
    finish(
        out,
        guarded(|| {
            let name = text(name, name_len, "name")?;
            let args = json(args, args_len, "args", json!({}))?;
            ops::call(session.id, name, args)
        }),
    )
}

/// The steps the session logged so far, as a JSON array (`seq`, `depth`, `tool`, `args` with
/// placeholders, `ok`, `error`, `millis`).
///
/// # Safety
/// `out` is null or a valid `TbBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_session_steps(session: TbSession, out: *mut TbBuf) -> TbStatus {
    finish(out, guarded(|| ops::steps(session.id)))
}

/// Replays the trail file at `path` on this session's device (the embedder's, or the sim) and
/// writes its report as JSON (`outcome`, `steps`). A failed trail is `Ok` with `"outcome":
/// "failed"`; a trail that does not parse is `BadInput` with file:line:col. `options`: `args`.
///
/// # Safety
/// Pointers are null or valid for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_session_run_trail(
    session: TbSession,
    path: *const u8,
    path_len: usize,
    options: *const u8,
    options_len: usize,
    out: *mut TbBuf,
) -> TbStatus {
    finish(
        out,
        guarded(|| {
            let path = text(path, path_len, "path")?;
            let opts = json(options, options_len, "options", json!({}))?;
            ops::run_trail(session.id, path, &opts)
        }),
    )
}

/// Ends a session (its thread stops once a call in flight returns). A second free: `BadHandle`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_session_free(session: TbSession) -> TbStatus {
    status(guarded(|| SESSIONS.remove(session.id).map(drop)))
}

/// Runs trails on the simulated device and writes `report.json`, `report.html`, `junit.xml`.
/// `options` (JSON): `out` (required: the reports folder), `trails` (file paths; default: every
/// trail of the project), `args`. A failed trail still gives a run; read it with [`tb_run_report`].
///
/// # Safety
/// Pointers are null or valid for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_run_trails(
    project: TbProject,
    options: *const u8,
    options_len: usize,
    run: *mut TbRun,
    out: *mut TbBuf,
) -> TbStatus {
    set(run, |id| TbRun { id }, 0);
    let r = guarded(|| {
        let opts = json(options, options_len, "options", json!({}))?;
        ops::run_trails(project.id, &opts)
    });
    finish_handle(r, run, |id| TbRun { id }, out)
}

/// The run's report as JSON: `summary` (trails by outcome), `trails[]` with `outcome` and
/// `steps[]`, and `dir` (where `report.html` is).
///
/// # Safety
/// `out` is null or a valid `TbBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_run_report(run: TbRun, out: *mut TbBuf) -> TbStatus {
    finish(out, guarded(|| ops::run_report(run.id)))
}

#[unsafe(no_mangle)]
pub extern "C" fn tb_run_free(run: TbRun) -> TbStatus {
    status(guarded(|| RUNS.remove(run.id).map(drop)))
}

fn status(r: Result<(), FfiError>) -> TbStatus {
    match r {
        Ok(()) => TbStatus::Ok,
        Err(e) => e.status,
    }
}

/// Stores a new handle, or the error's message into `out`.
fn finish_handle<T>(r: Result<u64, FfiError>, handle: *mut T, make: fn(u64) -> T, out: *mut TbBuf) -> TbStatus {
    match r {
        Ok(id) => {
            set(handle, make, id);
            put(out, String::new());
            TbStatus::Ok
        }
        Err(e) => finish(out, Err(e)),
    }
}
