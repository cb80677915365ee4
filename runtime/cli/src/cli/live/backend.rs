//! The two ways `shell` and `mcp` reach a live session ([`Backend`]): a [`Live`] here, or a running
//! session's process; what cancels a call from another thread; the recording as `steps` prints it.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use trailblaze::CancelHandle;

use super::{Live, Reply, session_tool_definitions};

/// A live session as `shell` and `mcp` drive it: here ([`Live`]), or in a session's own process
/// (`--session NAME`).
pub trait Backend: Send {
    /// A call as MCP makes it: a tool of the catalog's, or a session tool (`saveTrail`, ...).
    fn call(&mut self, name: &str, args: Value) -> Reply;
    /// A tool given as `key=value` words, read with its schema as `trailblaze tool` reads them.
    fn call_pairs(&mut self, name: &str, pairs: &[String]) -> Reply;
    /// What the client is offered now: the catalog's tools, then the session tools.
    fn tools(&mut self) -> Vec<(String, String, Value)>;
    /// Whether a call of `name` may change what is offered.
    fn offer_may_change(&mut self, name: &str) -> bool;
    /// The recording so far, as `shell`'s `steps` prints it.
    fn steps_text(&mut self) -> String;
    /// What cancels the call running now, from another thread.
    fn canceller(&self) -> Box<dyn Fn() + Send + Sync>;
}

impl Backend for Live {
    fn call(&mut self, name: &str, args: Value) -> Reply {
        Live::call(self, name, args)
    }

    fn call_pairs(&mut self, name: &str, pairs: &[String]) -> Reply {
        match self.read_pairs(name, pairs) {
            Ok(args) => Live::call(self, name, args),
            Err(e) => Reply::error(e),
        }
    }

    fn tools(&mut self) -> Vec<(String, String, Value)> {
        let mut all: Vec<(String, String, Value)> = self
            .offered()
            .into_iter()
            .map(|d| (d.name, d.description, d.input_schema))
            .collect();
        all.extend(
            session_tool_definitions(self.has_llm())
                .into_iter()
                .map(|(n, d, s)| (n.to_string(), d.to_string(), s)),
        );
        all
    }

    fn offer_may_change(&mut self, name: &str) -> bool {
        Live::offer_may_change(self, name)
    }

    fn steps_text(&mut self) -> String {
        steps_text(self.recording())
    }

    fn canceller(&self) -> Box<dyn Fn() + Send + Sync> {
        let c = self.cancel_handle();
        Box::new(move || c.cancel())
    }
}

/// Cancels the call a [`Live`] is running now, from another thread.
#[derive(Clone)]
pub struct Canceller(pub(super) Arc<Mutex<Option<CancelHandle>>>);

impl Canceller {
    pub fn cancel(&self) {
        if let Some(c) = self.0.lock().ok().and_then(|c| c.clone()) {
            c.cancel();
        }
    }
}

/// A recording as `steps` prints it: each step's kind and text, then its calls.
pub fn steps_text(recording: &trailblaze::recording::SessionRecording) -> String {
    let steps = recording.steps();
    if steps.is_empty() {
        return "nothing recorded yet".into();
    }
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let kind = if s.verify { "verify" } else { "step" };
        out.push(format!("{:>3}. {kind}: {}", i + 1, s.text));
        for (tool, args) in &s.calls {
            out.push(format!("       {tool} {args}"));
        }
    }
    out.join("\n")
}
