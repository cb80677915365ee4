//! What a command and a session's process say to each other over its Unix socket: one request, one
//! reply, each a line of JSON, one connection each. A reply that never comes (the process was
//! killed) is an error naming the session, never a hang: the socket closes with the process.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request. Tool arguments travel as given (`key=value`): the session reads them with its
/// catalog, so a command that joins one loads no trailmap.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Request {
    /// `trailblaze tool NAME key=value ... [--step TEXT]`.
    Tool {
        name: String,
        pairs: Vec<String>,
        step: Option<String>,
    },
    /// A live session's call as MCP and `shell` make it (the session tools included).
    Call { name: String, args: Value },
    /// The tools offered now, and the session tools (MCP's list).
    Offered,
    /// Whether a call of `name` may change what is offered.
    OfferMayChange { name: String },
    /// The recording so far, for `shell`'s `steps`.
    Steps,
    /// `step`, `ask`, `verify` with the session's LLM.
    Words { kind: String, text: String },
    /// The recording written as a trail at `path` (absolute).
    Save {
        path: PathBuf,
        title: Option<String>,
        overwrite: bool,
    },
    /// The trace so far written in the session's folder.
    Trace,
    /// `snapshot --screenshot FILE`: the screen's picture written at `path` (absolute), when its
    /// format is the one the file's extension names.
    Screenshot { path: PathBuf },
    /// What the session is and has done.
    Info,
    /// Stops the call running now.
    Cancel,
    /// Ends the session: its device freed, its trace written, its process gone.
    Stop { why: String },
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("session `{name}` is not running: its process is gone (killed or crashed){}", log_hint(.log))]
    Gone { name: String, log: PathBuf },
    #[error("session `{name}`'s process ended before it answered (killed or crashed){}", log_hint(.log))]
    Dropped { name: String, log: PathBuf },
    #[error("session `{name}`: {source}")]
    Io { name: String, source: std::io::Error },
    #[error("session `{name}` answered something that is not a reply")]
    Garbled { name: String },
}

fn log_hint(log: &Path) -> String {
    if log.is_file() {
        format!("; its log: {}", log.display())
    } else {
        String::new()
    }
}

/// The session at `socket` (named `name`, logging to `log`) answers `req`.
pub fn ask(name: &str, socket: &Path, log: &Path, req: &Request) -> Result<Value, WireError> {
    let gone = || WireError::Gone {
        name: name.into(),
        log: log.into(),
    };
    let mut stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(gone());
        }
        Err(source) => {
            return Err(WireError::Io {
                name: name.into(),
                source,
            });
        }
    };
    let mut line = serde_json::to_vec(req).unwrap_or_default();
    line.push(b'\n');
    stream.write_all(&line).map_err(|_| gone())?;
    let mut reply = String::new();
    let read = BufReader::new(&stream).read_line(&mut reply);
    match read {
        Ok(0) | Err(_) => Err(WireError::Dropped {
            name: name.into(),
            log: log.into(),
        }),
        Ok(_) => serde_json::from_str(&reply).map_err(|_| WireError::Garbled { name: name.into() }),
    }
}

/// Reads one request line (at most 16 MiB: a tool's arguments, never a file).
pub fn read_request(stream: &UnixStream) -> Result<Request, String> {
    use std::io::Read;
    let mut line = String::new();
    BufReader::new(stream.take(16 << 20))
        .read_line(&mut line)
        .map_err(|e| format!("reading the request failed: {e}"))?;
    serde_json::from_str(&line).map_err(|e| format!("not a request: {e}"))
}

/// Writes one reply line; a client that left is no one's problem.
pub fn write_reply(mut stream: &UnixStream, reply: &Value) {
    let mut line = serde_json::to_vec(reply).unwrap_or_default();
    line.push(b'\n');
    let _ = stream.write_all(&line);
}

/// A reply that is an error: `usage` when the request itself was wrong (exit 2), else a failure.
pub fn error(text: impl Into<String>, usage: bool) -> Value {
    serde_json::json!({ "ok": false, "error": text.into(), "usage": usage })
}
