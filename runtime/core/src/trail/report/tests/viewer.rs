//! The trace viewer's part of report.html, trace.js, and `trailblaze report`'s rebuild.

use serde_json::json;

use super::super::traces::{RebuildError, rebuild, session_report, step_screens, write_trace_js};
use super::*;

/// A trace as docs/trace.md has it: a failing step whose scripted call made a nested one.
fn trace() -> Value {
    json!({
        "version": 1, "session": "sign-in", "device": "sim", "platform": "android",
        "trail": { "file": "trails/sign-in.trail.yaml", "id": "demo/sign-in", "title": "Sign in" },
        "started_unix_ms": 1000.0, "duration_ms": 300.0, "outcome": { "status": "failed" },
        "steps": [
            { "number": 1, "kind": "step", "text": "Sign in </script><b>x</b>", "line": 5,
              "outcome": { "status": "failed" }, "error": "no node matches",
              "started_unix_ms": 1010.0, "duration_ms": 120.0, "calls": [3, 4] }
        ],
        "calls": [
            { "seq": 3, "parent": null, "depth": 0, "tool": "signIn", "args": {}, "ok": false,
              "error": "no node matches", "started_unix_ms": 1011.0, "duration_ms": 100.0,
              "before": 0, "after": 1 },
            { "seq": 4, "parent": 3, "depth": 1, "tool": "tapOnElementBySelector",
              "args": { "selector": { "textRegex": "Sign in" } }, "ok": false, "error": "no node matches",
              "started_unix_ms": 1012.0, "duration_ms": 10.0, "before": 0, "after": 1,
              "point": { "x": 5, "y": 6 } }
        ],
        "frames": [
            { "unix_ms": 1011.0, "tree": "t0", "screen": "trace/a.svg", "size": { "x": 100, "y": 200 } },
            { "unix_ms": 1111.0, "tree": "t0", "screen": "trace/b.svg", "size": { "x": 100, "y": 200 } }
        ],
        "trees": { "t0": { "text": "[a1] Button", "nodes": [ { "ref": "a1", "parent": null, "bounds": [0, 0, 10, 10] } ] } }
    })
}

fn with_trace() -> RunReport {
    let mut r = sample();
    r.trails[0].trace = Some("sign-in/trace.json".into());
    r
}

#[test]
fn a_trail_with_a_trace_gets_an_open_trace_button_and_the_page_the_viewer() {
    let html = render_html(&with_trace());
    let doc = parse_xhtml(&html);
    let buttons: Vec<_> = doc.descendants().filter(|n| has_class(n, "open-trace")).collect();
    assert_eq!(buttons.len(), 1);
    assert_eq!(buttons[0].attribute("data-dir"), Some("sign-in"));
    assert_eq!(buttons[0].attribute("data-session"), Some("sign-in"));
    assert!(doc.descendants().any(|n| n.attribute("id") == Some("tv")));
    // The viewer's script is the page's second, and its only source is the page itself.
    let scripts: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("script")).collect();
    assert_eq!(scripts.len(), 2);
    assert!(scripts.iter().all(|s| s.attribute("src").is_none()));
    assert!(!html.contains("http://") || !html.replace("http://www.w3.org/1999/xhtml", "").contains("http://"));
    // Without a trace: none of it (the positive control above shows what it would find).
    let plain = render_html(&sample());
    assert!(!plain.contains("open-trace") && !plain.contains("id=\"tv\""));
    // A trace named off the run's folder gets no button.
    for off in [
        "https://evil.example/x/trace.json",
        "/etc/x/trace.json",
        "../x/trace.json",
        "c:x/trace.json",
    ] {
        let mut r = sample();
        r.trails[0].trace = Some(off.into());
        assert!(!render_html(&r).contains("class=\"open-trace\""), "{off}");
    }
}

#[test]
fn trace_js_is_the_parsed_json_in_one_call_and_a_file_that_is_not_json_gets_none() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("sign-in");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(session.join("trace.json"), trace().to_string()).unwrap();
    let js = write_trace_js(&session.join("trace.json")).unwrap();
    let text = std::fs::read_to_string(&js).unwrap();
    let body = text
        .strip_prefix("trailblazeTrace(\"sign-in\", ")
        .and_then(|b| b.strip_suffix(");\n"))
        .expect(&text);
    assert_eq!(serde_json::from_str::<Value>(body).unwrap(), trace());
    // Code in place of JSON is refused, at its line and column, and no trace.js is written.
    std::fs::write(session.join("trace.json"), "{}); alert(1); ({").unwrap();
    std::fs::remove_file(&js).unwrap();
    let err = write_trace_js(&session.join("trace.json")).unwrap_err();
    assert!(matches!(err, RebuildError::Json { line: 1, .. }), "{err}");
    assert!(!js.exists());
}

#[test]
fn a_run_folder_gets_its_report_html_again_and_each_trace_its_trace_js() {
    let dir = tempfile::tempdir().unwrap();
    let report = with_trace();
    super::super::write_all(&report, dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("sign-in")).unwrap();
    std::fs::write(dir.path().join("sign-in/trace.json"), trace().to_string()).unwrap();
    std::fs::remove_file(dir.path().join("report.html")).unwrap();
    let built = rebuild(dir.path()).unwrap();
    assert!(!built.session);
    assert!(std::fs::read_to_string(&built.html).unwrap().contains("open-trace"));
    assert_eq!(built.trace_js, vec![dir.path().join("sign-in/trace.js")]);
    // Current: not written again.
    assert!(rebuild(dir.path()).unwrap().trace_js.is_empty());
    // A bad report.json is placed at its line and column.
    std::fs::write(dir.path().join("report.json"), "{\n  \"trails\": [,]\n}").unwrap();
    let err = rebuild(dir.path()).unwrap_err().to_string();
    assert!(err.contains("report.json:2:"), "{err}");
    // A folder that is neither says so.
    let empty = tempfile::tempdir().unwrap();
    let err = rebuild(empty.path()).unwrap_err().to_string();
    assert!(err.contains("neither a run folder"), "{err}");
}

#[test]
fn a_session_folder_gets_a_report_of_its_one_trail_from_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("trace.json"), trace().to_string()).unwrap();
    let r = session_report(dir.path()).unwrap();
    assert_eq!(r.trails.len(), 1);
    let t = &r.trails[0];
    assert_eq!(t.trace.as_deref(), Some("trace.json"));
    assert_eq!(t.outcome, Outcome::Failed);
    let s = &t.steps[0];
    assert_eq!((s.number, s.started_ms), (1, 10.0));
    assert_eq!(s.screen.as_deref(), Some("trace/b.svg"));
    // The nested call is inside its parent, not beside it.
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.calls[0].calls[0].tool, "tapOnElementBySelector");
    assert_eq!(s.calls[0].calls[0].tap, Some(Point { x: 5, y: 6 }));
    let built = rebuild(dir.path()).unwrap();
    assert!(built.session);
    let html = std::fs::read_to_string(built.html).unwrap();
    parse_xhtml(&html);
    assert!(html.contains("data-dir=\"\""));
}

#[test]
fn an_export_takes_each_steps_screen_after_it_and_none_that_leaves_the_folder() {
    let mut t = trace();
    assert_eq!(step_screens(&t)[0].screen, "trace/b.svg");
    t["frames"][1]["screen"] = json!("../../etc/passwd");
    assert!(step_screens(&t).is_empty());
}
