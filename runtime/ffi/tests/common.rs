//! Shared by the tests that drive the built library from outside Rust (C, the JVM).
// Each test crate uses only some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where `libtrailblaze_ffi.so` of this test run is: `<target>/<profile>/deps/`, beside the test
/// (`cargo test` refreshes it there; the copy in `<profile>/` is only updated by `cargo build`).
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    // <target>/<profile>/deps/<test>-<hash>
    let deps = exe.parent().expect("deps dir").to_path_buf();
    let profile = deps.parent().expect("profile dir").to_path_buf();
    for dir in [&deps, &profile] {
        if dir.join("libtrailblaze_ffi.so").is_file() {
            return dir.clone();
        }
    }
    panic!("libtrailblaze_ffi.so not found beside {}", deps.display());
}

/// Whether `tool` answers `--version`; when it does not, a failure naming the package (./test.sh
/// installs every one), unless `TRAILBLAZE_ALLOW_MISSING=tool,...` says to go on without it (loudly).
pub fn require(tool: &str, package: &str) -> bool {
    if have(tool) {
        return true;
    }
    let allowed = std::env::var("TRAILBLAZE_ALLOW_MISSING").is_ok_and(|v| v.split(',').any(|t| t.trim() == tool));
    assert!(
        allowed,
        "`{tool}` is not installed: ./test.sh installs it (apt-get install {package}); \
         set TRAILBLAZE_ALLOW_MISSING={tool} to skip what needs it"
    );
    eprintln!("notice: `{tool}` is not installed and TRAILBLAZE_ALLOW_MISSING names it: this check did not run");
    false
}

/// Whether `tool` answers `--version` (cc, java, valgrind).
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The demo's secrets as a JSON object, read from `trailmaps/demo/demo.secrets`.
pub fn demo_secrets() -> serde_json::Value {
    let text = std::fs::read_to_string(repo().join("trailmaps/demo/demo.secrets")).expect("demo.secrets");
    let mut map = serde_json::Map::new();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some((k, v)) = line.split_once('=') {
            map.insert(k.trim().to_string(), serde_json::Value::String(v.trim().to_string()));
        }
    }
    serde_json::Value::Object(map)
}
