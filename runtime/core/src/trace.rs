//! A trail's trace (docs/trace.md): what each call saw and did, recorded on the session's thread while
//! the trail runs ([`Recorder`]) and written beside the trail's log when it ends
//! (`trail::report::trace_files`).
//!
//! The recorder is fed by the dispatcher (each call's start and end, with a frame of the screen at
//! each), by the built-ins (the node a selector matched, or the nearest ones), by the console and by
//! waits; the device hands over what it kept itself (requests, its log, a video) at the end.

mod record;
pub(crate) mod video;

use serde::Serialize;

pub(crate) use record::image_name;
pub use record::{Recorder, TraceData};

use crate::device::trace::TraceOptions;

/// Which trails keep a trace (Playwright's `trace` option, by the same words).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TracePolicy {
    /// Record nothing: a run costs nothing more.
    #[default]
    Off,
    /// Keep every trail's trace.
    On,
    /// Record every trail; keep the trace of one that did not pass.
    RetainOnFailure,
}

impl TracePolicy {
    pub fn parse(s: &str) -> Option<TracePolicy> {
        match s {
            "off" => Some(TracePolicy::Off),
            "on" => Some(TracePolicy::On),
            "retain-on-failure" => Some(TracePolicy::RetainOnFailure),
            _ => None,
        }
    }

    pub fn records(self) -> bool {
        self != TracePolicy::Off
    }

    /// Whether a trail that `passed` (or was skipped) keeps what was recorded.
    pub fn keeps(self, passed: bool) -> bool {
        match self {
            TracePolicy::Off => false,
            TracePolicy::On => true,
            TracePolicy::RetainOnFailure => !passed,
        }
    }
}

/// What a replay records and keeps: the trace, and the video within it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceSettings {
    pub trace: TracePolicy,
    pub video: TracePolicy,
}

impl TraceSettings {
    pub fn records(self) -> bool {
        self.trace.records() || self.video.records()
    }

    pub(crate) fn device_options(self) -> TraceOptions {
        TraceOptions {
            video: self.video.records(),
        }
    }
}

/// The node a call looked for by selector: what it matched, or the nearest nodes when nothing did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Target {
    pub selector: serde_json::Value,
    pub matched: Option<NodeAt>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeAt {
    pub r#ref: String,
    pub bounds: [i32; 4],
}

/// A node like the one a selector asked for, when none matched.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    pub r#ref: String,
    pub bounds: [i32; 4],
    /// Its line as the LLM reads it (`[b310] Button "Sign In"`).
    pub text: String,
    /// How like the selector's strings its own are, 0 to 1 (Jaro-Winkler).
    pub score: f64,
    pub why: String,
}

pub(crate) fn bounds_of(b: &crate::device::Bounds) -> [i32; 4] {
    [b.left, b.top, b.right, b.bottom]
}
