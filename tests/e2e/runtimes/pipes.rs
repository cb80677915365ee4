//! No pipe a Node tool writes stalls a deadline or grows the host without bound. Through the real
//! runner: a request or a result past the 16 MiB cap fails its call at once (the worker kept), and
//! a 1 MiB one passes. Through a stand-in for Node (`TRAILBLAZE_NODE`) that writes what the runner
//! never would: an endless line on the `ctx.host` pipe is stopped at the cap, long before the
//! call's deadline; 128 MiB on stdout or stderr leave the CLI's peak memory near a quiet run's; the
//! session serves its next call each time.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use trailblaze_e2e::{Fixture, trailblaze_bin};

use super::{node_processes_of, settings};

const BIG: &str = r#"
import { trailblaze } from "@trailblaze/scripting";
/** A `ctx.host` call with a 32 MiB argument. */
export const bigHost = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  ctx.host.env({ name: "x".repeat(32 << 20) });
  return {};
});
/** A `ctx.tools` call with a 32 MiB argument. */
export const bigTool = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  await ctx.tools.echo({ text: "x".repeat(32 << 20) });
  return {};
});
/** A 17 MiB result. */
export const bigResult = trailblaze.tool<{}, { pad: string }>(async () => ({ pad: "x".repeat(17 << 20) }));
/** 1 MiB to the host (answered: the name is not one it lists), through a nested call and back. */
export const megabyte = trailblaze.tool<{}, { host: string; echoed: number; pad: string }>(async (_i, ctx) => {
  let host = "none";
  try {
    ctx.host.env({ name: "y".repeat(1 << 20) });
  } catch (e) {
    host = (e as Error).message.includes("larger than") ? "refused" : "answered";
  }
  const echoed = (await ctx.tools.echo({ text: "z".repeat(1 << 20) })) as { text: string };
  return { host, echoed: echoed.text.length, pad: "z".repeat(1 << 20) };
});
/** Returns its text. */
export const echo = trailblaze.tool<{ text: string }, { text: string }>(async (input) => ({ text: input.text }));
"#;

#[test]
fn a_message_past_the_cap_fails_its_call_at_once_and_the_worker_serves_the_next() {
    let f = Fixture::new("t");
    f.tool("big", BIG);
    f.file("host/env.host.yaml", "id: env\nclass: env\n");
    for name in ["bigHost", "bigTool", "bigResult", "megabyte", "echo"] {
        f.file(&format!("tools/{name}.tool.yaml"), "runtime: subprocess\n");
    }
    let (_p, s) = f.session(settings(30_000));
    // Control: 1 MiB each way is carried whole (and starts the worker, outside the times below).
    let ok = s.call("megabyte", json!({})).expect("1 MiB passes");
    assert_eq!((&ok["host"], &ok["echoed"]), (&json!("answered"), &json!(1 << 20)));
    assert_eq!(ok["pad"].as_str().map(str::len), Some(1 << 20));
    let worker = node_processes_of(&f);
    for (name, want) in [
        ("bigHost", "TrailblazeHostError: the request is larger than 16 MiB"),
        ("bigTool", "bigTool: the request is larger than 16 MiB"),
        ("bigResult", "bigResult: its result is larger than 16 MiB"),
    ] {
        let started = Instant::now();
        let err = s.call(name, json!({})).expect_err(name).to_string();
        let took = started.elapsed();
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("xxxx"), "{name}: the content is never quoted");
        assert!(took < Duration::from_secs(10), "{name} took {took:?} of its 30 s");
        assert_eq!(node_processes_of(&f), worker, "{name}: the worker is kept");
        assert_eq!(
            s.call("megabyte", json!({})).expect("next call")["echoed"],
            1 << 20,
            "after {name}"
        );
    }
}

/// Stands in for Node: reads its calls and answers `quick`; the others write what no runner would.
const FAKE: &str = r#"
const fs = require("fs");
const path = require("path");
const dir = process.argv[2];
const marker = path.join(dir, "marker.json");
const quiet = () => setInterval(() => {}, 1000);
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk;
  let i;
  while ((i = pending.indexOf("\n")) >= 0) {
    const call = JSON.parse(pending.slice(0, i));
    pending = pending.slice(i + 1);
    if (typeof call.call !== "number") continue;
    const answer = () => {
      fs.writeSync(2, JSON.stringify({ fence: call.call }) + "\n");
      fs.writeSync(1, JSON.stringify({ result: call.call, ok: true, value: { ok: true } }) + "\n");
    };
    const mib = Buffer.alloc(1 << 20, 120);
    if (call.name === "floodHost") {
      fs.writeFileSync(marker, JSON.stringify({ pid: process.pid, at: Date.now() }));
      for (let n = 0; n < 32; n++) fs.writeSync(4, mib);
      quiet();
    } else if (call.name === "floodOut") {
      for (let n = 0; n < 128; n++) fs.writeSync(1, mib);
      quiet();
    } else if (call.name === "hold") {
      // Holds the session (and its host process) until the test has looked at it.
      fs.writeFileSync(path.join(dir, "holding"), "");
      const t = setInterval(() => {
        if (fs.existsSync(path.join(dir, "release"))) {
          clearInterval(t);
          answer();
        }
      }, 5);
    } else if (call.name === "floodErr") {
      for (let n = 0; n < 128; n++) fs.writeSync(2, mib);
      fs.writeSync(2, "\n");
      answer();
    } else {
      answer();
    }
  }
});
"#;

/// `trailblaze shell` fed `lines` and then `hold`, its Node a stand-in working in `dir`: its exit
/// code, its output, and its peak memory (KiB, `VmHWM`) read while the stand-in holds it.
fn shell(f: &Fixture, node: &Path, dir: &Path, lines: &str) -> (i32, String, String, u64) {
    let _ = std::fs::remove_file(dir.join("holding"));
    let _ = std::fs::remove_file(dir.join("release"));
    let mut child = Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .arg("shell")
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_NODE", node)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shell starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(format!("{lines}hold\nquit\n").as_bytes())
        .expect("lines written");
    drop(stdin);
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("stdout")));
    let err = read(Box::new(child.stderr.take().expect("stderr")));
    let until = Instant::now() + Duration::from_secs(120);
    while !dir.join("holding").exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the shell's VmHWM while it is held");
    std::fs::write(dir.join("release"), "").expect("release");
    let code = child.wait().expect("shell ends").code().unwrap_or(-1);
    (code, out.join().expect("stdout"), err.join().expect("stderr"), peak)
}

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
fn ended(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[test]
fn a_worker_that_floods_a_pipe_is_stopped_in_time_and_leaves_the_host_memory_bounded() {
    let f = Fixture::new("t");
    f.tool(
        "flood",
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         /** Answered by the stand-in. */\nexport const quick = trailblaze.tool<{}, {}>(async () => ({}));\n\
         /** Answered by the stand-in. */\nexport const floodHost = trailblaze.tool<{}, {}>(async () => ({}));\n\
         /** Answered by the stand-in. */\nexport const floodOut = trailblaze.tool<{}, {}>(async () => ({}));\n\
         /** Answered by the stand-in. */\nexport const floodErr = trailblaze.tool<{}, {}>(async () => ({}));\n\
         /** Answered by the stand-in. */\nexport const hold = trailblaze.tool<{}, {}>(async () => ({}));\n",
    );
    for name in ["quick", "floodHost", "floodOut", "floodErr", "hold"] {
        f.file(&format!("tools/{name}.tool.yaml"), "runtime: subprocess\n");
    }
    let dir = tempfile::tempdir().expect("tmp");
    let (script, marker) = (dir.path().join("fake.js"), dir.path().join("marker.json"));
    std::fs::write(&script, FAKE).expect("fake");
    let node = dir.path().join("node");
    std::fs::write(
        &node,
        format!("#!/bin/sh\nexec node {} {}\n", script.display(), dir.path().display()),
    )
    .expect("wrapper");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    // Control: a quiet session's peak memory, and the stand-in answering.
    let (code, out, err, quiet) = shell(&f, &node, dir.path(), "quick\nquick\n");
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("quick:"), "the stand-in answers: {out}{err}");

    // The `ctx.host` pipe: how long from the stand-in's first byte to its end, watched meanwhile.
    let watch = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(120);
        while Instant::now() < until {
            if let Ok(text) = std::fs::read_to_string(&marker)
                && let Ok(m) = serde_json::from_str::<serde_json::Value>(&text)
                && let (Some(pid), Some(at)) = (m["pid"].as_u64(), m["at"].as_u64())
            {
                while !ended(pid) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(2));
                }
                return Some(Duration::from_millis(now_ms().saturating_sub(at)));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    });
    let (code, out, err, flooded) = shell(
        &f,
        &node,
        dir.path(),
        "quick\nfloodHost\nquick\nfloodOut\nquick\nfloodErr\nquick\n",
    );
    let host_pipe = watch.join().expect("watch");
    assert_eq!(code, 0, "{out}{err}");
    for (tool, pipe) in [("floodHost", "its `ctx.host` pipe (fd 4)"), ("floodOut", "its stdout")] {
        assert!(
            err.lines()
                .any(|l| l.contains(tool) && l.contains("longer than 16 MiB") && l.contains(pipe)),
            "{tool}: {err}"
        );
    }
    assert!(!err.contains("floodErr:"), "stderr is not the protocol: {err}");
    assert!(!err.contains("quick:"), "each next call was served: {err}");
    // The cut stderr line is shown as any long line is (8 KiB of it); no more of any flood.
    assert!(
        out.len() + err.len() < 64 << 10,
        "{} bytes of output",
        out.len() + err.len()
    );
    // Stopped at the cap, well inside the call's 10 s: it took 14.6 s and more before.
    let host_pipe = host_pipe.expect("the stand-in flooded its `ctx.host` pipe and ended");
    assert!(host_pipe < Duration::from_secs(5), "{host_pipe:?}");
    // 32 MiB and 2 × 128 MiB written: the host kept no more than its caps (a line's 16 MiB, 8 MiB
    // queued; ~37 MiB over a quiet run's peak here, one buffer per reader thread). Before: more
    // than 256 MiB for the stdout flood alone.
    assert!(
        flooded < quiet + (64 << 10),
        "peak {flooded} KiB against a quiet run's {quiet} KiB"
    );
}
