//! The iOS device over WebDriverAgent's protocol, against the fake WDA (tests/fake_wda) serving the
//! demo app and a Contacts-like one: the demo's trails with their iOS recordings, the snapshot and
//! refs, hostile text, a swipe, a WDA lost mid-trail in a pool, secrets kept out of the requests, a
//! session deleted however a trail ends.

mod original;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze::SessionOptions;
use trailblaze::device::spec::IosOptions;
use trailblaze::device::{Device, DeviceError, LaunchMode};
use trailblaze::ios::IosDevice;
use trailblaze_e2e::fake_wda::FakeWda;
use trailblaze_e2e::{Fixture, in_dir, text};

fn options(fake: &FakeWda) -> IosOptions {
    IosOptions {
        udid: None,
        wda: fake.url(),
    }
}

fn connect(fake: &FakeWda) -> IosDevice {
    IosDevice::connect(&options(fake), None).expect("connects to the fake WDA")
}

fn ios_session(f: &Fixture, fake: &FakeWda) -> (trailblaze::Project, trailblaze::Session) {
    let project = f.project();
    let s = project
        .open_session(
            &f.id,
            SessionOptions {
                device: Some(Box::new(connect(fake))),
                out_dir: Some(f.out()),
                ..SessionOptions::default()
            },
        )
        .expect("session on the iOS device");
    (project, s)
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON")
}

/// `run` of the demo trailmap's trails on `device`, its report in `dir`.
fn run_demo(f: &Fixture, device: &[&str], dir: &Path, extra: &[&str]) -> (std::process::Output, String, String) {
    let pw = f.root().join("demo/demo.secrets").display().to_string();
    let mut args = vec!["run", "--secrets", &pw];
    for d in device {
        args.extend(["--device", d]);
    }
    let dir = dir.display().to_string();
    args.extend(["--report-dir", &dir]);
    args.extend_from_slice(extra);
    let o = in_dir(f, f.dir.path(), &args);
    let (out, err) = text(&o);
    (o, out, err)
}

const PASSWORD: &str = "hunter2";

#[test]
fn the_demo_trails_replay_on_an_iphone_with_their_ios_recordings() {
    let fake = FakeWda::demo();
    let f = Fixture::demo();
    let dir = f.dir.path().join("ios");
    let device = format!("ios:{}", fake.url());
    let (o, out, err) = run_demo(&f, &[&device], &dir, &[]);
    assert!(o.status.success() && out.contains("3 passed, 0 failed"), "{out}{err}");
    let r = report(&dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 3, "{r}");
    for t in &trails {
        assert_eq!(t["outcome"]["status"], "passed", "{t}");
        assert!(t["device"].as_str().is_some_and(|d| d.starts_with("ios")), "{t}");
    }
    // The iOS recordings ran: the sign-in typed through the password's identifier, not the Android id.
    let reqs = fake.requests();
    assert!(
        reqs.iter().any(|q| q.path.ends_with("/actions")),
        "taps are W3C actions"
    );
    // Every session the run made was deleted at its trail's end.
    assert!(fake.sessions_created() >= 3, "{}", fake.sessions_created());
    assert_eq!(fake.sessions_created(), fake.sessions_deleted());
    // The password reached WDA only as the keys typed into its own field.
    let with_pw: Vec<_> = reqs.iter().filter(|q| q.body.contains(PASSWORD)).collect();
    assert!(!with_pw.is_empty(), "the control: the password was typed");
    assert!(with_pw.iter().all(|q| q.path.ends_with("/wda/keys")), "{with_pw:?}");
    // Nor is it in the report (the field's value reads dots on iOS, and the log is redacted).
    let html = std::fs::read_to_string(dir.join("report.html")).expect("html");
    assert!(
        !html.contains(PASSWORD)
            && !std::fs::read_to_string(dir.join("report.json"))
                .unwrap_or_default()
                .contains(PASSWORD)
    );
}

#[test]
fn the_snapshot_reads_ios_elements_and_a_tap_by_ref_records_an_ios_maestro_selector() {
    let f = Fixture::new("demo");
    let fake = FakeWda::demo();
    let (_p, s) = ios_session(&f, &fake);
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let before = fake.source_requests();
    let snap = s.call("snapshot", json!({})).expect("snapshot");
    let text = snap["text"].as_str().unwrap_or_default().to_string();
    assert!(text.contains("Button \"Sign in\""), "{text}");
    assert!(text.contains("TextField") && text.contains("hint=\"Email\""), "{text}");
    assert!(!text.contains("XCUIElementType"), "types read short: {text}");
    assert_eq!(fake.source_requests(), before + 1, "one source request per snapshot");
    // The snapshot cache: a second read-only look takes no new source.
    s.call("snapshot", json!({})).expect("again");
    assert_eq!(fake.source_requests(), before + 1);
    let line = text.lines().find(|l| l.contains("hint=\"Email\"")).expect("email line");
    let r = line
        .trim()
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap_or_default()
        .to_string();
    s.call("tap", json!({ "ref": r })).expect("tap by ref");
    // WDA's source tells no focus on iOS: the keyboard shows, and what is typed lands in the field.
    let after = s.call("snapshot", json!({})).expect("snapshot")["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(after.contains("Key \"q\""), "the keyboard is up: {after}");
    s.call("inputText", json!({ "text": "jane@example.com" }))
        .expect("types");
    let typed = s.call("snapshot", json!({})).expect("snapshot")["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        typed.lines().any(|l| l.contains("TextField \"jane@example.com\"")),
        "{typed}"
    );
    // What the tap recorded is the original's iOS form.
    let log = trailblaze_e2e::log_events(&f.out());
    let recorded = log
        .iter()
        .find(|e| e["tool"] == "tapOnElementBySelector")
        .map(|e| e["args"]["nodeSelector"].clone())
        .unwrap_or(Value::Null);
    assert!(recorded.get("iosMaestro").is_some(), "{recorded}");
}

#[test]
fn hostile_text_arrives_byte_exact_and_an_error_never_echoes_it() {
    let fake = FakeWda::demo();
    let mut d = connect(&fake);
    d.launch_app("com.example.demo", LaunchMode::Reinstall).expect("launch");
    let tree = d.snapshot().expect("snapshot");
    let email = find(&tree.root, "email").expect("the email field");
    let (x, y) = email.bounds.center();
    d.tap(x, y).expect("tap the field");
    let hostile = "a'b\"c\\d $(rm -rf /) `x` %s\n\t😀 שלום 漢字 \u{200f}é\u{0301}";
    d.input_text(hostile).expect("types");
    assert_eq!(fake.typed(), hostile);
    // Control: typing with no field focused is refused by WDA, and the error names no text.
    let fresh = FakeWda::demo();
    let mut d = connect(&fresh);
    d.launch_app("com.example.demo", LaunchMode::Reinstall).expect("launch");
    let secret = "CANARY-typed-text";
    let e = d.input_text(secret).expect_err("no focused field");
    assert!(matches!(e, DeviceError::Action(_)), "{e}");
    assert!(!e.to_string().contains(secret), "{e}");
}

fn find<'a>(n: &'a trailblaze::device::ViewNode, id: &str) -> Option<&'a trailblaze::device::ViewNode> {
    if n.resource_id.as_deref() == Some(id) {
        return Some(n);
    }
    n.children.iter().find_map(|c| find(c, id))
}

#[test]
fn a_swipe_is_one_w3c_touch_drag() {
    let f = Fixture::demo();
    let fake = FakeWda::demo();
    let (_p, s) = ios_session(&f, &fake);
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let v = s.call("swipe", json!({ "direction": "UP" })).expect("swipes");
    assert!(v["to"]["y"].as_i64() < v["from"]["y"].as_i64(), "{v}");
    let last = fake
        .requests()
        .into_iter()
        .rev()
        .find(|q| q.path.ends_with("/actions") && q.method == "POST")
        .expect("an actions request");
    let body: Value = serde_json::from_str(&last.body).expect("JSON body");
    let steps = body["actions"][0]["actions"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = steps.iter().filter_map(|a| a["type"].as_str()).collect();
    assert_eq!(
        kinds,
        ["pointerMove", "pointerDown", "pointerMove", "pointerUp"],
        "{body}"
    );
    assert_eq!(body["actions"][0]["parameters"]["pointerType"], "touch");
    assert_eq!(steps[0]["x"], v["from"]["x"]);
    assert_eq!(steps[2]["y"], v["to"]["y"]);
}

#[test]
fn the_ios_device_refuses_what_ios_has_not_and_names_itself() {
    let fake = FakeWda::demo();
    let mut d = connect(&fake);
    assert_eq!(d.platform(), trailblaze::device::Platform::Ios);
    assert_eq!(d.classifier().as_deref(), Some("ios-iphone"));
    d.launch_app("com.example.demo", LaunchMode::Reinstall).expect("launch");
    let e = d
        .press_key(trailblaze::device::KeyCode::Back)
        .expect_err("no BACK on iOS");
    assert!(e.to_string().contains("back"), "{e}");
    assert!(d.launch_app("not a bundle id", LaunchMode::Resume).is_err());
    let png = d.screenshot().expect("screenshot");
    assert!(png.bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    // A UDID the endpoint does not serve is refused, naming what it serves.
    let wrong = IosOptions {
        udid: Some("NOT-THIS-ONE".into()),
        wda: fake.url(),
    };
    let e = IosDevice::connect(&wrong, None).expect_err("another device");
    assert!(e.to_string().contains(fake.udid()), "{e}");
    let right = IosOptions {
        udid: Some(fake.udid().to_string()),
        wda: fake.url(),
    };
    assert!(IosDevice::connect(&right, None).is_ok(), "the control: its own UDID");
}

#[test]
fn a_session_is_deleted_however_the_trail_ends() {
    let fake = FakeWda::demo();
    let f = Fixture::demo();
    let trails = f.map_dir().join("trails");
    // A trail that fails (its assertion does not hold) and one whose script throws.
    std::fs::write(
        trails.join("fails.trail.yaml"),
        "config: { id: demo/fails, target: demo }\ntrail:\n  - step: launch\n    recording:\n      tools:\n        - launchApp: { appId: com.example.demo }\n  - verify: nothing\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { iosMaestro: { textRegex: No such screen } } }\n",
    )
    .expect("trail");
    std::fs::write(
        trails.join("throws.trail.yaml"),
        "config: { id: demo/throws, target: demo }\ntrail:\n  - step: open a message that is not there\n    recording:\n      tools:\n        - launchApp: { appId: com.example.demo }\n        - openMessage: { index: 9 }\n",
    )
    .expect("trail");
    let dir = f.dir.path().join("ends");
    let device = format!("ios:{}", fake.url());
    let (o, out, err) = run_demo(&f, &[&device], &dir, &[]);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("3 passed, 2 failed"), "{out}{err}");
    assert!(fake.sessions_created() >= 5);
    assert_eq!(
        fake.sessions_created(),
        fake.sessions_deleted(),
        "every way of ending deletes its session"
    );
}

#[test]
fn a_wda_that_stops_answering_mid_trail_sends_its_trail_to_the_other_iphone() {
    let a = FakeWda::with_udid("IPHONE-A", trailblaze_e2e::fake_wda::SimApp::demo());
    let b = FakeWda::with_udid("IPHONE-B", trailblaze_e2e::fake_wda::SimApp::demo());
    let f = Fixture::demo();
    let dir = f.dir.path().join("lost");
    let (da, db) = (format!("ios:IPHONE-A@{}", a.url()), format!("ios:IPHONE-B@{}", b.url()));
    // B dies after its first screen read: mid-trail.
    let (o, out, err) = std::thread::scope(|sc| {
        sc.spawn(|| {
            for _ in 0..6000 {
                if b.source_requests() >= 1 {
                    b.stop();
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        run_demo(&f, &[&da, &db], &dir, &["--wall-timeout", "5"])
    });
    assert_eq!(o.status.code(), Some(0), "every trail passed in the end: {out}{err}");
    assert!(
        err.contains("ios:IPHONE-B was lost") && err.contains("runs again"),
        "{err}"
    );
    let r = report(&dir);
    let trails = r["trails"].as_array().cloned().unwrap_or_default();
    assert_eq!(trails.len(), 3);
    assert!(
        trails
            .iter()
            .all(|t| t["outcome"]["status"] == "passed" && t["device"] == "ios:IPHONE-A"),
        "{r}"
    );
    assert!(
        trails.iter().any(|t| t["lost_devices"] == json!(["ios:IPHONE-B"])),
        "{r}"
    );
}

#[test]
fn devices_lists_the_wda_endpoints_iphone() {
    let fake = FakeWda::demo();
    let f = Fixture::demo();
    let o = in_dir(&f, f.dir.path(), &["devices", "--wda-url", &fake.url()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("ios:{}", fake.udid())) && l.contains("17.5")),
        "{out}"
    );
    // Control: no WDA there is a note, not a failure.
    let o = in_dir(&f, f.dir.path(), &["devices", "--wda-url", "http://127.0.0.1:9"]);
    let (out, err) = text(&o);
    assert!(
        o.status.success() && !out.contains("ios:") && err.contains("WebDriverAgent"),
        "{out}{err}"
    );
}

#[test]
fn a_tap_on_a_text_just_typed_into_a_search_field_opens_the_result_not_the_field() {
    let f = Fixture::new("demo");
    let fake = FakeWda::contacts();
    let (_p, s) = ios_session(&f, &fake);
    s.call(
        "launchApp",
        json!({ "appId": "com.apple.MobileAddressBook", "launchMode": "FORCE_RESTART" }),
    )
    .expect("launch");
    s.call("tapOnElementWithText", json!({ "text": "Search" }))
        .expect("focus the search");
    s.call("inputText", json!({ "text": "John Appleseed" })).expect("type");
    // The field now holds the very text of the row: the row is tapped.
    s.call("tapOnElementWithText", json!({ "text": "John Appleseed" }))
        .expect("tap the row");
    let found = s
        .call(
            "findMatches",
            json!({ "selector": { "iosMaestro": { "accessibilityTextRegex": "Edit" } } }),
        )
        .expect("find");
    assert!(found.to_string().contains("Edit"), "the detail screen: {found}");
    // Control: a text only the field holds still taps the field.
    s.call("pressKey", json!({ "keyCode": "HOME" })).expect("home");
    s.call(
        "launchApp",
        json!({ "appId": "com.apple.MobileAddressBook", "launchMode": "FORCE_RESTART" }),
    )
    .expect("launch");
    s.call("tapOnElementWithText", json!({ "text": "Search" }))
        .expect("focus");
    s.call("inputText", json!({ "text": "Zz" })).expect("type");
    s.call("tapOnElementWithText", json!({ "text": "Zz" }))
        .expect("the field is the only match");
    let reqs = fake.requests();
    assert!(
        reqs.iter()
            .any(|q| q.path.ends_with("/wda/pressButton") && q.body.contains("home"))
    );
}

/// The ref of the snapshot line holding `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in:\n{snapshot}"));
    line.trim_start()[1..].split(']').next().unwrap_or_default().to_string()
}

#[test]
fn a_shell_session_on_an_iphone_saves_a_trail_keyed_for_iphones_that_replays_green() {
    let f = Fixture::demo();
    // The sign-in screen's refs, read on a fake of its own (refs come from what a node is).
    let (email, password, sign_in) = {
        let other = FakeWda::demo();
        let (_p, s) = ios_session(&f, &other);
        s.call("launchApp", json!({ "appId": "com.example.demo" }))
            .expect("launch");
        let snap = s.call("snapshot", json!({})).expect("snapshot")["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (
            ref_of(&snap, "hint=\"Email\""),
            ref_of(&snap, "hint=\"Password\""),
            ref_of(&snap, "\"Sign in\""),
        )
    };
    let fake = FakeWda::demo();
    let script = format!(
        "launchApp appId=com.example.demo\nsnapshot\ntap {email}\ntype jane@example.com\n\
         type {{{{secret:DEMO_PASSWORD}}}} {password}\ntap {sign_in}\nsnapshot\nsave iphone-login\nquit\n"
    );
    let mut child = std::process::Command::new(trailblaze_e2e::trailblaze_bin())
        .current_dir(f.dir.path())
        .args(["shell", "--device", &format!("ios:{}", fake.url())])
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", PASSWORD)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("shell starts");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), script.as_bytes()).expect("lines");
    let o = child.wait_with_output().expect("shell ends");
    let (out, err) = text(&o);
    assert!(
        o.status.success() && out.contains("Inbox") && out.contains("Saved "),
        "{out}{err}"
    );
    let saved = f.map_dir().join("trails/iphone-login.trail.yaml");
    let yaml = std::fs::read_to_string(&saved).expect("the trail was written");
    assert!(
        yaml.contains("ios-iphone:") && yaml.contains("iosMaestro") && !yaml.contains("tools:"),
        "{yaml}"
    );
    assert!(
        yaml.contains("{{secret:DEMO_PASSWORD}}") && !yaml.contains(PASSWORD),
        "{yaml}"
    );
    assert_eq!(
        fake.sessions_created(),
        fake.sessions_deleted(),
        "the shell's session ended with it"
    );
    // Both gates pass it, and it replays green on another iPhone.
    let o = in_dir(&f, f.dir.path(), &["check", saved.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o).0, text(&o).1);
    let again = FakeWda::demo();
    let dir = f.dir.path().join("again");
    let run = |device: &str| {
        std::process::Command::new(trailblaze_e2e::trailblaze_bin())
            .current_dir(f.dir.path())
            .args([
                "run",
                saved.to_str().unwrap_or_default(),
                "--device",
                device,
                "--report-dir",
            ])
            .arg(&dir)
            .env("TRAILBLAZE_CACHE_DIR", f.cache())
            .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", PASSWORD)
            .env("NO_COLOR", "1")
            .output()
            .expect("run")
    };
    let o = run(&format!("ios:{}", again.url()));
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o).0, text(&o).1);
    // Control: the simulated Android phone has no recording for it.
    let o = run("sim");
    assert_ne!(o.status.code(), Some(0), "{}", text(&o).0);
    assert!(text(&o).0.contains("not recorded"), "{}", text(&o).0);
}

#[test]
fn ios_waypoints_match_on_an_iphone_and_one_shot_commands_find_the_app_as_it_was_left() {
    let f = Fixture::new("contacts");
    f.file(
        "trailmap.yaml",
        "id: contacts\ntarget:\n  display_name: Contacts\n  platforms:\n    ios:\n      app_ids: [com.apple.MobileAddressBook]\n",
    );
    f.file(
        "waypoints/list.waypoint.yaml",
        "id: contacts/ios/list\nios:\n  required:\n    - selector: { iosMaestro: { accessibilityTextRegex: Add } }\n\
         ios-iphone:\n  forbidden:\n    - selector: { iosMaestro: { accessibilityTextRegex: Edit } }\n",
    );
    f.file(
        "waypoints/detail.waypoint.yaml",
        "id: contacts/ios/detail\nios:\n  required:\n    - selector: { iosMaestro: { accessibilityTextRegex: Edit } }\n",
    );
    let fake = FakeWda::contacts();
    {
        // A session launches the app and ends: the app stays in front (`shouldTerminateApp: false`).
        let mut d = connect(&fake);
        d.launch_app("com.apple.MobileAddressBook", LaunchMode::ForceRestart)
            .expect("launch");
    }
    let device = format!("ios:{}", fake.url());
    let o = in_dir(&f, f.dir.path(), &["snapshot", "--device", &device]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("Button \"Add\""), "{out}{err}");
    let o = in_dir(&f, f.dir.path(), &["waypoints", "--device", &device, "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    let here: Vec<&str> = v
        .as_array()
        .or_else(|| v["waypoints"].as_array())
        .into_iter()
        .flatten()
        .filter(|w| w["here"] == json!(true))
        .filter_map(|w| w["id"].as_str())
        .collect();
    assert_eq!(here, ["contacts/ios/list"], "{out}");
    // `tool` acts on the iPhone by ref, and the next command finds the screen it left.
    let snap = text(&in_dir(&f, f.dir.path(), &["snapshot", "--device", &device])).0;
    let add = ref_of(&snap, "Button \"Add\"");
    let o = in_dir(
        &f,
        f.dir.path(),
        &["tool", "--device", &device, "tap", &format!("ref={add}")],
    );
    assert!(o.status.success(), "{}{}", text(&o).0, text(&o).1);
    let o = in_dir(&f, f.dir.path(), &["waypoints", "--device", &device, "--json"]);
    let v: Value = serde_json::from_str(&text(&o).0).expect("JSON");
    assert!(
        !v.to_string().contains("\"here\":true"),
        "the new-contact form is neither waypoint: {v}"
    );
    let snap = text(&in_dir(&f, f.dir.path(), &["snapshot", "--device", &device])).0;
    assert!(snap.contains("\"New Contact\""), "{snap}");
}

#[test]
fn the_agent_signs_in_on_an_iphone_seeing_its_screen_with_the_password_field_painted_over() {
    use super::agent::{SIGN_IN, config, outcomes, project, script_inbox_check, script_sign_in, trail};
    use trailblaze::report::Outcome;
    use trailblaze_e2e::fake_llm::{FakeLlm, Wire};
    let fake = FakeWda::demo();
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let llm = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&llm);
    script_inbox_check(&llm);
    let p = project(&f, &[]);
    let mut opts = trailblaze::RunOptions {
        out: f.out(),
        device: trailblaze::device::DeviceSpec::Ios(options(&fake)),
        ..trailblaze::RunOptions::default()
    };
    let agent = config(&llm, Wire::OpenAi);
    trailblaze::agent::for_run(&p, Some(&agent), None, &mut opts);
    let out = trailblaze::run_trails(&p, std::slice::from_ref(&file), &opts, &mut ()).expect("runs");
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let requests = llm.requests();
    // What the model read is the iPhone's tree, with the picture WDA took.
    let first = requests[0].body.clone();
    assert!(
        first.contains("SecureTextField") && first.contains("hint=\\\"Password\\\""),
        "{first}"
    );
    let pictures = super::vision::images(&requests[0]);
    assert_eq!(pictures.len(), 1);
    assert_eq!(pictures[0].0, "image/png");
    // After the password was typed, its field is one solid mask in the picture; the email's is not.
    let after = super::vision::images(&requests[2])
        .pop()
        .expect("a picture after typing")
        .1;
    let png = crate::png_image::Png::decode(&after);
    let (other, other_fixture) = (FakeWda::demo(), Fixture::new("demo"));
    let (_p2, s) = ios_session(&other_fixture, &other);
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let tree = trailblaze_e2e::device_tree(&s);
    let screen = (tree.width, tree.height);
    let field = |id: &str| find(&tree.root, id).map(|n| n.bounds).expect("field");
    let mask = trailblaze::agent::vision::MASK;
    let pw = super::vision::region(&png, field("password"), screen);
    assert!(
        !pw.is_empty() && pw.iter().all(|p| p[..3] == mask),
        "the password field is painted over"
    );
    let email = super::vision::region(&png, field("email"), screen);
    assert!(!email.iter().all(|p| p[..3] == mask), "control: the email field is not");
    for r in &requests {
        assert!(!r.body.contains(PASSWORD), "no request holds the password");
    }
    // What the agent's taps recorded is the iPhone's selector form.
    let report = serde_json::to_string(&out.report).expect("JSON");
    assert!(report.contains("iosMaestro"), "{report}");
}

#[test]
fn an_mcp_client_drives_the_iphone_and_saves_its_session_keyed_for_iphones() {
    use super::mcp::{assert_ok, call, drive};
    let f = Fixture::demo();
    let fake = FakeWda::demo();
    {
        let mut d = connect(&fake);
        d.launch_app("com.example.demo", LaunchMode::Reinstall).expect("launch");
    }
    let bin = trailblaze_e2e::trailblaze_bin();
    let root = f.root();
    let device = format!("ios:{}", fake.url());
    let args = [
        "stdio",
        bin.to_str().expect("utf-8"),
        "--trailmaps",
        root.to_str().expect("utf-8"),
        "mcp",
        "--device",
        &device,
    ];
    let mut env = std::process::Command::new("true");
    env.env("TRAILBLAZE_OUT", f.out())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", PASSWORD)
        .env("NO_COLOR", "1");
    let (r, _) = drive(&args, &json!([call("snapshot", json!({}))]), &env);
    let snap = super::mcp::text(&r[0]).to_string();
    let (email, password, submit) = (
        ref_of(&snap, "hint=\"Email\""),
        ref_of(&snap, "hint=\"Password\""),
        ref_of(&snap, "Button \"Sign in\""),
    );
    let ops = json!([
        call("type", json!({ "text": "jane@example.com", "ref": email })),
        call("type", json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": password })),
        call("tap", json!({ "ref": submit })),
        call("snapshot", json!({})),
        call("saveTrail", json!({ "name": "mcp-iphone" })),
    ]);
    let (r, err) = drive(&args, &ops, &env);
    for (i, what) in ["type", "type secret", "tap", "snapshot", "saveTrail"]
        .iter()
        .enumerate()
    {
        assert_ok(&r[i], what);
    }
    assert!(
        super::mcp::text(&r[3]).contains("Inbox"),
        "signed in: {}",
        super::mcp::text(&r[3])
    );
    assert!(!err.contains(PASSWORD));
    let saved = std::fs::read_to_string(f.map_dir().join("trails/mcp-iphone.trail.yaml")).expect("saved");
    assert!(
        saved.contains("ios-iphone:") && saved.contains("iosMaestro") && !saved.contains(PASSWORD),
        "{saved}"
    );
    assert_eq!(fake.sessions_created(), fake.sessions_deleted());
}
