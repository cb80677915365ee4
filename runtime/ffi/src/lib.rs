//! The C ABI of trailblaze (and, with the `jni` feature, its JNI entry points), for embedders such
//! as an Android test APK that loads `libtrailblaze_ffi.so` through the NDK.
//!
//! Shape: opaque handles (a project, a session, a run) that the caller frees; JSON in and out as
//! UTF-8 with explicit lengths; every entry point returns a [`TbStatus`] (the error kind) and, on an
//! error, writes its message into the caller's [`TbBuf`]; every entry point catches panics.
//!
//! Thread rules: every function may be called from any thread. A project may be shared by threads;
//! a session runs its calls one at a time on its own thread (a second caller waits). The embedder's
//! device callbacks ([`TbDevice`]) are called on the session's thread, never two at once for one
//! session. Host functions ([`TbHostFunction`]) are added to a project before it is shared, and
//! may be called from any session's thread, concurrently. Freeing a handle while another thread uses it is safe: the object lives until that use
//! ends. A freed handle stays dead (ids are never reused), so a double free returns
//! [`TbStatus::BadHandle`].

mod buf;
mod capi;
mod device;
mod files;
mod handles;
mod host;
#[cfg(feature = "jni")]
mod jni;
mod ops;
mod trail_json;

pub use buf::{TbBuf, TbSink, tb_buf_free, tb_sink_write};
pub use capi::*;
pub use device::TbDevice;
pub use host::TbHostFunction;

/// What an entry point returns: `Ok`, or the kind of error whose message is in the `err` buffer.
/// Messages never quote an argument's value or a secret.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TbStatus {
    Ok = 0,
    /// A null pointer, text that is not UTF-8, JSON that does not parse or has the wrong shape.
    BadInput = 1,
    /// A handle that is zero, already freed, or of another project.
    BadHandle = 2,
    /// The trailmaps folder or a file in it is invalid (the message has file:line:col).
    Project = 3,
    /// The session could not start (unknown trailmap, no app.yaml, no device).
    Session = 4,
    /// The tool is not in the session's catalog.
    UnknownTool = 5,
    /// The arguments do not match the tool's schema.
    Args = 6,
    /// The tool ran and failed (an assertion, an element not found, the depth cap).
    Failed = 7,
    /// A scripted tool threw or hit a limit.
    Script = 8,
    /// The device failed (unreachable, lost, an embedder callback reported an I/O error).
    Device = 9,
    /// A panic was caught inside the library; the handle involved may be unusable.
    Panic = 10,
    /// Reading or writing the run's files failed.
    Io = 11,
}

impl TbStatus {
    /// The kind's name, as the JNI exception and the JSON reports carry it.
    pub fn name(self) -> &'static str {
        match self {
            TbStatus::Ok => "ok",
            TbStatus::BadInput => "bad_input",
            TbStatus::BadHandle => "bad_handle",
            TbStatus::Project => "project",
            TbStatus::Session => "session",
            TbStatus::UnknownTool => "unknown_tool",
            TbStatus::Args => "args",
            TbStatus::Failed => "failed",
            TbStatus::Script => "script",
            TbStatus::Device => "device",
            TbStatus::Panic => "panic",
            TbStatus::Io => "io",
        }
    }
}

/// An error as a value: a kind and a message that quotes no argument value.
#[derive(Debug, Clone)]
pub struct FfiError {
    pub status: TbStatus,
    pub message: String,
}

impl FfiError {
    pub fn new(status: TbStatus, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
        }
    }
}

impl From<trailblaze::CallError> for FfiError {
    fn from(e: trailblaze::CallError) -> FfiError {
        use trailblaze::CallError as E;
        let status = match &e {
            E::UnknownTool { .. } => TbStatus::UnknownTool,
            E::Args { .. } => TbStatus::Args,
            // A tool for another platform is the caller's failed call, as on every other way in.
            E::Depth { .. } | E::Failed { .. } | E::Platform { .. } => TbStatus::Failed,
            E::Script { .. } => TbStatus::Script,
            E::Device { .. } => TbStatus::Device,
            E::Panicked { .. } => TbStatus::Panic,
        };
        FfiError::new(status, e.to_string())
    }
}

impl From<trailblaze::ProjectError> for FfiError {
    fn from(e: trailblaze::ProjectError) -> FfiError {
        use trailblaze::ProjectError as E;
        let status = match &e {
            E::Load(_) | E::Catalog(_) => TbStatus::Project,
            E::Device(_) => TbStatus::Device,
            E::Session(_) | E::Usage(_) => TbStatus::Session,
            E::Output(_) => TbStatus::Io,
        };
        FfiError::new(status, e.to_string())
    }
}

/// Runs `f`, turning a panic into [`TbStatus::Panic`]; its message is never shown (it may quote a
/// value).
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, FfiError>) -> Result<T, FfiError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(FfiError::new(TbStatus::Panic, "a panic was caught in trailblaze")))
}
