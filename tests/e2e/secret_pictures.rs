//! A secret typed into a field that shows its text (not a password field) is painted over in the
//! report's PNG of every phone — the fake Android phone and the fake iPhone — as it is in the
//! agent's pictures; a text that is no secret is not (the control).

use std::path::Path;

use serde_json::Value;
use trailblaze::device::Bounds;
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::fake_wda::FakeWda;
use trailblaze_e2e::{CANARY, Fixture, in_dir, text};

const TRAIL: &str = "config: { id: demo/token, target: demo }\ntrailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: { appId: com.example.demo }\ntrail:\n  - step: Type the token\n    recording:\n      tools:\n        - inputText: { text: \"TYPED\", nodeSelector: { androidAccessibility: { resourceIdRegex: \"(.*:id/)?email\" } } }\n";

/// Runs the token trail on `device` typing `typed`, with the secret TOKEN = CANARY; the PNG of its
/// last step and the email field's bounds on a screen of the tree's size.
fn last_picture(device: &[&str], typed: &str) -> (crate::png_image::Png, Bounds, (i32, i32), String) {
    let f = Fixture::demo();
    f.file("trails/token.trail.yaml", &TRAIL.replace("TYPED", typed));
    let dir = f.dir.path().join("report");
    let mut args = vec![
        "run",
        "trailmaps/demo/trails/token.trail.yaml",
        "--screenshots",
        "all",
        "--report-dir",
    ];
    let d = dir.display().to_string();
    args.push(&d);
    args.extend_from_slice(device);
    let o = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(f.dir.path())
        .args(&args)
        .env("TRAILBLAZE_SECRET_TOKEN", CANARY)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report")).expect("JSON");
    // The last step's (the trailhead is the first).
    let step = report["trails"][0]["steps"]
        .as_array()
        .and_then(|s| s.last())
        .cloned()
        .unwrap_or_default();
    let screen = step["screen"].as_str().expect("the step's picture");
    assert!(screen.ends_with(".png"), "{screen}");
    let png = crate::png_image::Png::decode(&std::fs::read(dir.join(screen)).expect("png"));
    let snap = in_dir(&f, f.dir.path(), &[&["snapshot", "--json"][..], device].concat());
    let tree: Value = serde_json::from_str(&text(&snap).0).expect("snapshot JSON");
    let (bounds, size) = email(&tree);
    (png, bounds, size, dir.display().to_string())
}

/// The email field's bounds and the screen's size in the `snapshot --json` output.
fn email(snap: &Value) -> (Bounds, (i32, i32)) {
    fn find(n: &Value) -> Option<Bounds> {
        let id = n["resourceId"].as_str().unwrap_or_default();
        if id == "email" || id.ends_with(":id/email") {
            return serde_json::from_value(n["bounds"].clone()).ok();
        }
        n["children"].as_array().into_iter().flatten().find_map(find)
    }
    let root = &snap["root"];
    let b = find(root).expect("the email field");
    let (w, h) = (
        root["bounds"]["right"].as_i64().unwrap_or(0),
        root["bounds"]["bottom"].as_i64().unwrap_or(0),
    );
    (b, (w as i32, h as i32))
}

fn painted(png: &crate::png_image::Png, b: Bounds, screen: (i32, i32)) -> bool {
    let inside = super::vision::region(png, b, screen);
    !inside.is_empty() && inside.iter().all(|p| p[..3] == trailblaze::parts::SECRET_MASK)
}

fn no_canary_in(dir: &str) {
    for e in walk(Path::new(dir)) {
        let bytes = std::fs::read(&e).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&bytes).contains(CANARY), "{}", e.display());
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_secret_typed_into_a_plain_field_is_painted_over_in_an_iphones_report_picture() {
    let fake = FakeWda::demo();
    let device = format!("ios:{}", fake.url());
    let (png, field, screen, dir) = last_picture(&["--device", &device], "{{secret:TOKEN}}");
    assert!(painted(&png, field, screen), "the field is one solid mask");
    no_canary_in(&dir);
    // Control: the same text typed as plain text is not painted over.
    let plain = FakeWda::demo();
    let device = format!("ios:{}", plain.url());
    let (png, field, screen, _) = last_picture(&["--device", &device], "plain-text-1234");
    assert!(!painted(&png, field, screen), "control: not masked");
}

#[test]
fn a_secret_typed_into_a_plain_field_is_painted_over_in_an_android_phones_report_picture() {
    let fake = FakeAdb::demo("emulator-5554");
    let server = fake.addr().to_string();
    let (png, field, screen, dir) = last_picture(&["--device", "android", "--adb-server", &server], "{{secret:TOKEN}}");
    assert!(painted(&png, field, screen), "the field is one solid mask");
    no_canary_in(&dir);
    let plain = FakeAdb::demo("emulator-5554");
    let server = plain.addr().to_string();
    let (png, field, screen, _) = last_picture(&["--device", "android", "--adb-server", &server], "plain-text-1234");
    assert!(!painted(&png, field, screen), "control: not masked");
}
