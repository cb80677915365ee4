//! Traces (docs/trace.md) on the simulated device: a failing selector's trace holds the tree it
//! searched and the nearest nodes, a scripted tool's calls nest with their console and time split,
//! `retain-on-failure` keeps only failing trails' traces, `off` writes none, and a secret typed in a
//! trail is in no trace file in any encoding.

use std::path::{Path, PathBuf};

use serde_json::Value;
use trailblaze::RunOptions;
use trailblaze::trace::{TracePolicy, TraceSettings};

use super::report::{fixture, opts, run, trail_text, write};

/// The password the report fixture's runs are given as the secret `PW`.
const PASSWORD: &str = "hunter2";

fn traced(f: &trailblaze_e2e::Fixture, trace: TracePolicy) -> RunOptions {
    RunOptions {
        trace: TraceSettings {
            trace,
            video: TracePolicy::Off,
        },
        ..opts(f)
    }
}

fn read_trace(dir: &Path, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(rel)).expect("trace.json")).expect("JSON")
}

/// A trail that signs in, then taps `label` (a selector that may match nothing).
fn tapping(f: &trailblaze_e2e::Fixture, name: &str, label: &str) -> PathBuf {
    tapping_as(f, name, "jane@example.com", label)
}

fn tapping_as(f: &trailblaze_e2e::Fixture, name: &str, email: &str, label: &str) -> PathBuf {
    let steps = format!(
        "  - step: Open it\n    recording:\n      tools:\n        - tapOnElementBySelector:\n            nodeSelector:\n              androidAccessibility:\n                textRegex: \"{label}\"\n"
    );
    write(f, name, &trail_text("", email, &steps))
}

#[test]
fn a_failing_selectors_trace_holds_the_tree_it_searched_and_the_nearest_nodes() {
    let f = fixture();
    // "Inbox" is on the screen after signing in; "Inbx" is not, but it is like it.
    let file = tapping(&f, "miss.trail.yaml", "Inbx");
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let trail = &out.report.trails[0];
    assert_eq!(trail.outcome, trailblaze::report::Outcome::Failed);
    let t = read_trace(&out.dir, trail.trace.as_deref().expect("a trace is named"));
    let calls = t["calls"].as_array().expect("calls");
    let miss = calls.iter().find(|c| c["ok"] == false).expect("the failing call");
    assert_eq!(miss["tool"], "tapOnElementBySelector");
    let target = &miss["target"];
    assert!(target["matched"].is_null(), "{target}");
    assert_eq!(target["selector"]["androidAccessibility"]["textRegex"], "Inbx");
    let candidates = target["candidates"].as_array().expect("candidates");
    assert!(!candidates.is_empty());
    assert!(
        candidates[0]["text"].as_str().is_some_and(|t| t.contains("\"Inbox\"")),
        "the nearest node is the Inbox title: {candidates:?}"
    );
    // The tree it searched: the frame before the call, holding that candidate by ref and bounds.
    let before = miss["before"].as_u64().expect("a frame before") as usize;
    let frame = &t["frames"][before];
    let tree = &t["trees"][frame["tree"].as_str().expect("tree id")];
    let r = candidates[0]["ref"].as_str().expect("ref");
    assert!(
        tree["text"]
            .as_str()
            .is_some_and(|text| text.contains(&format!("[{r}]")))
    );
    let node = tree["nodes"].as_array().expect("nodes").iter().find(|n| n["ref"] == r);
    assert_eq!(node.map(|n| &n["bounds"]), Some(&candidates[0]["bounds"]));
    assert!(
        out.dir
            .join(trail.log.clone().expect("log"))
            .with_file_name("trace")
            .is_dir()
    );
    assert!(
        out.dir
            .join(trail.trace.as_deref().unwrap_or_default())
            .with_file_name("trace.js")
            .is_file()
    );
    let screen = frame["screen"].as_str().expect("a picture of it");
    let dir = out.dir.join(trail.trace.as_deref().unwrap_or_default());
    assert!(dir.with_file_name(screen).is_file(), "{screen}");
    // The step that failed names this call; the passing trailhead's calls are the scripted tool's.
    let steps = t["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    assert!(steps[1]["calls"].as_array().is_some_and(|c| c.contains(&miss["seq"])));
    assert_eq!(steps[1]["outcome"]["status"], "failed");

    // Positive control: the same tap on a node that is there matches it, with its bounds and point.
    let f = fixture();
    let file = tapping(&f, "hit.trail.yaml", "Inbox");
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let trail = &out.report.trails[0];
    let t = read_trace(&out.dir, trail.trace.as_deref().expect("a trace"));
    let hit = t["calls"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["seq"] == t["steps"][1]["calls"][0]).cloned())
        .expect("the tap");
    assert!(hit["target"]["matched"]["ref"].is_string(), "{hit}");
    assert!(hit["target"].get("candidates").is_none());
    assert!(hit["point"]["x"].is_i64());
}

#[test]
fn a_scripted_tools_calls_nest_under_it_with_the_time_split() {
    let f = fixture();
    let file = tapping(&f, "nested.trail.yaml", "Inbox");
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let t = read_trace(&out.dir, out.report.trails[0].trace.as_deref().expect("trace"));
    let calls = t["calls"].as_array().expect("calls");
    let script = calls
        .iter()
        .find(|c| c["tool"] == "signInWith")
        .expect("the scripted tool");
    let nested: Vec<&Value> = calls.iter().filter(|c| c["parent"] == script["seq"]).collect();
    assert_eq!(nested.len(), 4, "launch, two fields, the tap");
    assert!(nested.iter().all(|c| c["depth"] == 1));
    // The placeholder, never the value.
    assert!(nested.iter().any(|c| c["args"]["text"] == "{{secret:PW}}"));
    for c in calls {
        let time = &c["time"];
        for k in ["device_ms", "script_ms", "wait_ms"] {
            assert!(time[k].as_f64().is_some_and(|v| v >= 0.0), "{c}");
        }
        let parts: f64 = ["device_ms", "script_ms", "wait_ms"]
            .iter()
            .map(|k| time[*k].as_f64().unwrap_or(0.0))
            .sum();
        // The split never adds up to more than the call took (rounding aside).
        assert!(parts <= c["duration_ms"].as_f64().unwrap_or(0.0) + 0.05, "{c}");
    }
    // Each nested call has a screen before and after; a tap changes it.
    assert!(nested.iter().all(|c| c["before"].is_u64() && c["after"].is_u64()));
    let tap = nested
        .iter()
        .find(|c| c["tool"] == "tapOnElementBySelector")
        .expect("tap");
    assert_ne!(tap["before"], tap["after"]);
}

#[test]
fn retain_on_failure_keeps_only_the_failing_trails_trace_and_off_keeps_none() {
    let f = fixture();
    let pass = tapping(&f, "pass.trail.yaml", "Inbox");
    let fail = tapping(&f, "fail.trail.yaml", "Nowhere");
    let out = run(
        &f,
        &[pass.clone(), fail.clone()],
        traced(&f, TracePolicy::RetainOnFailure),
    );
    let (p, x) = (&out.report.trails[0], &out.report.trails[1]);
    assert_eq!(p.trace, None);
    assert!(!out.dir.join("pass/trace.json").exists());
    assert!(!out.dir.join("pass/trace").exists());
    assert_eq!(x.trace.as_deref(), Some("fail/trace.json"));
    assert!(out.dir.join("fail/trace.json").is_file());
    let report = super::report::report_json(&out);
    assert_eq!(report["trails"][1]["trace"], "fail/trace.json");
    assert!(report["trails"][0].get("trace").is_none());

    // Off: nothing, for either.
    let out = run(&f, &[pass.clone(), fail.clone()], traced(&f, TracePolicy::Off));
    assert!(out.report.trails.iter().all(|t| t.trace.is_none()));
    assert!(!out.dir.join("fail/trace.json").exists());
    // Control: on keeps both.
    let out = run(&f, &[pass, fail], traced(&f, TracePolicy::On));
    assert!(out.report.trails.iter().all(|t| t.trace.is_some()));
}

/// Every way a value could be written down in a file: as it is, JSON- and URL-escaped, base64,
/// hex, UTF-16.
pub fn encodings(secret: &str) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    let mut out = vec![secret.as_bytes().to_vec()];
    let b64 = base64::engine::general_purpose::STANDARD;
    out.push(b64.encode(secret).trim_end_matches('=').as_bytes().to_vec());
    out.push(
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(secret)
            .into_bytes(),
    );
    out.push(
        secret
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into_bytes(),
    );
    out.push(
        secret
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<String>()
            .into_bytes(),
    );
    out.push(secret.encode_utf16().flat_map(|u| u.to_le_bytes()).collect());
    out.push(secret.encode_utf16().flat_map(|u| u.to_be_bytes()).collect());
    out
}

/// The files under `dir` holding `secret` in any of its [`encodings`].
pub fn files_holding(dir: &Path, secret: &str) -> Vec<PathBuf> {
    let forms = encodings(secret);
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(bytes) = std::fs::read(&p)
                && forms.iter().any(|f| bytes.windows(f.len()).any(|w| w == f.as_slice()))
            {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn a_secret_typed_in_a_trail_is_in_no_trace_file_in_any_encoding() {
    let f = fixture();
    // Typed into the email field too, which shows its text (the password field shows dots).
    let file = tapping_as(&f, "secret.trail.yaml", "{{secret:PW}}", "Demo Mail");
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let trail = &out.report.trails[0];
    let dir = out.dir.join(trail.trace.as_deref().expect("trace")).with_file_name("");
    assert!(dir.join("trace.json").is_file());
    assert_eq!(files_holding(&dir, PASSWORD), Vec::<PathBuf>::new());
    // Control: the search finds the secret in each encoding once it is written down.
    let probe = tempfile::tempdir().expect("tmp");
    for (i, form) in encodings(PASSWORD).into_iter().enumerate() {
        std::fs::write(probe.path().join(format!("{i}.bin")), [b"x".as_slice(), &form].concat()).expect("w");
    }
    assert_eq!(files_holding(probe.path(), PASSWORD).len(), encodings(PASSWORD).len());
}

#[test]
fn merge_keeps_each_shards_traces_with_their_pictures() {
    let f = fixture();
    let a = tapping(&f, "a.trail.yaml", "Nowhere");
    let b = tapping(&f, "b.trail.yaml", "Inbox");
    let shard = |i: usize, file: &PathBuf, dir: &str| {
        let opts = RunOptions {
            report_dir: Some(f.out().join(dir)),
            shard: Some(trailblaze::report::Shard { index: i, total: 2 }),
            ..traced(&f, TracePolicy::On)
        };
        run(&f, std::slice::from_ref(file), opts).dir
    };
    let dirs = vec![shard(1, &a, "s1"), shard(2, &b, "s2")];
    let merged = f.out().join("merged");
    let m = trailblaze::report::merge(&dirs, &merged).expect("merges");
    for t in &m.report.trails {
        let rel = t.trace.as_deref().expect("each trail keeps its trace");
        let json = merged.join(rel);
        let trace: Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("trace")).expect("JSON");
        assert!(json.with_file_name("trace.js").is_file());
        for frame in trace["frames"].as_array().expect("frames") {
            let screen = frame["screen"].as_str().expect("screen");
            assert!(json.with_file_name(screen).is_file(), "{screen} copied beside {rel}");
        }
    }
    // Control: the shards' folders held them (the merge did not make them up).
    assert!(dirs[0].join("a/trace.json").is_file());
}

#[test]
fn an_android_trails_trace_holds_the_phones_log_for_its_time() {
    let fake = trailblaze_e2e::fake_adb::FakeAdb::demo("emulator-5554");
    // Logged before the trail: outside its window.
    fake.phone().log('E', "Earlier", "a crash before the run");
    std::thread::sleep(std::time::Duration::from_millis(30));
    let server = fake.addr().to_string();
    let args = [
        "--secrets",
        "trailmaps/demo/demo.secrets",
        "--device",
        "android:emulator-5554",
    ];
    let (_, t, _keep) = cli_run(
        &[&args[..], &["--adb-server", &server, "--trace", "on"]].concat(),
        &[],
        "trailmaps/demo/trails/sign-in.trail.yaml",
    );
    let lines = t["device_log"].as_array().expect("device_log");
    // The launch the trail made, as the phone logged it, with the tag parsed and a host time.
    let launch = lines
        .iter()
        .find(|l| l["source"] == "ActivityManager")
        .unwrap_or_else(|| panic!("the launch is in the window: {lines:?} {}", t["notes"]));
    assert_eq!(launch["level"], "I");
    let start = t["started_unix_ms"].as_f64().expect("start");
    let at = launch["unix_ms"].as_f64().expect("time");
    assert!(at >= start - 1000.0 && at <= start + 60_000.0, "{at} vs {start}");
    // Control: the line logged before the run is not.
    assert!(lines.iter().all(|l| l["source"] != "Earlier"), "{lines:?}");
    assert_eq!(
        t["device"].as_str().map(|d| d.contains("emulator-5554")),
        Some(true),
        "{}",
        t["device"]
    );
}

#[test]
fn a_text_tools_miss_is_traced_with_the_nearest_nodes_too() {
    let f = fixture();
    let steps = "  - step: Open it\n    recording:\n      tools:\n        - tapOnElementWithText: { text: \"Inbx\" }\n";
    let file = write(&f, "text.trail.yaml", &trail_text("", "jane@example.com", steps));
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let t = read_trace(&out.dir, out.report.trails[0].trace.as_deref().expect("trace"));
    let miss = t["calls"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["ok"] == false).cloned())
        .expect("a miss");
    assert_eq!(miss["tool"], "tapOnElementWithText", "{miss}");
    // The pattern as the tool matched it.
    assert!(
        miss["target"]["selector"]["text"]
            .as_str()
            .is_some_and(|p| p.contains("Inbx")),
        "{miss}"
    );
    assert!(miss["target"]["matched"].is_null());
    let first = &miss["target"]["candidates"][0]["text"];
    assert!(first.as_str().is_some_and(|t| t.contains("Inbox")), "{first}");
}

#[test]
fn a_web_trails_trace_holds_its_requests_as_a_valid_har_and_no_secret() {
    trailblaze_e2e::web_site::require_chromium();
    let root = trailblaze_e2e::repo_root();
    let (report, t, _keep) = cli_run(
        &["--secrets", "trailmaps/web-demo/web-demo.secrets", "--trace", "on"],
        &[],
        "trailmaps/web-demo/trails/sign-in.trail.yaml",
    );
    assert_eq!(t["platform"], "web");
    let requests = t["network"].as_array().expect("network");
    assert!(
        requests
            .iter()
            .any(|e| e["request"]["url"].as_str().is_some_and(|u| u.ends_with("/index.html"))),
        "{requests:?}"
    );
    assert_eq!(t["har"], "network.har");
    let har: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("sign-in/network.har")).expect("har")).expect("JSON");
    let (valid, said) = super::web_trace::har_validator(&har);
    assert!(valid, "{said}");
    // Each web frame showing something is a JPEG of the page, with its tree; the blank page before
    // the first navigation (its tree reads empty) is not pictured.
    let frames = t["frames"].as_array().expect("frames");
    let text_of = |f: &Value| {
        t["trees"][f["tree"].as_str().unwrap_or_default()]["text"]
            .as_str()
            .unwrap_or_default()
    };
    let (blank, shown): (Vec<&Value>, Vec<&Value>) = frames.iter().partition(|f| text_of(f).is_empty());
    assert!(shown.len() >= 3, "{frames:?}");
    assert!(
        shown
            .iter()
            .all(|f| f["screen"].as_str().is_some_and(|s| s.ends_with(".jpg"))),
        "{frames:?}"
    );
    assert!(blank.iter().all(|f| f["screen"].is_null()), "{frames:?}");
    let secret = std::fs::read_to_string(root.join("trailmaps/web-demo/web-demo.secrets"))
        .expect("secrets")
        .lines()
        .find_map(|l| l.strip_prefix("DEMO_WEB_PASSWORD=").map(str::to_string))
        .expect("the demo's secret");
    assert_eq!(files_holding(&report.join("sign-in"), &secret), Vec::<PathBuf>::new());
}

#[test]
fn a_recorded_trace_opens_in_the_viewer_in_chromium_from_file_urls() {
    if super::report_browser::chromium().is_none() {
        return;
    }
    let f = fixture();
    let file = tapping(&f, "viewed.trail.yaml", "Inbx");
    let out = run(&f, &[file], traced(&f, TracePolicy::On));
    let client = trailblaze_e2e::repo_root().join("tests/viewer-client");
    let o = std::process::Command::new("node")
        .arg(client.join("drive.mjs"))
        .arg("real")
        .arg(out.dir.join("report.html"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(v["errors"], serde_json::json!([]), "{v}");
    let requests = v["requests"].as_array().expect("requests");
    assert!(
        requests
            .iter()
            .all(|r| r.as_str().is_some_and(|r| r.starts_with("file:"))),
        "{requests:?}"
    );
    assert!(
        requests
            .iter()
            .any(|r| r.as_str().is_some_and(|r| r.ends_with("viewed/trace.js")))
    );
    let seen = v["seen"].as_array().expect("items");
    // Both steps and every call: each shows a loaded picture of its screen and the tree.
    assert!(seen.len() >= 7, "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| s["loaded"] == true && s["tree"].as_u64().is_some_and(|n| n > 0)),
        "{seen:?}"
    );
    // The miss: its nearest node marked in the tree; a tap that matched: its node and point.
    assert!(
        seen.iter()
            .any(|s| s["candidate"].as_str().is_some_and(|c| c.contains("Inbox"))),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|s| s["matched"].is_string() && s["point"] == true),
        "{seen:?}"
    );
}

/// Runs the web demo's counter trail with `--trace on --video on`, `path` as `PATH`; its trace.
fn web_video(path: &std::ffi::OsStr) -> (PathBuf, Value, tempfile::TempDir) {
    let chromium = trailblaze_e2e::web_site::require_chromium();
    cli_run(
        &["--trace", "on", "--video", "on"],
        &[("PATH", path), ("TRAILBLAZE_CHROMIUM", chromium.as_os_str())],
        "trailmaps/web-demo/trails/counter.trail.yaml",
    )
}

/// `trailblaze run ARGS --report-dir <tmp>/run TRAIL` from the repository's root, `env` set; it must
/// pass. The run folder (kept while the returned folder lives) and the trail's trace.
fn cli_run(args: &[&str], env: &[(&str, &std::ffi::OsStr)], trail: &str) -> (PathBuf, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tmp");
    let report = dir.path().join("run");
    let mut cmd = std::process::Command::new(trailblaze_e2e::trailblaze_bin());
    cmd.current_dir(trailblaze_e2e::repo_root()).arg("run").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.arg("--report-dir").arg(&report).arg(trail).output().expect("runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    let stem = trail
        .rsplit('/')
        .next()
        .and_then(|n| n.strip_suffix(".trail.yaml"))
        .unwrap_or_default();
    let t = read_trace(&report, &format!("{stem}/trace.json"));
    (report, t, dir)
}

#[test]
fn a_web_trails_screencast_is_a_webm_with_ffmpeg_and_frames_with_a_note_without() {
    // Without ffmpeg on PATH: the frames, each a picture, and a note saying why.
    let empty = tempfile::tempdir().expect("tmp");
    let (report, t, _keep) = web_video(empty.path().as_os_str());
    let frames = t["video"]["frames"]
        .as_array()
        .unwrap_or_else(|| panic!("frames: {}", t["video"]));
    assert!(!frames.is_empty());
    for f in frames {
        let file = report.join("counter").join(f["file"].as_str().expect("file"));
        let bytes = std::fs::read(&file).expect("a frame");
        assert_eq!(&bytes[..3], &[0xff, 0xd8, 0xff], "a JPEG");
    }
    assert!(
        t["notes"].to_string().contains("ffmpeg is not on PATH"),
        "{}",
        t["notes"]
    );
    // With it (when this machine has it): one WebM, EBML-headed, which the viewer plays.
    let Some(path) = std::env::var_os("PATH").filter(|p| std::env::split_paths(p).any(|d| d.join("ffmpeg").is_file()))
    else {
        eprintln!("note: no ffmpeg on PATH here; its WebM is not checked");
        return;
    };
    let (report, t, _keep) = web_video(&path);
    assert_eq!(t["video"]["file"], "video.webm", "{}", t["video"]);
    let webm = std::fs::read(report.join("counter/video.webm")).expect("the video");
    assert_eq!(&webm[..4], &[0x1a, 0x45, 0xdf, 0xa3], "an EBML (WebM) file");
    assert!(t["video"]["started_unix_ms"].as_f64().is_some());
}
