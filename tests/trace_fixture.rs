//! A run folder with traces written by hand to docs/trace.md, for the viewer's tests and bench
//! until the recorder writes real ones: a trail that failed (a failing selector step with its
//! nearest candidates, a tap with a point, a scripted call's nested calls, console lines, HAR
//! entries with `_unix_ms`, device log lines, agent turns, video frames) and as many passed trails
//! as asked, each with a small trace.

use std::path::Path;

use serde_json::{Value, json};

/// The failed trail's start, Unix milliseconds.
pub const T0: f64 = 1_765_000_000_000.0;
/// A console line that is markup: the viewer must show it as text.
pub const HOSTILE: &str = "<img src=x onerror=\"window.__xss=1\"> console says hi";
/// The screen's size, device pixels.
pub const SIZE: (i64, i64) = (1080, 2400);

/// A phone-sized SVG screen: a title and a box per `(label, bounds)`.
pub fn screen_svg(title: &str, boxes: &[(&str, [i64; 4])]) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\"><rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/><text x=\"60\" y=\"160\" font-family=\"sans-serif\" font-size=\"64\">{title}</text>",
        SIZE.0, SIZE.1
    );
    for (label, b) in boxes {
        s.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#1a73e8\" rx=\"12\"/><text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"40\" fill=\"#fff\">{label}</text>",
            b[0],
            b[1],
            b[2] - b[0],
            b[3] - b[1],
            b[0] + 30,
            b[1] + 60
        ));
    }
    s + "</svg>"
}

pub const EMAIL: [i64; 4] = [100, 650, 980, 750];
pub const NEXT: [i64; 4] = [100, 900, 980, 1000];
pub const SIGN_IN: [i64; 4] = [40, 1180, 1040, 1240];

fn node(r: &str, parent: Value, class: &str, text: &str, b: [i64; 4]) -> Value {
    json!({ "ref": r, "parent": parent, "class": class, "text": text, "desc": null, "id": null, "bounds": b })
}

fn har(at: f64, method: &str, url: &str, status: i64, body: &str) -> Value {
    json!({
        "_unix_ms": at, "startedDateTime": "2025-12-06T05:46:40.000Z", "time": 42.5,
        "request": { "method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0 },
        "response": { "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
            "content": { "size": body.len(), "mimeType": "application/json", "text": body }, "redirectURL": "", "headersSize": -1, "bodySize": body.len() },
        "cache": {}, "timings": { "send": 0, "wait": 40, "receive": 2.5 }
    })
}

fn line(at: f64, level: &str, source: &str, text: &str) -> Value {
    json!({ "unix_ms": at, "level": level, "source": source, "text": text })
}

/// The failed trail's trace (its screens are written by [`write_session`]).
pub fn failed_trace(session: &str) -> Value {
    let t = |ms: f64| T0 + ms;
    json!({
        "version": 1,
        "trail": { "file": "trailmaps/demo/trails/sign-in.trail.yaml", "id": "demo/sign-in", "title": "Sign in" },
        "session": session, "device": "sim:com.example.demo", "platform": "android",
        "started_unix_ms": T0, "duration_ms": 600.0, "outcome": { "status": "failed" },
        "steps": [
            { "number": 0, "kind": "step", "text": "Launch the app", "line": 3, "outcome": { "status": "passed" },
              "error": null, "started_unix_ms": t(0.0), "duration_ms": 100.0, "calls": [1] },
            { "number": 1, "kind": "step", "text": "Type the email", "line": 5, "outcome": { "status": "passed" },
              "error": null, "started_unix_ms": t(100.0), "duration_ms": 200.0, "calls": [2] },
            { "number": 2, "kind": "step", "text": "Sign in as jane", "line": 8, "outcome": { "status": "failed" },
              "error": "tapOnElementBySelector: no node matches {textRegex: Sign in}", "started_unix_ms": t(300.0),
              "duration_ms": 300.0, "calls": [3, 4, 5] }
        ],
        "calls": [
            { "seq": 1, "parent": null, "depth": 0, "tool": "launchApp", "args": { "appId": "com.example.demo" },
              "ok": true, "error": null, "started_unix_ms": t(1.0), "duration_ms": 90.0,
              "time": { "device_ms": 80.0, "script_ms": 0.0, "wait_ms": 5.0 }, "before": null, "after": 0 },
            { "seq": 2, "parent": null, "depth": 0, "tool": "tapOnElementBySelector",
              "args": { "selector": { "textRegex": "Email" } }, "ok": true, "error": null,
              "started_unix_ms": t(101.0), "duration_ms": 150.0, "time": { "device_ms": 100.0, "script_ms": 0.0, "wait_ms": 20.0 },
              "before": 0, "after": 1, "point": { "x": 540, "y": 700 },
              "target": { "selector": { "textRegex": "Email" }, "matched": { "ref": "e1", "bounds": EMAIL }, "candidates": [] } },
            { "seq": 3, "parent": null, "depth": 0, "tool": "signIn", "args": { "email": "jane@example.com", "password": "{{secret:PASSWORD}}" },
              "ok": false, "error": "tapOnElementBySelector: no node matches {textRegex: Sign in}",
              "started_unix_ms": t(301.0), "duration_ms": 280.0, "time": { "device_ms": 120.0, "script_ms": 30.0, "wait_ms": 60.0 },
              "before": 1, "after": 2,
              "console": [ line(t(305.0), "log", "signIn", "signing in as jane") ] },
            { "seq": 4, "parent": 3, "depth": 1, "tool": "inputText", "args": { "text": "{{secret:PASSWORD}}" },
              "ok": true, "error": null, "started_unix_ms": t(310.0), "duration_ms": 60.0,
              "time": { "device_ms": 50.0, "script_ms": 0.0, "wait_ms": 0.0 }, "before": 1, "after": 1 },
            { "seq": 5, "parent": 3, "depth": 1, "tool": "tapOnElementBySelector", "args": { "selector": { "textRegex": "Sign in" } },
              "ok": false, "error": "tapOnElementBySelector: no node matches {textRegex: Sign in}",
              "started_unix_ms": t(380.0), "duration_ms": 150.0, "time": { "device_ms": 40.0, "script_ms": 0.0, "wait_ms": 100.0 },
              "before": 1, "after": 2,
              "target": { "selector": { "textRegex": "Sign in" }, "matched": null,
                "candidates": [ { "ref": "b2", "bounds": SIGN_IN, "text": "Sign In", "score": 0.93, "why": "text differs in case" } ] } }
        ],
        "frames": [
            { "unix_ms": t(95.0), "tree": "t0", "screen": "trace/s0.svg", "size": { "x": SIZE.0, "y": SIZE.1 } },
            { "unix_ms": t(260.0), "tree": "t1", "screen": "trace/s1.svg", "size": { "x": SIZE.0, "y": SIZE.1 } },
            { "unix_ms": t(590.0), "tree": "t2", "screen": "trace/s2.svg", "size": { "x": SIZE.0, "y": SIZE.1 } }
        ],
        "trees": {
            "t0": { "text": "[a1] FrameLayout\n  [e1] EditText \"Email\"\n  [n1] Button \"Next\"",
                "nodes": [ node("a1", Value::Null, "android.widget.FrameLayout", "", [0, 0, SIZE.0, SIZE.1]),
                           node("e1", json!(0), "android.widget.EditText", "Email", EMAIL),
                           node("n1", json!(0), "android.widget.Button", "Next", NEXT) ] },
            "t1": { "text": "[a1] FrameLayout\n  [e1] EditText \"jane@example.com\"\n  [p1] EditText \"Password\"\n  [b2] Button \"Sign In\"",
                "nodes": [ node("a1", Value::Null, "android.widget.FrameLayout", "", [0, 0, SIZE.0, SIZE.1]),
                           node("e1", json!(0), "android.widget.EditText", "jane@example.com", EMAIL),
                           node("p1", json!(0), "android.widget.EditText", "Password", NEXT),
                           node("b2", json!(0), "android.widget.Button", "Sign In", SIGN_IN) ] },
            "t2": { "text": "[a1] FrameLayout\n  [x1] TextView \"Wrong password\"",
                "nodes": [ node("a1", Value::Null, "android.widget.FrameLayout", "", [0, 0, SIZE.0, SIZE.1]),
                           node("x1", json!(0), "android.widget.TextView", "Wrong password", [60, 400, 1020, 480]) ] }
        },
        "console": [
            line(t(150.0), "log", "page", "config loaded"),
            line(t(305.0), "log", "signIn", "signing in as jane"),
            line(t(400.0), "error", "page", HOSTILE)
        ],
        "network": [
            har(t(150.0), "GET", "https://demo.example/api/config", 200, "{\"flags\":[]}"),
            har(t(320.0), "POST", "https://demo.example/api/login", 500, "{\"error\":\"invalid password for ***\"}"),
            har(t(420.0), "GET", "https://demo.example/api/profile", 200, "{}")
        ],
        "har": "network.har",
        "device_log": [
            line(t(20.0), "I", "ActivityManager", "Start proc com.example.demo"),
            line(t(450.0), "E", "AndroidRuntime", "FATAL EXCEPTION: main")
        ],
        "agent": [
            { "step": 2, "provider": "openai", "model": "gpt-4.1", "turns": [
                { "unix_ms": t(330.0), "duration_ms": 900.0,
                  "request": { "text": "Objective: Sign in as jane\n[b2] Button \"Sign In\"", "image": "trace/s1.svg" },
                  "answer": { "text": "The sign-in button is [b2].", "tool_calls": [ { "tool": "tap", "args": { "ref": "b2" } } ] },
                  "input_tokens": 1290, "output_tokens": 41, "cost_usd": 0.0027 },
                // A picture named off the trace's folder: the viewer must not load it.
                { "unix_ms": t(340.0), "duration_ms": 10.0, "request": { "text": "again", "image": "https://tracker.example/pixel.png" },
                  "answer": { "text": "Done.", "tool_calls": [] }, "input_tokens": 10, "output_tokens": 2 } ] }
        ],
        "video": { "frames": [ { "unix_ms": t(50.0), "file": "trace/v0.svg" }, { "unix_ms": t(350.0), "file": "trace/v1.svg" } ] },
        "notes": [ "screenrecord is not on this device: no video" ]
    })
}

/// A passed trail's small trace: one step, one tap.
pub fn passed_trace(session: &str, start: f64) -> Value {
    json!({
        "version": 1, "trail": { "file": format!("trailmaps/demo/trails/{session}.trail.yaml"), "id": format!("demo/{session}"), "title": session },
        "session": session, "device": "sim", "platform": "android", "started_unix_ms": start, "duration_ms": 50.0,
        "outcome": { "status": "passed" },
        "steps": [ { "number": 1, "kind": "step", "text": "Open the inbox", "line": 3, "outcome": { "status": "passed" },
            "error": null, "started_unix_ms": start, "duration_ms": 50.0, "calls": [1] } ],
        "calls": [ { "seq": 1, "parent": null, "depth": 0, "tool": "tap", "args": { "ref": "n1" }, "ok": true, "error": null,
            "started_unix_ms": start + 1.0, "duration_ms": 40.0, "time": { "device_ms": 30.0, "script_ms": 0.0, "wait_ms": 0.0 },
            "before": 0, "after": 0, "point": { "x": 540, "y": 950 } } ],
        "frames": [ { "unix_ms": start + 45.0, "tree": "t0", "screen": "trace/s0.svg", "size": { "x": SIZE.0, "y": SIZE.1 } } ],
        "trees": { "t0": { "text": "[n1] Button \"Next\"", "nodes": [ node("n1", Value::Null, "android.widget.Button", "Next", NEXT) ] } },
        "console": [], "network": [
            har(start + 10.0, "GET", "https://demo.example/api/inbox", 200, "[]")
        ], "device_log": [], "agent": [],
        // Recording began half a second before the trail: its step is at 0.5 s of the video.
        "video": { "file": "video.mp4", "mime": "video/mp4", "started_unix_ms": start - 500.0 }
    })
}

/// A session folder `dir` with `trace`, its screens and a log; `trace.js` is left to `trailblaze report`.
pub fn write_session(dir: &Path, trace: &Value) {
    std::fs::create_dir_all(dir.join("trace")).expect("trace folder");
    std::fs::write(
        dir.join("trace.json"),
        serde_json::to_string_pretty(trace).expect("json"),
    )
    .expect("trace.json");
    std::fs::write(dir.join("log.jsonl"), "").expect("log.jsonl");
    let screens: [(&str, String); 5] = [
        ("s0.svg", screen_svg("Welcome", &[("Email", EMAIL), ("Next", NEXT)])),
        (
            "s1.svg",
            screen_svg(
                "Sign in",
                &[("jane@example.com", EMAIL), ("Password", NEXT), ("Sign In", SIGN_IN)],
            ),
        ),
        ("s2.svg", screen_svg("Wrong password", &[])),
        ("v0.svg", screen_svg("video 0", &[])),
        ("v1.svg", screen_svg("video 1", &[])),
    ];
    for (name, svg) in screens {
        std::fs::write(dir.join("trace").join(name), svg).expect("screen");
    }
    // No real video here (no encoder): bytes that are not one, so the page finds a file.
    if let Some(video) = trace["video"]["file"].as_str() {
        std::fs::write(dir.join(video), [0u8; 4096]).expect("video");
    }
}

fn report_trail(session: &str, trace: &Value, outcome: &str) -> Value {
    let steps: Vec<Value> = trace["steps"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| json!({ "number": s["number"], "kind": "step", "text": s["text"], "line": s["line"],
                    "outcome": s["outcome"], "duration_ms": s["duration_ms"], "calls": [], "error": s["error"], "screen": null }))
                .collect()
        })
        .unwrap_or_default();
    json!({ "file": trace["trail"]["file"], "id": trace["trail"]["id"], "title": trace["trail"]["title"],
        "outcome": { "status": outcome }, "duration_ms": trace["duration_ms"], "steps": steps, "error": null,
        "log": format!("{session}/log.jsonl"), "trace": format!("{session}/trace.json") })
}

/// A run folder at `dir`: `sign-in` (failed, the full trace) and `passed` more trails named
/// `trail-N`, each with its trace; report.json only (report.html is `trailblaze report`'s).
pub fn write_run(dir: &Path, passed: usize) {
    let mut trails = Vec::new();
    let failed = failed_trace("sign-in");
    write_session(&dir.join("sign-in"), &failed);
    trails.push(report_trail("sign-in", &failed, "failed"));
    for i in 1..=passed {
        let name = format!("trail-{i}");
        let t = passed_trace(&name, T0 + 1000.0 * i as f64);
        write_session(&dir.join(&name), &t);
        trails.push(report_trail(&name, &t, "passed"));
    }
    let report = json!({ "started_unix_ms": T0 as u64, "duration_ms": 1000.0, "device": "sim", "trails": trails });
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_string_pretty(&report).expect("json"),
    )
    .expect("report.json");
}
