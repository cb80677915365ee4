//! The device against a fake WDA: which requests each call sends, and how it fails.

use std::time::{Duration, Instant};

use serde_json::json;
use trailblaze_core::device::{Device, DeviceError, KeyCode, LaunchMode, Platform};

use crate::IosDevice;
use crate::fake_wda::{FakeWda, Reply, Req, SESSION, ok, standard, wda_error};

fn connect(wda: &FakeWda) -> IosDevice {
    IosDevice::connect(&wda.options(None), None).expect("connects")
}

/// The requests after the four a connect makes.
fn after_connect(wda: &FakeWda) -> Vec<Req> {
    wda.requests().into_iter().skip(4).collect()
}

fn s(suffix: &str) -> String {
    format!("/session/{SESSION}{suffix}")
}

#[test]
fn connect_opens_a_session_reads_the_screen_and_drop_deletes_the_session() {
    let wda = FakeWda::start(standard);
    let phone = connect(&wda);
    let port = wda.url.rsplit(':').next().unwrap_or_default();
    assert_eq!(phone.name(), format!("ios:127.0.0.1:{port}"));
    assert_eq!(phone.platform(), Platform::Ios);
    assert_eq!(phone.classifier().as_deref(), Some("ios-iphone"));
    let reqs = wda.requests();
    let seen: Vec<(&str, &str)> = reqs.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect();
    let (size, screen) = (s("/window/size"), s("/wda/screen"));
    assert_eq!(
        seen,
        [
            ("GET", "/status"),
            ("POST", "/session"),
            ("GET", size.as_str()),
            ("GET", screen.as_str())
        ]
    );
    assert_eq!(
        reqs[1].json(),
        json!({"capabilities": {"alwaysMatch": {"shouldTerminateApp": false}, "firstMatch": [{}]}})
    );
    drop(phone);
    let last = wda.requests().pop().expect("a request");
    assert!(last.is("DELETE", &s("")), "{last:?}");
}

#[test]
fn a_connect_that_fails_after_opening_a_session_deletes_it() {
    for size in [
        ok(json!({"width": "wide", "height": 852})),
        ok(json!({"width": -1, "height": 852})),
        wda_error(500, "unknown error", "no window"),
    ] {
        let size = std::sync::Mutex::new(Some(size));
        let wda = FakeWda::start(move |r| match r.path.ends_with("/window/size") {
            true => size.lock().ok().and_then(|mut s| s.take()).unwrap_or(Reply::Html),
            false => standard(r),
        });
        let e = IosDevice::connect(&wda.options(None), None).expect_err("no size");
        assert!(matches!(&e, DeviceError::Io(_)), "{e:?}");
        let last = wda.requests().pop().expect("a request");
        assert!(last.is("DELETE", &s("")), "{last:?}");
    }
}

#[test]
fn an_ipad_is_told_by_its_screen() {
    let wda = FakeWda::start(|r| {
        if r.path.ends_with("/window/size") {
            ok(json!({"width": 820.0, "height": 1180.0}))
        } else if r.path.ends_with("/wda/screen") {
            ok(json!({"scale": 2.0}))
        } else {
            standard(r)
        }
    });
    assert_eq!(connect(&wda).classifier().as_deref(), Some("ios-ipad"));
}

fn serving(udid: Option<&'static str>) -> FakeWda {
    FakeWda::start(move |r| match (r.path.as_str(), udid) {
        ("/status", Some(u)) => ok(json!({"ready": true, "udid": u, "device": "iPhone", "os": {"version": "17.4"}})),
        _ => standard(r),
    })
}

#[test]
fn a_udid_must_match_the_one_the_endpoint_serves() {
    let wda = serving(Some("AAAA-1111"));
    let e = IosDevice::connect(&wda.options(Some("BBBB-2222")), None).expect_err("another device");
    let DeviceError::Io(m) = e else { panic!("{e:?}") };
    assert!(
        m.contains("AAAA-1111") && m.contains("BBBB-2222") && m.contains("iOS 17.4"),
        "{m}"
    );
    // No session was opened for the wrong device.
    assert!(!wda.requests().iter().any(|r| r.path == "/session"));
    // Controls: the matching UDID, and none asked (the endpoint's then names the device).
    let phone = IosDevice::connect(&wda.options(Some("AAAA-1111")), None).expect("the same device");
    assert_eq!(
        (phone.name(), phone.udid()),
        ("ios:AAAA-1111".into(), Some("AAAA-1111"))
    );
    let phone = IosDevice::connect(&wda.options(None), None).expect("any device");
    assert_eq!(phone.name(), "ios:AAAA-1111");
    // Real WDA tells none: the UDID asked for is the device's name.
    let real = serving(None);
    let phone = IosDevice::connect(&real.options(Some("CCCC-3333")), None).expect("taken on trust");
    assert_eq!(phone.name(), "ios:CCCC-3333");
}

#[test]
fn a_wda_that_is_not_ready_or_not_wda_is_io() {
    let busy = FakeWda::start(|r| match r.path.as_str() {
        "/status" => ok(json!({"ready": false, "message": "busy"})),
        _ => standard(r),
    });
    let e = IosDevice::connect(&busy.options(None), None).expect_err("not ready");
    assert!(matches!(&e, DeviceError::Io(m) if m.contains("not ready")), "{e:?}");
    let html = FakeWda::start(|_| Reply::Html);
    let e = IosDevice::connect(&html.options(None), None).expect_err("not WDA");
    assert!(
        matches!(&e, DeviceError::Io(m) if m.contains("not WebDriverAgent's JSON") && m.contains("text/html")),
        "{e:?}"
    );
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let opts = trailblaze_core::device::spec::IosOptions {
        udid: None,
        wda: format!("http://127.0.0.1:{port}"),
    };
    let e = IosDevice::connect(&opts, None).expect_err("nobody there");
    assert!(matches!(&e, DeviceError::Io(m) if m.contains("refused")), "{e:?}");
}

#[test]
fn touches_keys_and_text_send_wda_requests() {
    let wda = FakeWda::start(standard);
    let mut phone = connect(&wda);
    phone.tap(120, 340).expect("tap");
    phone.long_press(5, 6).expect("long press");
    phone.swipe((200, 700), (200, 100), 400).expect("swipe");
    let text = "Zoë \"quoted\"\n👋🏽 שלום\\ end";
    phone.input_text(text).expect("text");
    phone.input_text("").expect("nothing to type");
    for key in [KeyCode::Enter, KeyCode::Backspace, KeyCode::Tab, KeyCode::Home] {
        phone.press_key(key).expect("key");
    }
    let reqs = after_connect(&wda);
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    let (actions, keys, button) = (s("/actions"), s("/wda/keys"), s("/wda/pressButton"));
    assert_eq!(
        paths,
        [&actions, &actions, &actions, &keys, &keys, &keys, &keys, &button].map(String::as_str)
    );
    assert!(reqs.iter().all(|r| r.method == "POST"));
    assert_eq!(reqs[0].json(), crate::w3c::press(120, 340, 100));
    assert_eq!(reqs[1].json(), crate::w3c::press(5, 6, 1000));
    assert_eq!(reqs[2].json(), crate::w3c::drag((200, 700), (200, 100), 400));
    // The text arrives byte-exact, as one string.
    assert_eq!(reqs[3].json(), json!({"value": [text]}));
    assert!(reqs[3].body.contains("👋🏽 שלום"), "{}", reqs[3].body);
    let typed: Vec<serde_json::Value> = reqs[4..7].iter().map(Req::json).collect();
    assert_eq!(
        typed,
        [
            json!({"value": ["\n"]}),
            json!({"value": ["\u{8}"]}),
            json!({"value": ["\t"]})
        ]
    );
    assert_eq!(reqs[7].json(), json!({"name": "home"}));
}

#[test]
fn back_escape_and_unknown_buttons_are_refused_without_a_request() {
    let wda = FakeWda::start(standard);
    let mut phone = connect(&wda);
    for key in [KeyCode::Back, KeyCode::Escape] {
        let e = phone.press_key(key).expect_err("no such key");
        assert!(
            matches!(&e, DeviceError::Action(m) if m.contains("iOS has no") && m.contains("back button")),
            "{e:?}"
        );
    }
    assert!(matches!(phone.press_button("power"), Err(DeviceError::Action(_))));
    assert!(after_connect(&wda).is_empty());
    phone.press_button("volumeUp").expect("a button");
    assert_eq!(after_connect(&wda)[0].json(), json!({"name": "volumeUp"}));
}

#[test]
fn launch_modes_map_to_wda_app_calls() {
    let wda = FakeWda::start(standard);
    let mut phone = IosDevice::connect(&wda.options(None), Some("com.example.hint")).expect("connects");
    assert_eq!(phone.app_id.as_deref(), Some("com.example.hint"));
    phone
        .launch_app("com.apple.Preferences", LaunchMode::Reinstall)
        .expect("reinstall");
    phone
        .launch_app("com.apple.Preferences", LaunchMode::ForceRestart)
        .expect("restart");
    phone
        .launch_app("com.apple.Preferences", LaunchMode::Resume)
        .expect("resume");
    phone.stop_app("com.apple.Preferences").expect("stop");
    phone.open_url("https://example.com/x?y=1").expect("url");
    let e = phone
        .launch_app("com.x; rm -rf", LaunchMode::Resume)
        .expect_err("not a bundle id");
    assert!(
        matches!(&e, DeviceError::Action(m) if m.contains("not an iOS bundle id")),
        "{e:?}"
    );
    let reqs = after_connect(&wda);
    let got: Vec<(String, serde_json::Value)> = reqs.iter().map(|r| (r.path.clone(), r.json())).collect();
    let app = json!({"bundleId": "com.apple.Preferences"});
    let (term, launch, act) = (s("/wda/apps/terminate"), s("/wda/apps/launch"), s("/wda/apps/activate"));
    assert_eq!(
        got,
        [
            (term.clone(), app.clone()),
            (launch.clone(), app.clone()),
            (term.clone(), app.clone()),
            (launch, app.clone()),
            (act, app.clone()),
            (term, app),
            (s("/url"), json!({"url": "https://example.com/x?y=1"})),
        ]
    );
    assert_eq!(phone.app_id.as_deref(), Some("com.apple.Preferences"));
}

#[test]
fn wda_errors_are_action_errors_and_never_echo_typed_text() {
    let wda = FakeWda::start(|r| {
        if r.path.ends_with("/wda/keys") || r.path.ends_with("/setPasteboard") {
            wda_error(400, "invalid element state", &format!("Failed to type '{}'", r.body))
        } else if r.path.ends_with("/actions") {
            wda_error(500, "unknown error", "Cannot tap\n  at FBTouch stack line")
        } else if r.path.ends_with("/wda/keyboard/dismiss") {
            wda_error(400, "invalid element state", "Did not know how to dismiss the keyboard")
        } else {
            standard(r)
        }
    });
    let mut phone = connect(&wda);
    let e = phone.tap(1, 2).expect_err("refused");
    let DeviceError::Action(m) = e else { panic!("{e:?}") };
    assert!(
        m.contains("unknown error: Cannot tap") && !m.contains("stack line"),
        "{m}"
    );
    for e in [
        phone.input_text("hunter2-secret").expect_err("refused"),
        phone.set_clipboard("hunter2-secret").expect_err("refused"),
    ] {
        let DeviceError::Action(m) = e else { panic!("{e:?}") };
        assert!(
            m.contains("14 characters") && m.contains("invalid element state"),
            "{m}"
        );
        assert!(!m.contains("hunter2") && !m.contains("Failed to type"), "{m}");
    }
    assert!(matches!(phone.hide_keyboard(), Err(DeviceError::Action(m)) if m.contains("dismiss")));
}

#[test]
fn hide_keyboard_tells_whether_one_was_shown() {
    let wda = FakeWda::start(|r| match r.path.ends_with("/wda/keyboard/dismiss") {
        true => wda_error(400, "invalid element state", "The keyboard is not present"),
        false => standard(r),
    });
    let mut phone = connect(&wda);
    assert!(!phone.hide_keyboard().expect("no keyboard is not an error"));
    assert_eq!(after_connect(&wda)[0].path, s("/wda/keyboard/dismiss"));
    let shown = FakeWda::start(standard);
    assert!(connect(&shown).hide_keyboard().expect("dismissed"));
}

#[test]
fn a_wda_that_stops_answering_fails_within_the_deadline_and_then_at_once() {
    let wda = FakeWda::start(|r| match r.path.ends_with("/source") {
        true => Reply::Hang,
        false => standard(r),
    });
    let mut phone = connect(&wda);
    phone.set_deadline(Some(Instant::now() + Duration::from_millis(300)));
    let started = Instant::now();
    let e = phone.snapshot().expect_err("no answer");
    let waited = started.elapsed();
    assert!(
        matches!(&e, DeviceError::Io(m) if m.contains("deadline") && m.contains(&phone.name())),
        "{e:?}"
    );
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    // The next call fails at once, without a request; so does the session's deletion.
    phone.set_deadline(None);
    let started = Instant::now();
    let e = phone.tap(1, 1).expect_err("gone");
    assert!(
        matches!(&e, DeviceError::Io(m) if m.contains("stopped answering")),
        "{e:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(phone);
    let paths: Vec<String> = after_connect(&wda).into_iter().map(|r| r.path).collect();
    assert_eq!(paths, [s("/source")]);
}

#[test]
fn without_a_deadline_the_request_timeout_bounds_the_wait() {
    let wda = FakeWda::start(|r| match r.path.as_str() {
        "/status" => Reply::Hang,
        _ => standard(r),
    });
    let started = Instant::now();
    let e = IosDevice::connect_with(&wda.options(None), None, Duration::from_millis(300)).expect_err("no answer");
    assert!(
        matches!(&e, DeviceError::Io(m) if m.contains("no answer within 0.3s")),
        "{e:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn an_html_answer_to_a_call_is_io() {
    let wda = FakeWda::start(|r| match r.path.ends_with("/screenshot") {
        true => Reply::Html,
        false => standard(r),
    });
    let mut phone = connect(&wda);
    let e = phone.screenshot().expect_err("not WDA");
    assert!(
        matches!(&e, DeviceError::Io(m) if m.contains("not WebDriverAgent's JSON")),
        "{e:?}"
    );
    // An answer, if a wrong one: the device still takes calls.
    phone.tap(1, 1).expect("still there");
}

#[test]
fn screenshots_are_checked_pngs() {
    use base64::Engine;
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-rest".to_vec();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    let wda = FakeWda::start(move |r| match r.path.ends_with("/screenshot") {
        true => ok(json!(encoded)),
        false => standard(r),
    });
    let shot = connect(&wda).screenshot().expect("a png");
    assert_eq!((shot.mime, shot.bytes), ("image/png", png));
    let jpeg = base64::engine::general_purpose::STANDARD.encode(b"\xff\xd8\xff\xe0JFIF");
    for bad in [json!(jpeg), json!("not base64!"), json!(12)] {
        let wda = FakeWda::start(move |r| match r.path.ends_with("/screenshot") {
            true => ok(bad.clone()),
            false => standard(r),
        });
        assert!(matches!(connect(&wda).screenshot(), Err(DeviceError::Io(_))));
    }
}

#[test]
fn a_snapshot_is_one_source_request() {
    let source = r#"<?xml version="1.0" encoding="UTF-8"?><AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Settings" label="Settings" enabled="true" visible="true" x="0" y="0" width="393" height="852"><XCUIElementTypeButton type="XCUIElementTypeButton" name="General" label="General" enabled="true" visible="true" x="0" y="100" width="393" height="44"/></XCUIElementTypeApplication></AppiumAUT>"#;
    let wda = FakeWda::start(move |r| match r.path.ends_with("/source") {
        true => ok(json!(source)),
        false => standard(r),
    });
    let mut phone = connect(&wda);
    phone
        .launch_app("com.apple.Preferences", LaunchMode::Resume)
        .expect("launch");
    let tree = phone.snapshot().expect("a tree");
    assert_eq!(
        (tree.app_id.as_deref(), tree.width, tree.height),
        (Some("com.apple.Preferences"), 393, 852)
    );
    assert_eq!(tree.root.children[0].content_description.as_deref(), Some("General"));
    assert_eq!(phone.captures(), 1);
    let reqs = after_connect(&wda);
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].is("GET", &s("/source")));
    // A hostile source is an Io error naming the device.
    let deep = format!("<AppiumAUT>{}</AppiumAUT>", "<XCUIElementTypeOther>".repeat(10_000));
    let wda = FakeWda::start(move |r| match r.path.ends_with("/source") {
        true => ok(json!(deep)),
        false => standard(r),
    });
    let mut phone = connect(&wda);
    let e = phone.snapshot().expect_err("too deep");
    assert!(
        matches!(&e, DeviceError::Io(m) if m.starts_with("ios:") && m.contains("deeper than 256")),
        "{e:?}"
    );
    assert_eq!(phone.captures(), 1);
}

#[test]
fn a_forgotten_session_is_io_and_the_next_launch_opens_one_with_the_app() {
    let wda = FakeWda::start(|r| match r.path.ends_with("/actions") {
        true => wda_error(404, "invalid session id", "Session does not exist"),
        false => standard(r),
    });
    let mut phone = connect(&wda);
    let e = phone.tap(1, 1).expect_err("session gone");
    assert!(matches!(&e, DeviceError::Io(m) if m.contains("session ended")), "{e:?}");
    assert!(matches!(phone.snapshot(), Err(DeviceError::Io(_))));
    phone
        .launch_app("com.example.app", LaunchMode::ForceRestart)
        .expect("a new session");
    let last = wda.requests().pop().expect("a request");
    assert!(last.is("POST", "/session"), "{last:?}");
    assert_eq!(
        last.json()["capabilities"]["alwaysMatch"],
        json!({"bundleId": "com.example.app", "shouldWaitForQuiescence": true, "forceAppLaunch": true, "shouldTerminateApp": false})
    );
}

#[test]
fn the_pasteboard_travels_as_base64() {
    use base64::Engine;
    let b64 = &base64::engine::general_purpose::STANDARD;
    let wda = FakeWda::start(move |r| match r.path.ends_with("/getPasteboard") {
        true => ok(json!(base64::engine::general_purpose::STANDARD.encode("copied ✓"))),
        false => standard(r),
    });
    let mut phone = connect(&wda);
    phone.set_clipboard("pasted ✓").expect("set");
    assert_eq!(phone.clipboard().expect("get").as_deref(), Some("copied ✓"));
    let reqs = after_connect(&wda);
    assert_eq!(
        reqs[0].json(),
        json!({"content": b64.encode("pasted ✓"), "contentType": "plaintext"})
    );
    assert_eq!(reqs[1].json(), json!({"contentType": "plaintext"}));
}

#[test]
fn status_and_lost_read_the_endpoint() {
    let wda = serving(Some("AAAA-1111"));
    let st = crate::status(&wda.url).expect("a status");
    assert!(st.ready && !st.simulator);
    assert_eq!(
        (st.udid.as_deref(), st.os_version.as_deref()),
        (Some("AAAA-1111"), Some("17.4"))
    );
    let kind = crate::Kind;
    use trailblaze_core::parts::DeviceKind;
    let spec = |udid: &str, url: &str| {
        trailblaze_core::device::DeviceSpec::Ios(trailblaze_core::device::spec::IosOptions {
            udid: Some(udid.into()),
            wda: url.into(),
        })
    };
    assert!(!kind.lost(&spec("AAAA-1111", &wda.url)));
    assert!(kind.lost(&spec("BBBB-2222", &wda.url)));
    let url = wda.url.clone();
    drop(wda);
    assert!(kind.lost(&spec("AAAA-1111", &url)));
    let sim = FakeWda::start(standard);
    assert!(crate::status(&sim.url).expect("a status").simulator);
}
