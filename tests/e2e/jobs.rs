//! Many devices at once (`run --jobs`, device pools): `--jobs 1` and `--jobs 4` give the same
//! report; a pool of fake phones never has two trails on one phone; a phone lost mid-trail sends
//! its trail to another phone and leaves the pool; with no phone left the rest is `error`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use serde_json::Value;
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::{Fixture, in_dir, text};

// `--shard` and `merge`: shards give the unsharded outcomes; shard folders are untrusted input.
mod shards;
// `--jobs` on the web: real Chromium, a context per trail, a browser lost mid-run.
mod web;

/// The demo with each of its trails copied `copies` times: `3 × copies` trails.
fn demo_times(copies: usize) -> Fixture {
    let f = Fixture::demo();
    let trails = f.map_dir().join("trails");
    let names: Vec<_> = std::fs::read_dir(&trails)
        .expect("trails")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".trail.yaml"))
        .collect();
    for path in &names {
        let body = std::fs::read_to_string(path).expect("trail");
        let stem = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .trim_end_matches(".trail.yaml");
        for n in 2..=copies {
            std::fs::write(trails.join(format!("{stem}-copy{n}.trail.yaml")), &body).expect("copy");
        }
    }
    f
}

fn secrets(f: &Fixture) -> String {
    f.root().join("demo/demo.secrets").display().to_string()
}

/// `report.json` of `dir`.
fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON")
}

/// The report without what differs between runs of the same trails: times, the devices, and a web
/// page's address (each session serves the trailmap's site on a port of its own).
fn comparable(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.ends_with("_ms") && k != "device" && k != "page");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn run(f: &Fixture, extra: &[&str]) -> (std::process::Output, String, String) {
    let pw = secrets(f);
    let mut args = vec!["run", "--secrets", &pw];
    args.extend_from_slice(extra);
    let o = in_dir(f, f.dir.path(), &args);
    let (out, err) = text(&o);
    (o, out, err)
}

/// Puts `(<stem>) ` before every step's text in each trail of `f`: each output line of a step then
/// names the trail it belongs to.
fn mark_steps(f: &Fixture) {
    for e in std::fs::read_dir(f.map_dir().join("trails")).expect("trails").flatten() {
        let path = e.path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".trail.yaml"))
        else {
            continue;
        };
        let body = std::fs::read_to_string(&path).expect("trail");
        let marked = body
            .replace("step: ", &format!("step: ({stem}) "))
            .replace("verify: ", &format!("verify: ({stem}) "));
        std::fs::write(&path, marked).expect("write");
    }
}

/// Checks that each trail's lines come together in `out`: after its header `trail ID (FILE)` every
/// indented line until the next unindented one is one of its own steps (marked by [`mark_steps`]).
/// The number of groups, or the first line found in another trail's group.
fn own_lines_only(out: &str) -> Result<usize, String> {
    let mut group: Option<String> = None;
    let mut groups = 0;
    // The report's paths after the summary are indented too: the trails' lines end before them.
    for line in out.lines().take_while(|l| !l.starts_with("report: ")) {
        if let Some(header) = line.strip_prefix("trail ") {
            let file = header.rsplit_once(" (").map_or("", |(_, f)| f.trim_end_matches(')'));
            let stem = file
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .trim_end_matches(".trail.yaml");
            group = Some(format!("({stem}) "));
            groups += 1;
        } else if line.starts_with("  ") {
            match &group {
                Some(mark) if line.contains(mark.as_str()) => {}
                Some(mark) => return Err(format!("in the group of {mark}: {line}")),
                None => return Err(format!("outside any trail's group: {line}")),
            }
        } else {
            group = None;
        }
    }
    Ok(groups)
}

#[test]
fn each_trails_lines_are_its_own_and_the_check_sees_a_stray_line() {
    let out = "trail demo/a (t/a.trail.yaml)\n  ✓ step 1 (a) x\n  ✓ step 2 (a) y\ntrail demo/b (t/b.trail.yaml)\n  ✓ step 1 (b) x\n2 passed\n";
    assert_eq!(own_lines_only(out), Ok(2));
    // A line of `b` in `a`'s group, as interleaved output would have it.
    let stray = out.replace("  ✓ step 2 (a) y", "  ✓ step 1 (b) x");
    assert!(own_lines_only(&stray).is_err_and(|e| e.contains("(a)")), "{stray}");
}

#[test]
fn jobs_1_and_jobs_4_on_the_sim_give_the_same_outcomes_steps_and_recordings() {
    let f = demo_times(3);
    mark_steps(&f);
    let (one, four) = (f.dir.path().join("one"), f.dir.path().join("four"));
    let (o, out, err) = run(&f, &["--jobs", "1", "--report-dir", one.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let (o, out4, err) = run(&f, &["--jobs", "4", "--report-dir", four.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{out4}{err}");
    assert!(out4.contains("9 passed, 0 failed"), "{out4}");
    let (a, b) = (report(&one), report(&four));
    let files: Vec<&str> = b["trails"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["file"].as_str())
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted, "the report lists trails in trail order");
    assert!(
        b["trails"][0]["steps"][1]["calls"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "steps with calls"
    );
    assert_eq!(
        comparable(a.clone()),
        comparable(b.clone()),
        "the same outcomes, steps, calls and screens"
    );
    assert!(
        b["trails"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["device"] == "sim"),
        "{b}"
    );
    // Each trail's lines come together: its header is followed by its own steps only.
    assert_eq!(own_lines_only(&out4), Ok(9), "{out4}");
    // Control: the comparison sees a difference when there is one (a trail that fails).
    let broken = f.map_dir().join("trails/sign-in-copy3.trail.yaml");
    let body = std::fs::read_to_string(&broken)
        .expect("trail")
        .replace("Inbox", "Outbox");
    std::fs::write(&broken, body).expect("write");
    let other = f.dir.path().join("other");
    let (o, ..) = run(
        &f,
        &[
            "--no-check",
            "--jobs",
            "4",
            "--report-dir",
            other.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_ne!(comparable(report(&other)), comparable(a));
}

/// Runs `uiautomator dump` on `serial` over the adb protocol, by hand.
fn raw_dump(addr: std::net::SocketAddr, serial: &str) {
    let Ok(mut c) = TcpStream::connect(addr) else { return };
    let send = |c: &mut TcpStream, req: &str| c.write_all(format!("{:04x}{req}", req.len()).as_bytes());
    let mut okay = [0u8; 4];
    if send(&mut c, &format!("host:transport:{serial}")).is_err() || c.read_exact(&mut okay).is_err() {
        return;
    }
    let _ = send(&mut c, "shell:uiautomator dump /sdcard/x.xml");
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
}

#[test]
fn a_pool_of_phones_runs_one_trail_per_phone_at_a_time() {
    let fake = FakeAdb::demo_many(&["phone-a", "phone-b"]);
    for d in fake.devices() {
        d.set_dump_delay(std::time::Duration::from_millis(20));
    }
    let server = fake.addr().to_string();
    let f = demo_times(2);
    let dir = f.dir.path().join("pool");
    let (o, out, err) = run(
        &f,
        &[
            "--device",
            "android:phone-a",
            "--device",
            "android:phone-b",
            "--adb-server",
            &server,
            "--jobs",
            "4",
            "--report-dir",
            dir.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("6 passed, 0 failed"), "{out}");
    let r = report(&dir);
    let used: Vec<&str> = r["trails"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["device"].as_str())
        .collect();
    assert_eq!(used.len(), 6, "every trail names its device: {r}");
    assert!(
        used.contains(&"android:phone-a") && used.contains(&"android:phone-b"),
        "{used:?}"
    );
    assert_eq!(r["device"], "android:phone-a, android:phone-b");
    for d in fake.devices() {
        assert_eq!(d.most_at_once(), 1, "{} ran two trails' commands at once", d.serial());
    }
    // `android:all` is every ready phone of the server.
    let all = f.dir.path().join("all");
    let (o, out, err) = run(
        &f,
        &[
            "--device",
            "android:all",
            "--adb-server",
            &server,
            "--report-dir",
            all.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert_eq!(report(&all)["device"], "android:phone-a, android:phone-b");
    // Control: the check sees two clients on one phone at once.
    let control = FakeAdb::demo_many(&["phone-c"]);
    control.set_dump_delay(std::time::Duration::from_millis(300));
    let addr = control.addr();
    std::thread::scope(|s| {
        s.spawn(|| raw_dump(addr, "phone-c"));
        s.spawn(|| raw_dump(addr, "phone-c"));
    });
    assert_eq!(
        control.most_at_once(),
        2,
        "two dumps of 300 ms started together overlap"
    );
}

#[test]
fn a_phone_lost_mid_trail_leaves_the_pool_and_its_trail_runs_again_elsewhere() {
    let fake = FakeAdb::demo_many(&["phone-a", "phone-b"]);
    fake.device("phone-b").drop_on("uiautomator dump");
    let server = fake.addr().to_string();
    let f = demo_times(2);
    let dir = f.dir.path().join("lost");
    let (o, out, err) = run(
        &f,
        &[
            "--device",
            "android:all",
            "--adb-server",
            &server,
            "--report-dir",
            dir.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "every trail passed in the end: {out}{err}");
    assert!(fake.device("phone-b").is_gone());
    assert!(
        err.contains("warning: device android:phone-b was lost") && err.contains("runs again"),
        "{err}"
    );
    let r = report(&dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 6);
    let moved: Vec<&Value> = trails
        .iter()
        .filter(|t| t["lost_devices"] == serde_json::json!(["android:phone-b"]))
        .collect();
    assert_eq!(moved.len(), 1, "one trail was on phone-b when it went: {r}");
    assert_eq!(moved[0]["device"], "android:phone-a");
    assert!(
        trails
            .iter()
            .all(|t| t["outcome"]["status"] == "passed" && t["device"] == "android:phone-a"),
        "{r}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).expect("html");
    assert!(
        html.contains("android:phone-b</code> was lost"),
        "the report names the lost device"
    );
}

#[test]
fn with_every_phone_lost_the_trails_left_are_errors_never_skipped() {
    let fake = FakeAdb::demo_many(&["phone-a", "phone-b"]);
    for d in fake.devices() {
        d.drop_on("uiautomator dump");
    }
    let server = fake.addr().to_string();
    let f = demo_times(2);
    let dir = f.dir.path().join("gone");
    let (o, out, err) = run(
        &f,
        &[
            "--device",
            "android:phone-a",
            "--device",
            "android:phone-b",
            "--adb-server",
            &server,
            "--report-dir",
            dir.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "a device error: {out}{err}");
    let r = report(&dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 6, "every trail is reported: {r}");
    assert!(trails.iter().all(|t| t["outcome"]["status"] == "error"), "{r}");
    assert!(
        trails.iter().any(|t| t["error"]
            .as_str()
            .is_some_and(|e| e.contains("no device of the pool is left"))),
        "{r}"
    );
}

#[test]
fn devices_lists_the_sim_without_an_adb_server_and_says_why_there_are_no_phones() {
    let f = Fixture::demo();
    // A port nothing listens on: bind one, then free it.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port");
    let o = in_dir(&f, f.dir.path(), &["devices", "--adb-server", &free.to_string()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("sim\t") && out.contains("\nweb\t"), "{out}");
    assert!(err.contains("cannot be reached"), "{err}");
    // Control: with a server, its phones are listed and there is no such note.
    let fake = FakeAdb::demo_many(&["phone-a", "phone-b"]);
    let o = in_dir(&f, f.dir.path(), &["devices", "--adb-server", &fake.addr().to_string()]);
    let (out, err) = text(&o);
    assert!(
        out.contains("android:phone-a\tdevice") && out.contains("android:phone-b\tdevice"),
        "{out}"
    );
    assert!(!err.contains("cannot be reached"), "{err}");
}

#[test]
fn a_phone_that_stops_answering_cannot_hang_a_pooled_run() {
    let fake = FakeAdb::demo_many(&["phone-a", "phone-b"]);
    // phone-b takes every command and never answers (within the test's life).
    fake.device("phone-b").set_delay(std::time::Duration::from_secs(3600));
    let server = fake.addr().to_string();
    let f = demo_times(2);
    let dir = f.dir.path().join("silent");
    let pw = secrets(&f);
    let bin = trailblaze_e2e::trailblaze_bin();
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(bin)
        .current_dir(f.dir.path())
        .args([
            "run",
            "--secrets",
            &pw,
            "--device",
            "android:phone-a",
            "--device",
            "android:phone-b",
        ])
        .args(["--adb-server", &server, "--wall-timeout", "1", "--report-dir"])
        .arg(&dir)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("trailblaze runs");
    // Far above what the run needs (each silent call ends at its 1 s budget), far below forever.
    let until = started + std::time::Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let o = child.wait_with_output().expect("output");
    let (out, err) = text(&o);
    let took = started.elapsed();
    let status = status.unwrap_or_else(|| panic!("the run hung on the silent phone:\n{out}{err}"));
    // The call's wall-clock budget (1 s) bounds the wait, not adb's 30 s per command: the whole run
    // (six short trails, one silent call, a 5 s probe) stays well inside one such timeout.
    assert!(
        took < std::time::Duration::from_secs(29),
        "the silent phone held the run for {took:?}"
    );
    let r = report(&dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 6, "every trail is reported: {r}");
    // The silent phone's trail ran again on the phone that answers, and it left the pool.
    assert_eq!(status.code(), Some(0), "{out}{err}");
    assert!(err.contains("device android:phone-b was lost"), "{err}");
    assert!(
        trails
            .iter()
            .all(|t| t["outcome"]["status"] == "passed" && t["device"] == "android:phone-a"),
        "{r}"
    );
}

/// A tool that holds its trail's device for `seconds` and says when it began and ended, by
/// the wall clock: the trails' intervals show how many ran at once.
const STAMP: &str = "import { trailblaze } from \"@trailblaze/scripting\";\n\
/** Waits `seconds` on the device; when it started and ended (ms since the epoch). */\n\
export const stamp = trailblaze.tool<{ seconds: number }, { start: number; end: number }>(async (input, ctx) => {\n\
  const start = Date.now();\n\
  await ctx.tools.wait({ timeToWaitInSeconds: input.seconds });\n\
  return { start, end: Date.now() };\n\
});\n";

/// The most intervals `(start, end)` open at one moment (one that ends as another starts: apart).
fn most_at_once(intervals: &[(u64, u64)]) -> usize {
    let mut edges: Vec<(u64, i32)> = intervals.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]).collect();
    // Ends before starts at the same millisecond.
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

#[test]
fn jobs_n_runs_n_trails_at_once_as_the_trails_own_clocks_measure() {
    let f = Fixture::demo();
    let map = std::fs::read_to_string(f.map_dir().join("trailmap.yaml")).expect("trailmap.yaml");
    f.file(
        "trailmap.yaml",
        &map.replace("tools: [signIn,", "tools: [stamp, signIn,"),
    )
    .tool("stamp", STAMP);
    for i in 0..6 {
        f.file(
            &format!("held/held-{i}.trail.yaml"),
            &format!(
                "config:\n  id: demo/held-{i}\n  target: demo\ntrail:\n  - step: Hold the device\n    recording:\n      tools:\n        - stamp: {{ seconds: 1 }}\n"
            ),
        );
    }
    let held_dir = f.map_dir().join("held");
    for jobs in ["1", "2", "3"] {
        let dir = f.dir.path().join(format!("jobs-{jobs}"));
        let (o, out, err) = run(
            &f,
            &[
                held_dir.to_str().unwrap_or_default(),
                "--jobs",
                jobs,
                "--screenshots",
                "none",
                "--report-dir",
                dir.to_str().unwrap_or_default(),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        let r = report(&dir);
        let mut held = Vec::new();
        for t in r["trails"].as_array().into_iter().flatten() {
            let Some(log) = t["log"].as_str() else { continue };
            let text = std::fs::read_to_string(dir.join(log)).expect("log.jsonl");
            for line in text.lines() {
                let e: Value = serde_json::from_str(line).expect("a JSON line");
                if e["event"] == "step_finished" && e["tool"] == "stamp" {
                    let at = |k: &str| e["result"][k].as_u64().expect("a time");
                    held.push((at("start"), at("end")));
                }
            }
        }
        assert_eq!(held.len(), 6, "each held trail stamped once: {r}");
        let n: usize = jobs.parse().expect("a number");
        assert_eq!(most_at_once(&held), n, "--jobs {jobs}: {held:?}");
    }
    // Control: the measure counts what overlaps, and only that.
    assert_eq!(most_at_once(&[(0, 10), (10, 20), (20, 30)]), 1);
    assert_eq!(most_at_once(&[(0, 10), (5, 20), (6, 7), (30, 40)]), 3);
}

#[test]
fn a_terminal_gets_a_live_status_line_and_a_pipe_does_not() {
    let has_script = std::process::Command::new("script").arg("--version").output().is_ok();
    if !has_script && trailblaze_e2e::missing_tool("script", "bsdutils") {
        return;
    }
    let f = demo_times(3);
    let bin = trailblaze_e2e::trailblaze_bin();
    let line = format!(
        "{} run --secrets {} --jobs 2 --screenshots none",
        bin.display(),
        secrets(&f)
    );
    // `script` gives the run a terminal of its own.
    let o = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(f.dir.path())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env_remove("TRAILBLAZE_DEVICE")
        .output()
        .expect("script runs");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    // The status line's count is the jobs at work (trails running at once are measured by
    // `jobs_n_runs_n_trails_at_once_as_the_trails_own_clocks_measure`).
    assert!(out.contains("trails done, 2 running"), "{out}");
    assert!(out.contains("9/9 trails done, 0 running"), "{out}");
    assert!(out.contains("9 passed, 0 failed"), "{out}");
    // Control: the same run into a pipe (a CI log) has the trails' lines alone.
    let (o, out, err) = run(&f, &["--jobs", "2", "--screenshots", "none"]);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("9 passed, 0 failed"), "{out}");
    assert!(
        !out.contains("trails done") && !err.contains("trails done"),
        "{out}{err}"
    );
}
