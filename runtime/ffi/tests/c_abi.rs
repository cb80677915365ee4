//! Compiles c-tests/smoke.c with `cc` against the cdylib and runs it under valgrind (memcheck):
//! the demo's trails on the sim, good and bad calls, a C device, every handle freed.

mod common;

use std::process::Command;

use common::{demo_secrets, have, lib_dir, repo, require};

const CANARY: &str = "canary-c-9d2e-never-printed";

/// Builds the C program into `dir`; returns its path.
fn build_smoke(dir: &std::path::Path) -> std::path::PathBuf {
    let ffi = repo().join("runtime/ffi");
    let exe = dir.join("smoke");
    let lib = lib_dir();
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-o"])
        .arg(&exe)
        .arg(ffi.join("c-tests/smoke.c"))
        .arg("-I")
        .arg(ffi.join("include"))
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-ltrailblaze_ffi")
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed");
    exe
}

fn smoke_args(dir: &std::path::Path) -> Vec<String> {
    let mut secrets = demo_secrets();
    secrets["CANARY"] = CANARY.into();
    let options = serde_json::json!({"cacheDir": dir.join("cache"), "secrets": secrets});
    vec![
        repo().join("trailmaps").display().to_string(),
        options.to_string(),
        dir.join("out").display().to_string(),
        CANARY.to_string(),
    ]
}

#[test]
fn the_c_program_runs_the_demo_and_frees_everything_under_valgrind() {
    assert!(have("cc"), "cc is needed to build the C test");
    let dir = tempfile::tempdir().expect("tmp");
    let exe = build_smoke(dir.path());
    let args = smoke_args(dir.path());
    // Under valgrind (test.sh installs it); the program alone only when TRAILBLAZE_ALLOW_MISSING says so.
    let valgrind = require("valgrind", "valgrind");
    let mut cmd = if valgrind {
        let mut c = Command::new("valgrind");
        c.args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
            "--quiet",
        ])
        .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    // cargo's LD_LIBRARY_PATH would win over the rpath and may hold a stale copy of the library.
    let out = cmd
        .args(&args)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run the C test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "C test failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("PASS C host function") && stdout.contains("ALL PASSED"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(CANARY) && !stderr.contains(CANARY),
        "the canary leaked"
    );
    // The reports of the run were written where the program asked.
    assert!(std::fs::read_dir(dir.path().join("out")).expect("out dir").count() > 0);
}

/// Control: the C program can fail — with a wrong demo secret the trails fail and it says so.
#[test]
fn control_the_c_program_sees_a_failed_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let exe = build_smoke(dir.path());
    let mut args = smoke_args(dir.path());
    let mut options: serde_json::Value = serde_json::from_str(&args[1]).expect("json");
    options["secrets"]["DEMO_PASSWORD"] = "wrong-password".into();
    args[1] = options.to_string();
    let out = Command::new(&exe)
        .args(&args)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("FAIL the three demo trails pass"), "{stderr}");
}

/// Control for memcheck: valgrind does catch a leak in a program built the same way.
#[test]
fn control_valgrind_catches_a_definite_leak() {
    if !require("valgrind", "valgrind") {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let src = dir.path().join("leak.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\n#include <string.h>\nint main(void){char*p=malloc(64);memset(p,1,64);p=0;return 0;}\n",
    )
    .expect("write");
    let exe = dir.path().join("leak");
    assert!(
        Command::new("cc")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .status()
            .expect("cc")
            .success()
    );
    let out = Command::new("valgrind")
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--quiet",
        ])
        .arg(&exe)
        .output()
        .expect("valgrind");
    assert_eq!(out.status.code(), Some(99), "{}", String::from_utf8_lossy(&out.stderr));
}
