//! `exec`: a process on the host, for tool authors (the original's escape hatch for host CLIs such
//! as `xcrun simctl` or build steps). Its argv is passed as it is, never through a shell. Hidden
//! from the LLM and never recorded, as in the original: a trail or a script asks for it by name.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Output kept of each stream; the rest is dropped with a note (a chatty process must not fill
/// the session's memory).
const MAX_OUTPUT: usize = 1 << 20;

/// Runs a process on the host by its argv (no shell: `;`, `&&` and quotes are plain text) and
/// returns its stdout followed by its stderr. An exit code other than `expectedExitCode` fails the
/// call. For tool authors: hidden from the LLM and never recorded.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Exec {
    /// The program and its arguments, each passed as it is; `["sh", "-c", "..."]` opts into a shell.
    pub argv: Vec<String>,
    /// The folder it runs in (default: trailblaze's current folder).
    #[serde(default)]
    pub working_dir: Option<String>,
    /// The exit code that means success (default 0).
    #[serde(default)]
    pub expected_exit_code: Option<i32>,
    /// Keep only the output lines this regular expression matches (on success).
    #[serde(default)]
    pub output_filter_regex: Option<String>,
    /// Kill the process after this many seconds (default: the call's own time budget).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

impl BuiltinTool for Exec {
    fn result_schema() -> Option<serde_json::Value> {
        Some(serde_json::json!({ "type": "string" }))
    }
    const NAME: &'static str = "exec";
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: false,
        is_recordable: false,
        read_only: false,
    };
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let Some((program, args)) = self.argv.split_first() else {
            return Err("`argv` is empty: its first element is the program".into());
        };
        let filter = match &self.output_filter_regex {
            Some(p) => Some(regex::Regex::new(p).map_err(|_| "`outputFilterRegex` is not a valid regular expression")?),
            None => None,
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.working_dir {
            cmd.current_dir(dir);
        }
        // The program is the caller's, but the error names only what failed, not the argv.
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("`argv[0]` could not be started: {e}"))?;
        let out = read_capped(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let err = read_capped(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let limit = self.timeout_seconds.map(Duration::from_secs);
        let started = Instant::now();
        // No limit of its own: the call's deadline ends the wait.
        let until = limit.map_or(started + Duration::from_secs(365 * 24 * 3600), |l| started + l);
        let exited = crate::budget::poll(Some(cx.deadline), until, Duration::from_millis(10), || {
            child
                .try_wait()
                .map_err(|e| ToolFailure::from(format!("waiting for the process failed: {e}")))
        })?;
        let Some(status) = exited else {
            let over = limit.is_some_and(|l| started.elapsed() >= l);
            let _ = child.kill();
            let _ = child.wait();
            return Err(if over {
                format!(
                    "the process ran longer than {} s (timeoutSeconds) and was killed",
                    limit.map_or(0, |l| l.as_secs())
                )
            } else {
                "the process was killed: the call's time ran out or it was cancelled".to_string()
            }
            .into());
        };
        let (mut text, mut dropped) = out.join().unwrap_or_default();
        let (stderr, dropped_err) = err.join().unwrap_or_default();
        text.extend_from_slice(&stderr);
        dropped |= dropped_err;
        let mut text = String::from_utf8_lossy(&text).into_owned();
        if dropped {
            text.push_str(&format!("\n[output past {} MiB per stream dropped]", MAX_OUTPUT >> 20));
        }
        let expected = self.expected_exit_code.unwrap_or(0);
        match status.code() {
            Some(code) if code == expected => {}
            Some(code) => {
                return Err(format!(
                    "the process exited with code {code} (expected {expected}): {}",
                    text.trim_end()
                )
                .into());
            }
            None => return Err(format!("the process was ended by a signal: {}", text.trim_end()).into()),
        }
        if let Some(re) = filter {
            text = text.lines().filter(|l| re.is_match(l)).collect::<Vec<_>>().join("\n");
        }
        Ok(Outcome::Done(serde_json::Value::String(text)))
    }
}

/// Runs a shell command line on the host (`sh -c`, `cmd /c` on Windows) and returns its output:
/// `exec` with a shell in front, for wrappers of host command-line tools. Anything untrusted in
/// `command` is the caller's to quote. Hidden from the LLM and never recorded.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunCommand {
    /// The command line, as typed at a prompt: pipes, redirects and globs work.
    pub command: String,
    /// The folder it runs in (default: trailblaze's current folder).
    #[serde(default)]
    pub working_dir: Option<String>,
    /// The exit code that means success (default 0).
    #[serde(default)]
    pub expected_exit_code: Option<i32>,
    /// Keep only the output lines this regular expression matches (on success).
    #[serde(default)]
    pub output_filter_regex: Option<String>,
    /// Kill the process after this many seconds (default: the call's own time budget).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

impl BuiltinTool for RunCommand {
    const NAME: &'static str = "runCommand";
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: false,
        is_recordable: false,
        read_only: false,
    };
    const DELEGATES: bool = true;
    fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let shell: [&str; 2] = if cfg!(windows) { ["cmd", "/c"] } else { ["sh", "-c"] };
        let mut args = serde_json::json!({ "argv": [shell[0], shell[1], self.command] });
        let fields = [
            ("workingDir", self.working_dir.map(serde_json::Value::from)),
            ("expectedExitCode", self.expected_exit_code.map(serde_json::Value::from)),
            (
                "outputFilterRegex",
                self.output_filter_regex.map(serde_json::Value::from),
            ),
            ("timeoutSeconds", self.timeout_seconds.map(serde_json::Value::from)),
        ];
        for (key, value) in fields {
            if let Some(v) = value {
                args[key] = v;
            }
        }
        Ok(Outcome::Delegate(vec![("exec".into(), args)]))
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![BuiltinEntry::of::<Exec>(), BuiltinEntry::of::<RunCommand>()]
}

/// Reads `stream` to its end on a thread of its own, keeping its first [`MAX_OUTPUT`] bytes; whether
/// more was dropped.
fn read_capped(stream: Option<Box<dyn Read + Send>>) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = false;
        if let Some(mut s) = stream {
            let mut buf = [0u8; 8192];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped |= n > room;
            }
        }
        (kept, dropped)
    })
}
