//! Each host call leaves one span and one log line: name, duration, ok or failed; never values.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;

/// A `MakeWriter` that appends everything to a shared buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Runs `f` with a subscriber recording every level and span events, and returns what it wrote.
fn captured(f: impl FnOnce()) -> String {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    capture.text()
}

#[test]
fn one_line_per_call_with_name_and_outcome_and_no_values() {
    let registry = registry();
    let mut cx = FakeContext::new();
    let out = captured(|| {
        // ok, with a canary in both the arguments and the result
        assert!(registry.call("nested", nested_args(CANARY), &mut cx).is_ok());
        // decode failure with a canary in an unknown key's value
        let mut bad = nested_args("v");
        bad["outer"]["middle"]["extra"] = json!(CANARY);
        assert!(registry.call("nested", bad, &mut cx).is_err());
        // a panic whose message holds the canary
        assert!(registry.call("boom", json!({ "secret": CANARY }), &mut cx).is_err());
        // an encode failure whose serde message holds the canary
        assert!(registry.call("unencodable", json!({}), &mut cx).is_err());
        // a tool dispatched from a host function
        assert!(
            registry
                .call("callsTool", json!({ "tool": "echo", "text": CANARY }), &mut cx)
                .is_ok()
        );
    });
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let expected = [
        ("nested", "ok", None),
        ("nested", "failed", Some("decode")),
        ("boom", "failed", Some("panicked")),
        ("unencodable", "failed", Some("encode")),
        ("callsTool", "ok", None),
    ];
    for (line, (name, outcome, error)) in lines.iter().zip(expected) {
        assert!(
            line.contains(&format!("host_call{{name={name}}}")),
            "span missing: {line}"
        );
        assert!(line.contains(&format!("host call name={name} duration_us=")), "{line}");
        assert!(line.contains(&format!("outcome={outcome}")), "{line}");
        if let Some(kind) = error {
            assert!(line.ends_with(&format!("error={kind}")), "{line}");
        }
    }
    assert!(!out.contains(CANARY), "{out}");
}

#[test]
fn the_capture_would_see_a_value_if_one_were_logged() {
    // Positive control for the assertion above: the capture does record field values.
    let out = captured(|| tracing::info!(value = CANARY, "leak"));
    assert!(out.contains(CANARY), "{out}");
}
