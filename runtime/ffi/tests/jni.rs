//! The JNI layer on the host JVM: javac the Java sources, then run dev.trailblaze.JniTest with
//! -Xcheck:jni against the cdylib (a Java device, a trail through JNI, exceptions both ways,
//! 1,000 calls). -Xcheck:jni must print no warning: a JNI call that skips a required exception
//! check is one on every JDK 17; a local-reference leak is one on some (Debian's 17.0.21 prints
//! none for it, so the control below proves -Xcheck:jni is on by the exception check).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{have, lib_dir, repo};

fn java_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("java dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            java_sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "java") {
            out.push(p);
        }
    }
}

fn javac(classes: &Path) {
    let mut sources = Vec::new();
    java_sources(&repo().join("runtime/ffi/java"), &mut sources);
    let out = Command::new("javac")
        .args(["--release", "17", "-Xlint:all", "-Werror", "-d"])
        .arg(classes)
        .args(&sources)
        .output()
        .expect("run javac");
    assert!(out.status.success(), "javac: {}", String::from_utf8_lossy(&out.stderr));
}

fn java(classes: &Path, lib_path: &Path, main: &str, args: &[&str]) -> Output {
    Command::new("java")
        .arg("-Xcheck:jni")
        .arg(format!("-Djava.library.path={}", lib_path.display()))
        .arg("-cp")
        .arg(classes)
        .arg(main)
        .args(args)
        .output()
        .expect("run java")
}

/// The JDK's `include/` (for jni.h), from the real path of `javac`.
fn jdk_include() -> PathBuf {
    let javac = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v javac)\""])
        .output()
        .expect("find javac");
    let javac = PathBuf::from(String::from_utf8_lossy(&javac.stdout).trim());
    javac.parent().and_then(Path::parent).expect("jdk home").join("include")
}

fn warnings(out: &Output) -> Vec<String> {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter(|l| l.contains("WARNING"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_java_device_runs_a_trail_through_jni_with_xcheck_jni() {
    assert!(
        have("javac") || Command::new("javac").arg("-version").status().is_ok(),
        "javac needed"
    );
    let dir = tempfile::tempdir().expect("tmp");
    let classes = dir.path().join("classes");
    javac(&classes);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let out = java(
        &classes,
        &lib_dir(),
        "dev.trailblaze.JniTest",
        &[&work.display().to_string(), "1000"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "JniTest failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("PASS 1000 calls")
            && stdout.contains("PASS host function in Java")
            && stdout.contains("PASS swipe on a Java device")
            && stdout.contains("ALL PASSED"),
        "{stdout}"
    );
    assert_eq!(warnings(&out), Vec::<String>::new(), "-Xcheck:jni warned");
}

/// Control: the same -Xcheck:jni run does print a warning for a native method that breaks a JNI
/// rule (a Java call, then another JNI call with no `ExceptionCheck` between), so the empty warning
/// list above means -Xcheck:jni was on and its warnings were read.
#[test]
fn control_xcheck_jni_reports_a_skipped_exception_check() {
    let dir = tempfile::tempdir().expect("tmp");
    let classes = dir.path().join("classes");
    javac(&classes);
    let include = jdk_include();
    let lib = dir.path().join("libjni_rule_probe.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(repo().join("runtime/ffi/c-tests/jni_rule_probe.c"))
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(include.join("linux"))
        .status()
        .expect("cc");
    assert!(status.success());
    let out = java(&classes, dir.path(), "dev.trailblaze.RuleProbe", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("probed"));
    let w = warnings(&out);
    assert!(
        w.iter().any(|l| l.contains("without checking exceptions")),
        "no -Xcheck:jni warning: {w:?}"
    );
}
