//! The built-in host functions, called through the registry as a script would.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use common::*;
use serde_json::{Value, json};
use trailblaze_host_functions::{HostCallError, HostRegistry, SecretStore};

fn secrets() -> SecretStore {
    SecretStore::from_pairs([
        ("DEMO_USERNAME".to_string(), "jane@example.com".to_string()),
        ("DEMO_PASSWORD".to_string(), CANARY.to_string()),
        ("admin_username".to_string(), "root".to_string()),
        ("adminPassword".to_string(), format!("{CANARY}-admin")),
        ("HALF_USERNAME".to_string(), "half-user".to_string()),
    ])
}

fn call(cx: &mut FakeContext, name: &str, args: Value) -> Result<Value, HostCallError> {
    HostRegistry::builtin().call(name, args, cx)
}

// --- lookupCredential ---

#[test]
fn lookup_credential_reads_both_secrets() {
    let mut cx = FakeContext::with(secrets(), PathBuf::new(), &[]);
    let out = call(&mut cx, "lookupCredential", json!({ "account": "demo" })).unwrap();
    assert_eq!(out, json!({ "username": "jane@example.com", "password": CANARY }));
    let out = call(&mut cx, "lookupCredential", json!({ "account": "Admin" })).unwrap();
    assert_eq!(out["username"], "root");
    assert_eq!(cx.env.secrets.lookups(), 4);
}

#[test]
fn an_unknown_account_lists_accounts_and_reads_no_value() {
    let mut cx = FakeContext::with(secrets(), PathBuf::new(), &[]);
    for account in ["demp", "half"] {
        let err = call(&mut cx, "lookupCredential", json!({ "account": account })).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, HostCallError::Failed { .. }), "{err:?}");
        assert!(msg.contains("(available accounts: ADMIN, DEMO)"), "{msg}");
        for value in [CANARY, "jane@example.com", "root", "half-user"] {
            assert!(!msg.contains(value), "{msg}");
        }
    }
    let msg = call(&mut cx, "lookupCredential", json!({ "account": "demp" }))
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("no credentials for account `DEMP`: secrets `DEMP_USERNAME` and `DEMP_PASSWORD`"),
        "{msg}"
    );
    assert!(msg.contains("did you mean `DEMO`?"), "{msg}");
    assert_eq!(cx.env.secrets.lookups(), 0);
}

#[test]
fn a_refused_call_looks_up_nothing() {
    let mut cx = FakeContext::with(secrets(), PathBuf::new(), &[]);
    let err = call(
        &mut cx,
        "lookupCredential",
        json!({ "account": "demo", "acount": "demo" }),
    )
    .unwrap_err();
    assert!(matches!(err, HostCallError::Decode { .. }), "{err:?}");
    assert_eq!(cx.env.secrets.lookups(), 0);
    // Positive control: the same store counts a real lookup.
    call(&mut cx, "lookupCredential", json!({ "account": "demo" })).unwrap();
    assert_eq!(cx.env.secrets.lookups(), 2);
}

#[test]
fn no_accounts_at_all_says_how_to_add_one() {
    let mut cx = FakeContext::new();
    let msg = call(&mut cx, "lookupCredential", json!({ "account": "demo" }))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("no accounts are configured (set TRAILBLAZE_SECRET_<ACCOUNT>_USERNAME"),
        "{msg}"
    );
}

// --- env ---

const UNSET: &str = "TRAILBLAZE_TEST_SURELY_UNSET_7c1d";

#[test]
fn env_reads_an_allowed_variable_and_null_when_unset() {
    let mut cx = FakeContext::with(SecretStore::default(), PathBuf::new(), &["PATH", UNSET]);
    let path = std::env::var("PATH").ok();
    assert_eq!(
        call(&mut cx, "env", json!({ "name": "PATH" })).unwrap(),
        json!({ "value": path })
    );
    assert_eq!(
        call(&mut cx, "env", json!({ "name": UNSET })).unwrap(),
        json!({ "value": null })
    );
}

#[test]
fn env_refuses_an_undeclared_variable() {
    let mut cx = FakeContext::with(SecretStore::default(), PathBuf::new(), &["API_BASE_URL", "LOCALE"]);
    let msg = call(&mut cx, "env", json!({ "name": "HOME" })).unwrap_err().to_string();
    assert_eq!(
        msg,
        "environment variable `HOME` is not readable: declare it in trailmaps/demo/trailmap.yaml as \
         `host_env: [HOME]` (readable now: API_BASE_URL, LOCALE)"
    );
    let mut cx = FakeContext::new();
    let msg = call(&mut cx, "env", json!({ "name": "HOME" })).unwrap_err().to_string();
    assert!(msg.ends_with("(readable now: none)"), "{msg}");
}

#[test]
fn env_never_reads_a_secret_variable_even_if_declared() {
    let name = "TRAILBLAZE_SECRET_DEMO_PASSWORD";
    let mut cx = FakeContext::with(SecretStore::default(), PathBuf::new(), &[name]);
    let msg = call(&mut cx, "env", json!({ "name": name })).unwrap_err().to_string();
    assert!(msg.contains("is a secret") && msg.contains("lookupCredential"), "{msg}");
}

// --- now ---

#[test]
fn now_returns_a_plausible_time() {
    let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    let out = call(&mut FakeContext::new(), "now", json!({})).unwrap();
    let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    let millis = out["epochMillis"].as_i64().unwrap();
    assert!((before..=after).contains(&millis), "{out}");
    let iso = out["iso"].as_str().unwrap();
    assert_eq!(iso.len(), "2024-02-29T12:34:56.789Z".len(), "{iso}");
    assert!(iso.ends_with('Z') && iso[10..11] == *"T", "{iso}");
    assert!(iso.ends_with(&format!("{:03}Z", millis % 1000)), "{iso}");
    let year: i32 = iso[..4].parse().unwrap();
    assert!((2024..2200).contains(&year), "{iso}");
}

#[test]
fn now_takes_no_arguments() {
    let err = call(&mut FakeContext::new(), "now", json!({ "tz": "UTC" })).unwrap_err();
    assert!(err.to_string().contains("unknown key `tz`"), "{err}");
}

// --- readFixture ---

/// `<tmp>/trailmap/fixtures/users/jane.json`, and `<tmp>/outside.txt` beside the trailmap.
fn trailmap() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let trailmap = tmp.path().join("trailmap");
    fs::create_dir_all(trailmap.join("fixtures/users")).unwrap();
    fs::write(trailmap.join("fixtures/users/jane.json"), r#"{"name":"Jane"}"#).unwrap();
    fs::write(tmp.path().join("outside.txt"), CANARY).unwrap();
    (tmp, trailmap)
}

fn read_fixture(trailmap: &Path, path: &str) -> Result<Value, String> {
    let mut cx = FakeContext::with(SecretStore::default(), trailmap.to_path_buf(), &[]);
    call(&mut cx, "readFixture", json!({ "path": path })).map_err(|e| e.to_string())
}

#[test]
fn read_fixture_reads_a_file_under_fixtures() {
    let (_tmp, trailmap) = trailmap();
    let want = Ok(json!({ "text": r#"{"name":"Jane"}"# }));
    assert_eq!(read_fixture(&trailmap, "users/jane.json"), want);
    assert_eq!(read_fixture(&trailmap, "./users/jane.json"), want);
}

#[test]
fn read_fixture_refuses_dot_dot_before_touching_the_file_system() {
    let (_tmp, trailmap) = trailmap();
    let err = read_fixture(&trailmap, "../../outside.txt").unwrap_err();
    assert_eq!(err, "fixture path `../../outside.txt` contains `..`; refused");
    let err = read_fixture(&trailmap, "users/../users/jane.json").unwrap_err();
    assert!(err.contains("contains `..`"), "{err}");
    // With no fixtures folder at all the refusal is the same: the check is lexical.
    let err = read_fixture(Path::new("/nonexistent"), "../outside.txt").unwrap_err();
    assert!(err.contains("contains `..`"), "{err}");
}

#[test]
fn read_fixture_refuses_an_absolute_path() {
    let (tmp, trailmap) = trailmap();
    let absolute = tmp.path().join("trailmap/fixtures/users/jane.json");
    let err = read_fixture(&trailmap, &absolute.to_string_lossy()).unwrap_err();
    assert!(
        err.contains("is absolute; give a path relative to the trailmap's fixtures/ folder"),
        "{err}"
    );
    assert!(!err.contains("Jane"), "{err}");
}

#[cfg(unix)]
#[test]
fn read_fixture_refuses_a_symlink_leading_outside_and_follows_one_inside() {
    let (tmp, trailmap) = trailmap();
    let fixtures = trailmap.join("fixtures");
    std::os::unix::fs::symlink(tmp.path().join("outside.txt"), fixtures.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink(tmp.path(), fixtures.join("up")).unwrap();
    for path in ["escape.txt", "up/outside.txt"] {
        let err = read_fixture(&trailmap, path).unwrap_err();
        assert_eq!(
            err,
            format!("fixture `{path}` resolves outside fixtures/ (a symlink); refused")
        );
        assert!(!err.contains(CANARY));
    }
    std::os::unix::fs::symlink(fixtures.join("users/jane.json"), fixtures.join("alias.json")).unwrap();
    assert!(read_fixture(&trailmap, "alias.json").is_ok());
}

#[test]
fn read_fixture_errors_name_the_relative_path() {
    let (_tmp, trailmap) = trailmap();
    let fixtures = trailmap.join("fixtures");
    assert_eq!(
        read_fixture(&trailmap, "users/missing.json").unwrap_err(),
        "fixture `users/missing.json` not found in the fixtures/ folder of trailmap `demo`"
    );
    assert_eq!(
        read_fixture(&trailmap, "users").unwrap_err(),
        "fixture `users` is not a file"
    );
    fs::write(fixtures.join("binary.bin"), [0xff, 0xfe, 0x00]).unwrap();
    assert_eq!(
        read_fixture(&trailmap, "binary.bin").unwrap_err(),
        "fixture `binary.bin` is not UTF-8 text"
    );
    let err = read_fixture(Path::new("/nonexistent"), "users/jane.json").unwrap_err();
    assert_eq!(
        err,
        "fixture `users/jane.json`: trailmap `demo` has no fixtures/ folder"
    );
    assert_eq!(read_fixture(&trailmap, "").unwrap_err(), "readFixture: `path` is empty");
}

#[test]
fn read_fixture_caps_the_size() {
    let (_tmp, trailmap) = trailmap();
    let limit = trailblaze_host_functions::builtin::FIXTURE_MAX_BYTES as usize;
    fs::write(trailmap.join("fixtures/at-limit.txt"), "a".repeat(limit)).unwrap();
    fs::write(trailmap.join("fixtures/too-big.txt"), "a".repeat(limit + 1)).unwrap();
    assert!(read_fixture(&trailmap, "at-limit.txt").is_ok());
    let err = read_fixture(&trailmap, "too-big.txt").unwrap_err();
    assert_eq!(
        err,
        format!("fixture `too-big.txt` is larger than the {limit}-byte limit")
    );
}

#[cfg(unix)]
#[test]
fn read_fixture_does_not_open_a_fifo() {
    let (_tmp, trailmap) = trailmap();
    let fifo = trailmap.join("fixtures/pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable; skipped");
        return;
    }
    // Opening a FIFO with no writer would block this test forever.
    assert_eq!(
        read_fixture(&trailmap, "pipe").unwrap_err(),
        "fixture `pipe` is not a file"
    );
}
