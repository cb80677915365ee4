//! The Android device over the real adb protocol, against a fake device (tests/fake_adb) that
//! serves the demo app; the fake itself checked against Debian's real `adb` client.

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use trailblaze::SessionOptions;
use trailblaze::android::{self, AdbDevice, AdbOptions};
use trailblaze::device::{Device, DeviceError, LaunchMode, ViewNode, ViewTree};
use trailblaze_e2e::fake_adb::{FakeAdb, crc32};
use trailblaze_e2e::{Fixture, field_text, log_events};

const SERIAL: &str = "emulator-5554";

fn connect(fake: &FakeAdb) -> AdbDevice {
    AdbDevice::connect(fake.addr(), None, AdbOptions::default()).expect("connects to the fake")
}

fn find<'a>(n: &'a ViewNode, id: &str) -> Option<&'a ViewNode> {
    if n.resource_id
        .as_deref()
        .is_some_and(|r| r.ends_with(&format!(":id/{id}")))
    {
        return Some(n);
    }
    n.children.iter().find_map(|c| find(c, id))
}

fn center(tree: &ViewTree, id: &str) -> (i32, i32) {
    find(&tree.root, id)
        .unwrap_or_else(|| panic!("no node {id}"))
        .bounds
        .center()
}

/// The demo app launched, the email field focused.
fn email_focused(fake: &FakeAdb) -> AdbDevice {
    let mut d = connect(fake);
    d.launch_app("com.example.demo", LaunchMode::Reinstall).expect("launch");
    let (x, y) = center(&d.snapshot().expect("snapshot"), "email");
    d.tap(x, y).expect("tap email");
    d
}

/// Debian's `adb`; a failure when it is missing, unless `TRAILBLAZE_ALLOW_MISSING` names it (`None`).
pub(crate) fn real_adb() -> Option<&'static str> {
    if Command::new("adb")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some("adb");
    }
    trailblaze_e2e::missing_tool("adb", "adb");
    None
}

/// Runs the real client against the fake; a client that hangs (waiting for an answer the fake
/// never gives) is killed and fails the test instead of blocking the suite.
pub(crate) fn adb_output(adb: &str, port: u16, args: &[&str]) -> std::process::Output {
    let child = Command::new(adb)
        .arg("-P")
        .arg(port.to_string())
        .args(args)
        .env_remove("ADB_SERVER_SOCKET")
        .env_remove("ANDROID_SERIAL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("adb runs");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("adb output"),
        Err(_) => {
            let _ = Command::new("kill").arg(id.to_string()).status();
            panic!("adb {args:?} hung against the fake");
        }
    }
}

fn run_adb(adb: &str, port: u16, args: &[&str]) -> Vec<u8> {
    let out = adb_output(adb, port, args);
    assert!(
        out.status.success(),
        "adb {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn the_real_adb_client_sees_a_device_that_answers_as_android_does() {
    let Some(adb) = real_adb() else { return };
    let fake = FakeAdb::demo(SERIAL);
    let devices = String::from_utf8(run_adb(adb, fake.port(), &["devices"])).expect("utf8");
    assert!(devices.contains(&format!("{SERIAL}\tdevice")), "{devices}");
    let long = String::from_utf8(run_adb(adb, fake.port(), &["devices", "-l"])).expect("utf8");
    assert!(
        long.contains("model:Pixel_7") && long.contains("transport_id:1"),
        "{long}"
    );

    let dump =
        String::from_utf8(run_adb(adb, fake.port(), &["shell", "uiautomator", "dump", "/dev/tty"])).expect("utf8");
    assert!(
        dump.starts_with("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\" text=\"\" resource-id=\"\" class=\"android.widget.FrameLayout\" package=\"com.example.demo\" content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"false\" enabled=\"true\" focusable=\"false\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" password=\"false\" selected=\"false\" bounds=\"[0,0][1080,2400]\""),
        "{dump}"
    );
    assert!(
        dump.ends_with("</hierarchy>UI hierchary dumped to: /dev/tty\n"),
        "{dump}"
    );
    let tree = android::wire::parse_dump(&dump).expect("the dump parses");
    assert_eq!(
        find(&tree.root, "email").and_then(|n| n.hint_text.as_deref()),
        Some("Email")
    );

    let png = run_adb(adb, fake.port(), &["exec-out", "screencap", "-p"]);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().expect("4")), 1080);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().expect("4")), 2400);
    let ihdr_crc = u32::from_be_bytes(png[29..33].try_into().expect("4"));
    assert_eq!(
        crc32(&png[12..29]),
        ihdr_crc,
        "IHDR's CRC is valid: exec-out kept the bytes exact"
    );
    assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]));

    // Control: a command the fake cannot run fails through the real client as on Android.
    let out = adb_output(adb, fake.port(), &["shell", "no-such-tool"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inaccessible or not found"));
}

#[test]
fn devices_are_listed_and_chosen_by_serial() {
    let fake = FakeAdb::demo(SERIAL);
    let list = android::list_devices(fake.addr()).expect("lists");
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].serial.as_str(), list[0].state.as_str()), (SERIAL, "device"));
    assert_eq!(list[0].model.as_deref(), Some("Pixel_7"));
    let d = AdbDevice::connect(fake.addr(), Some(SERIAL), AdbOptions::default()).expect("by serial");
    assert_eq!(d.name(), format!("adb:{SERIAL}"));
    let err = AdbDevice::connect(fake.addr(), Some("R58M123"), AdbOptions::default()).expect_err("wrong serial");
    assert!(matches!(err, DeviceError::Io(_)));
    assert!(
        err.to_string().contains("R58M123") && err.to_string().contains(SERIAL),
        "{err}"
    );
    // No server at all: a clear error naming the address.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let err = android::list_devices(closed).expect_err("nothing listens there");
    assert!(
        err.to_string().contains(&closed.to_string()) && err.to_string().contains("adb start-server"),
        "{err}"
    );
}

const HOSTILE: &[&str] = &[
    "jane@example.com",
    "two words  and  spaces",
    "it's \"quoted\"",
    "a&b;c|d && e || f",
    "$HOME $(reboot) `id` ${x}",
    "back\\slash \\n",
    "*?[a-z]~#!",
    "%s",
    "100%sure %%s %",
    "line1\nline2\n",
    "<>()'{}'",
];

#[test]
fn hostile_text_arrives_byte_exact() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = email_focused(&fake);
    let mut expected_field = String::new();
    for s in HOSTILE {
        let before = fake.phone().typed.len();
        d.input_text(s).expect("types");
        assert_eq!(&fake.phone().typed[before..], *s, "typing {s:?}");
        expected_field.push_str(&s.replace('\n', ""));
    }
    // The field holds the text (ENTER is a key, not a character, in the demo's one-line field).
    let tree = d.snapshot().expect("snapshot");
    assert_eq!(
        find(&tree.root, "email").and_then(|n| n.text.clone()),
        Some(expected_field)
    );
}

#[test]
fn the_fake_shell_sees_injection_and_input_text_rules() {
    // Controls for the test above: unquoted metacharacters are refused, and `%s` sent as is becomes
    // a space, as on Android.
    let fake = FakeAdb::demo(SERIAL);
    let _d = email_focused(&fake);
    let mut phone = fake.phone();
    // `;` ends the command: only `a` is typed and `reboot` runs (here: is not found).
    let run = phone.run("input text a;reboot");
    assert_eq!((run.exit, phone.typed.as_str()), (127, "a"));
    assert_eq!(phone.run("input text b|reboot").exit, 2, "a pipe is refused outright");
    assert_eq!(phone.run("input text 100%sure").exit, 0);
    assert_eq!(phone.typed, "a100 ure");
    assert_ne!(
        phone.run("input text 'café'").exit,
        0,
        "input text cannot type non-ASCII"
    );
    assert_eq!(phone.typed, "a100 ure");
}

#[test]
fn unicode_text_goes_through_adbkeyboard_or_fails_clearly() {
    let text = "Zoë ✓ 日本 %s\n";
    let fake = FakeAdb::demo(SERIAL);
    let mut d = email_focused(&fake);
    let err = d.input_text(text).expect_err("no IME: refused");
    assert!(matches!(err, DeviceError::Action(_)), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("ADBKeyboard") && msg.contains("com.android.adbkeyboard") && msg.contains(SERIAL),
        "{msg}"
    );
    assert!(
        !msg.contains("Zoë"),
        "the error never repeats the text (it may be a secret): {msg}"
    );
    assert_eq!(fake.phone().typed, "", "nothing else was typed instead");
    assert!(!fake.phone().commands.iter().any(|c| c.starts_with("input text")));

    let fake = FakeAdb::demo(SERIAL);
    fake.phone().ime_installed = true;
    let mut d = email_focused(&fake);
    d.input_text(text).expect("types through ADBKeyboard");
    assert_eq!(fake.phone().typed, text);
    let tree = d.snapshot().expect("snapshot");
    assert_eq!(
        find(&tree.root, "email").and_then(|n| n.text.clone()).as_deref(),
        Some(text)
    );
    assert!(
        fake.phone()
            .commands
            .iter()
            .any(|c| c == "ime set 'com.android.adbkeyboard/.AdbIME'")
    );
    // ASCII still types with plain `input`.
    d.input_text("ok").expect("ascii");
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("input text 'ok'")
    );
}

#[test]
fn a_device_that_vanishes_mid_step_is_an_io_error_naming_it() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = email_focused(&fake);
    fake.drop_on("input text");
    let err = d.input_text("secret-ish").expect_err("the device vanished");
    assert!(matches!(err, DeviceError::Io(_)), "{err:?}");
    assert!(err.to_string().contains(&format!("adb:{SERIAL}")), "{err}");
    assert!(!err.to_string().contains("secret-ish"), "{err}");
    assert!(fake.is_gone());
    let err = d.snapshot().expect_err("still gone");
    assert!(
        matches!(err, DeviceError::Io(_)) && err.to_string().contains(SERIAL),
        "{err}"
    );
    // Control: before the drop, the same call works on the same kind of device.
    let fake = FakeAdb::demo(SERIAL);
    email_focused(&fake)
        .input_text("secret-ish")
        .expect("works while connected");
}

#[test]
fn a_slow_device_is_waited_for_and_a_stuck_one_times_out() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = connect(&fake);
    fake.set_delay(Duration::from_millis(100));
    for _ in 0..3 {
        d.snapshot().expect("slow but answers");
    }
    assert_eq!(d.captures(), 3);
    assert_eq!(fake.phone().dumps, 3, "one dump per capture, no retries");

    let opts = AdbOptions {
        call_timeout: Duration::from_millis(300),
        ..AdbOptions::default()
    };
    let mut d = AdbDevice::connect(fake.addr(), None, opts).expect("connects");
    fake.set_delay(Duration::from_secs(3));
    let err = d.tap(10, 10).expect_err("stuck");
    assert!(matches!(err, DeviceError::Io(_)), "{err:?}");
    assert!(
        err.to_string().contains(SERIAL) && err.to_string().contains("did not answer"),
        "{err}"
    );
}

#[test]
fn launch_modes_map_to_pm_clear_force_stop_and_resume() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = email_focused(&fake);
    d.input_text("kept").expect("types");
    d.launch_app("com.example.demo", LaunchMode::Resume).expect("resume");
    assert_eq!(
        field_text(&d.snapshot().expect("snap"), "email").as_deref(),
        Some("kept")
    );
    d.launch_app("com.example.demo", LaunchMode::ForceRestart)
        .expect("restart");
    assert_eq!(field_text(&d.snapshot().expect("snap"), "email").as_deref(), Some(""));
    d.launch_app("com.example.demo", LaunchMode::Reinstall)
        .expect("reinstall");
    let cmds = fake.phone().commands.clone();
    let starts: Vec<&String> = cmds
        .iter()
        .filter(|c| c.starts_with("pm clear") || c.starts_with("am force-stop") || c.starts_with("monkey"))
        .collect();
    assert_eq!(
        starts,
        [
            "pm clear 'com.example.demo'",
            "monkey -p 'com.example.demo' -c android.intent.category.LAUNCHER 1",
            "monkey -p 'com.example.demo' -c android.intent.category.LAUNCHER 1",
            "am force-stop 'com.example.demo'",
            "monkey -p 'com.example.demo' -c android.intent.category.LAUNCHER 1",
            "pm clear 'com.example.demo'",
            "monkey -p 'com.example.demo' -c android.intent.category.LAUNCHER 1",
        ]
    );
    let err = d
        .launch_app("com.example.other", LaunchMode::Resume)
        .expect_err("not installed");
    assert!(err.to_string().contains("not installed"), "{err}");
    let err = d
        .launch_app("com.example;reboot", LaunchMode::Resume)
        .expect_err("not a package");
    assert!(err.to_string().contains("not an Android package name"), "{err}");
}

/// A dump in real form written by hand: a NAF button, a list inside a scroll view, a password
/// field, non-ASCII text, an Android 14 field without the `hint` attribute.
const HAND_DUMP: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]"><node NAF="true" index="0" text="" resource-id="" class="android.widget.ImageButton" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,63][147,210]" /><node index="1" text="" resource-id="com.example.shop:id/scroll" class="android.widget.ScrollView" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="true" focused="false" scrollable="true" long-clickable="false" password="false" selected="false" bounds="[0,210][1080,2200]"><node index="0" text="" resource-id="com.example.shop:id/list" class="androidx.recyclerview.widget.RecyclerView" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="true" focused="false" scrollable="true" long-clickable="false" password="false" selected="false" bounds="[0,210][1080,1200]"><node index="0" text="Crème brûlée — 4,50 €" resource-id="com.example.shop:id/title" class="android.widget.TextView" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,210][1080,400]" /><node index="1" text="抹茶ラテ" resource-id="com.example.shop:id/title" class="android.widget.TextView" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,400][1080,590]" /></node><node index="1" text="Card number" resource-id="com.example.shop:id/card" class="android.widget.EditText" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false" bounds="[42,1250][1038,1380]" /><node index="2" text="••••" resource-id="com.example.shop:id/pin" class="android.widget.EditText" package="com.example.shop" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="true" password="true" selected="false" bounds="[42,1400][1038,1530]" /></node></node></hierarchy>"#;

/// A session on an `AdbDevice` connected to `fake`, writing its log under `f.out()`.
fn adb_session(f: &Fixture, fake: &FakeAdb) -> (trailblaze::Project, trailblaze::Session) {
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
        .expect("session on the adb device");
    (project, s)
}

fn selector(android: serde_json::Value) -> serde_json::Value {
    json!({ "nodeSelector": { "androidAccessibility": android } })
}

fn last_tap(fake: &FakeAdb) -> Option<String> {
    fake.phone()
        .commands
        .iter()
        .rev()
        .find(|c| c.starts_with("input tap"))
        .cloned()
}

#[test]
fn selectors_resolve_against_real_form_dumps() {
    let f = Fixture::new("demo");
    let fake = FakeAdb::demo(SERIAL);
    fake.phone().dump_override = Some(HAND_DUMP.to_owned());
    let (_p, s) = adb_session(&f, &fake);
    let visible = |sel: serde_json::Value| s.call("assertVisibleBySelector", selector(sel)).is_ok();
    let tap = |sel: serde_json::Value| {
        s.call("tapOnElementBySelector", selector(sel.clone()))
            .unwrap_or_else(|e| panic!("{sel}: {e}"));
        last_tap(&fake)
    };
    // Non-ASCII text, in a list nested in a scroll view: the row's own centre is tapped.
    assert_eq!(
        tap(json!({ "textRegex": "抹茶.*" })).as_deref(),
        Some("input tap 540 495")
    );
    assert_eq!(
        tap(json!({ "textRegex": "Crème brûlée — 4,50 €" })).as_deref(),
        Some("input tap 540 305")
    );
    let nested = json!({ "nodeSelector": {
        "androidAccessibility": { "resourceIdRegex": ".*:id/title" },
        "childOf": { "androidAccessibility": { "resourceIdRegex": ".*:id/list" },
                     "childOf": { "androidAccessibility": { "resourceIdRegex": ".*:id/scroll" } } },
        "index": 1 } });
    s.call("tapOnElementBySelector", nested).expect("nested scrollables");
    assert_eq!(last_tap(&fake).as_deref(), Some("input tap 540 495"));
    // The NAF button: no label, found by class; the password field by its flag.
    assert_eq!(
        tap(json!({ "classNameRegex": ".*ImageButton", "isClickable": true })).as_deref(),
        Some("input tap 73 136")
    );
    assert_eq!(
        tap(json!({ "isPassword": true, "isFocused": true })).as_deref(),
        Some("input tap 540 1465")
    );
    // Below Android 16 there is no `hint`: the empty field's hint reads as its text.
    assert!(visible(json!({ "textRegex": "Card number", "isEditable": true })));
    assert!(!visible(json!({ "hintTextRegex": "Card number" })));
    // Controls: a selector that matches nothing is not visible, and the app's own screen (with
    // Android 16's `hint`) finds the empty field by hint, not by text.
    assert!(!visible(json!({ "textRegex": "Matcha" })));
    fake.phone().dump_override = None;
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    assert!(visible(json!({ "hintTextRegex": "Email" })));
    assert!(!visible(json!({ "textRegex": "Email" })));
}

#[test]
fn the_demo_sign_in_runs_through_a_session_on_an_adb_device() {
    let f = Fixture::new("demo");
    let fake = FakeAdb::demo(SERIAL);
    let (_p, s) = adb_session(&f, &fake);
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    s.call(
        "tapOnElementBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } }),
    )
    .expect("tap email");
    s.call("inputText", json!({ "text": "jane@example.com" }))
        .expect("email");
    s.call(
        "inputText",
        json!({ "text": "hunter2", "nodeSelector": { "androidAccessibility": { "resourceIdRegex": ".*:id/password" } } }),
    )
    .expect("password");
    s.call(
        "tapOnElementBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Sign in" } } }),
    )
    .expect("sign in");
    s.call(
        "assertVisibleBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Inbox" } } }),
    )
    .expect("the inbox is shown");
    assert_eq!(fake.phone().sim.current_screen(), Some("inbox"));
    assert!(fake.phone().commands.iter().any(|c| c == "input text 'hunter2'"));

    // The device vanishes on the next tap: a device failure naming it, and the steps before it stay logged.
    fake.drop_on("input tap");
    let err = s
        .call(
            "tapOnElementBySelector",
            json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "Settings" } } }),
        )
        .expect_err("the device is gone");
    assert!(err.is_device_failure(), "{err:?}");
    assert!(err.to_string().contains(&format!("adb:{SERIAL}")), "{err}");
    drop(s);
    let events = log_events(&f.out());
    let tools: Vec<String> = events
        .iter()
        .filter_map(|e| e.get("tool").and_then(|t| t.as_str()).map(str::to_owned))
        .collect();
    for t in ["launchApp", "inputText", "assertVisibleBySelector"] {
        assert!(tools.iter().any(|x| x == t), "{t} is in log.jsonl: {tools:?}");
    }
}

#[test]
fn swipe_drags_on_the_phone_and_changes_nothing_on_the_sim() {
    let f = Fixture::demo();
    let fake = FakeAdb::demo(SERIAL);
    let (_p, s) = adb_session(&f, &fake);
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let v = s.call("swipe", json!({ "direction": "UP" })).expect("swipes");
    let (from, to) = (&v["from"], &v["to"]);
    assert_eq!(from["x"], to["x"], "a vertical swipe: {v}");
    assert!(to["y"].as_i64() < from["y"].as_i64(), "UP moves the finger up: {v}");
    let sent = fake
        .phone()
        .commands
        .iter()
        .rev()
        .find(|c| c.starts_with("input swipe"))
        .cloned();
    assert_eq!(
        sent,
        Some(format!(
            "input swipe {} {} {} {} 400",
            from["x"], from["y"], to["x"], to["y"]
        ))
    );
    // On an element, by its text; a text nothing shows is a failed call naming the selector's field.
    let v = s
        .call("swipe", json!({ "direction": "LEFT", "swipeOnElementText": "Sign in" }))
        .expect("on a field");
    assert!(v["to"]["x"].as_i64() < v["from"]["x"].as_i64(), "{v}");
    let err = s
        .call("swipe", json!({ "swipeOnElementText": "No such text" }))
        .expect_err("nothing matches");
    assert!(err.to_string().contains("`swipeOnElementText`"), "{err}");
    // The sim: the swipe is accepted and the screen stays as it was (its app has nothing to scroll).
    let sim = f.project();
    let sim = sim
        .open_session("demo", SessionOptions::default())
        .expect("sim session");
    sim.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let before = sim.call("snapshot", json!({})).expect("snapshot")["text"].clone();
    sim.call("swipe", json!({ "direction": "DOWN", "reasoning": "see more" }))
        .expect("sim swipe");
    assert_eq!(sim.call("snapshot", json!({})).expect("snapshot")["text"], before);
    let err = sim
        .call("swipe", json!({ "direction": "SIDEWAYS" }))
        .expect_err("bad direction");
    assert!(err.to_string().contains("direction"), "{err}");
}
