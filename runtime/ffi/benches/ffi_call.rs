//! One tool call (`snapshot` on the demo's simulated device), median per call: a direct
//! `Session::call`, the same call through the C ABI (`tb_session_call`: text in, handle lookup,
//! JSON parse, JSON text out) and through JNI (a JVM calling `TrailblazeNative.call`), in one run.
//!
//! `cargo bench -p trailblaze-ffi --bench ffi_call` (under `cargo test`: a smoke-sized pass).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use trailblaze::{ProjectOptions, SessionOptions};
use trailblaze_ffi::{TbBuf, TbProject, TbSession, TbStatus, tb_buf_free, tb_project_free, tb_project_open};
use trailblaze_ffi::{tb_session_call, tb_session_free, tb_session_open};

fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ns per call of `f`, median over `repeats` rounds of `calls` calls (after one warm-up round).
fn time(calls: u32, repeats: usize, mut f: impl FnMut()) -> f64 {
    (0..calls).for_each(|_| f());
    let rounds = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            (0..calls).for_each(|_| f());
            t.elapsed().as_nanos() as f64 / calls as f64
        })
        .collect();
    median(rounds)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs JniBench on the JVM; `None` (said) when there is no JDK.
fn jni(options: &str, calls: u32, repeats: usize) -> Option<f64> {
    let dir = tempfile::tempdir().ok()?;
    let java_dir = repo().join("runtime/ffi/java");
    // Every class of the Java side, so a new one is never left out, and the bench.
    let mut sources: Vec<std::path::PathBuf> = std::fs::read_dir(java_dir.join("dev/trailblaze"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.push(java_dir.join("test/dev/trailblaze/JniBench.java"));
    match Command::new("javac").arg("-d").arg(dir.path()).args(&sources).status() {
        Err(_) => {
            eprintln!("no javac: the JNI figure is skipped");
            return None;
        }
        Ok(s) => assert!(s.success(), "javac failed on the Java side"),
    }
    let exe = std::env::current_exe().ok()?;
    // The cdylib of this build sits beside the bench binary, in `deps/`.
    let deps = exe.parent()?.to_path_buf();
    let out = Command::new("java")
        .arg(format!("-Djava.library.path={}", deps.display()))
        .arg("-cp")
        .arg(dir.path())
        .arg("dev.trailblaze.JniBench")
        .arg(repo().join("trailmaps"))
        .arg(options)
        .arg(calls.to_string())
        .arg(repeats.to_string())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let ns = text
        .lines()
        .find_map(|l| l.strip_prefix("jni_median_ns="))?
        .trim()
        .parse()
        .ok();
    if ns.is_none() {
        eprintln!("JniBench failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    ns
}

fn main() {
    let (calls, repeats): (u32, usize) = if full() { (2_000, 7) } else { (30, 1) };
    let cache = tempfile::tempdir().expect("temp dir");
    let options = json!({"cacheDir": cache.path()}).to_string();
    let root = repo().join("trailmaps");

    let project = trailblaze::open(
        &root,
        ProjectOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            ..ProjectOptions::default()
        },
    )
    .expect("open the demo");
    let session = project
        .open_session("demo", SessionOptions::default())
        .expect("session");
    let direct = time(calls, repeats, || {
        session.call("snapshot", json!({})).expect("direct call");
    });

    let mut out = TbBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
    };
    let mut p = TbProject { id: 0 };
    let mut s = TbSession { id: 0 };
    let root_text = root.display().to_string();
    // SAFETY: valid pointers and lengths for each call; the buffer is freed below.
    unsafe {
        let st = tb_project_open(
            root_text.as_ptr(),
            root_text.len(),
            options.as_ptr(),
            options.len(),
            &mut p,
            &mut out,
        );
        assert_eq!(st, TbStatus::Ok);
        let st = tb_session_open(
            p,
            "demo".as_ptr(),
            4,
            std::ptr::null(),
            0,
            std::ptr::null(),
            &mut s,
            &mut out,
        );
        assert_eq!(st, TbStatus::Ok);
    }
    let c_abi = time(calls, repeats, || {
        // SAFETY: as above.
        let st = unsafe { tb_session_call(s, "snapshot".as_ptr(), 8, "{}".as_ptr(), 2, &mut out) };
        assert_eq!(st, TbStatus::Ok);
    });
    // SAFETY: the buffer was filled by the library.
    unsafe { tb_buf_free(&mut out) };
    assert_eq!(tb_session_free(s), TbStatus::Ok);
    assert_eq!(tb_project_free(p), TbStatus::Ok);

    let jni = jni(&options, calls, repeats);
    println!("ffi_call: snapshot on the demo sim, median ns per call ({calls} calls x {repeats})");
    println!("  direct Session::call  {direct:>10.0} ns");
    println!(
        "  C ABI tb_session_call {c_abi:>10.0} ns  ({:.2}x direct)",
        c_abi / direct
    );
    match jni {
        Some(j) => println!("  JNI TrailblazeNative  {j:>10.0} ns  ({:.2}x direct)", j / direct),
        None => println!("  JNI: skipped (no JDK)"),
    }
}
