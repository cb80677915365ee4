//! The fake WebDriverAgent (tests/fake_wda): checked against a real WebDriver client (Appium's
//! Python client, tests/wda-client), and over plain HTTP: sessions, the Contacts app's flows the
//! original's iOS tools run, hostile text in the page source, a WDA that hangs or dies.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze_e2e::fake_wda::client::{Client, parse};
use trailblaze_e2e::fake_wda::{Element, FakeApp, FakeWda, Rect, Screen};
use trailblaze_e2e::repo_root;

const CONTACTS: &str = "com.apple.MobileAddressBook";

/// `POST /wda/apps/{verb}` on the Contacts app: its answer.
fn apps(c: &Client, verb: &str) -> Value {
    c.ok(
        "POST",
        &c.s(&format!("/wda/apps/{verb}")),
        Some(json!({ "bundleId": CONTACTS })),
    )
}

/// A W3C error answer's status and error code.
fn error((status, v): (u16, Value)) -> (u16, String) {
    (status, v["value"]["error"].as_str().unwrap_or_default().to_owned())
}

/// The Python client's venv, made by ./test.sh.
fn wda_python() -> PathBuf {
    let py = repo_root().join("tests/wda-client/.venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: ./test.sh makes it (python3 -m venv tests/wda-client/.venv && \
         tests/wda-client/.venv/bin/pip install -r tests/wda-client/requirements.txt)",
        py.display()
    );
    py
}

#[test]
fn appium_python_client_drives_the_demo_app() {
    let python = wda_python();
    let fake = FakeWda::demo();
    let out = Command::new(python)
        .arg(repo_root().join("tests/wda-client/check.py"))
        .arg(fake.url())
        .output()
        .expect("python runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "check.py failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("wda-client check passed"), "{stdout}");
    assert_eq!((fake.sessions_created(), fake.sessions_deleted()), (1, 1));
    assert_eq!(fake.source_requests(), 3, "the check reads the page source three times");
    assert_eq!(fake.typed(), "jane@example.comhunter2");
    let seen: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let sid = seen
        .iter()
        .find_map(|r| r.strip_prefix("GET /session/")?.strip_suffix("/source"))
        .expect("the page source was read in a session")
        .to_owned();
    for want in [
        "POST /session",
        "POST /session/{}/actions",
        "GET /session/{}/screenshot",
        "DELETE /session/{}",
    ] {
        let want = want.replace("{}", &sid);
        assert!(seen.contains(&want), "no `{want}` in {seen:#?}");
    }
    assert!(
        seen.iter().any(|r| r.starts_with("POST") && r.ends_with("/value")),
        "{seen:#?}"
    );
}

#[test]
fn sessions_start_replace_and_end_as_on_wda() {
    let fake = FakeWda::contacts();
    let c = Client::new(&fake);
    let status = c.ok("GET", "/status", None);
    assert_eq!(status["ready"], true);
    assert_eq!(status["os"]["name"], "iOS");
    assert_eq!(status["udid"], fake.udid());
    assert_eq!(c.call("GET", "/status", None).1["sessionId"], Value::Null);

    let a = Client::open(&fake, CONTACTS);
    let (_, created) = c.call("GET", &a.s(""), None);
    assert_eq!(
        created["value"]["capabilities"]["CFBundleIdentifier"],
        "com.apple.MobileAddressBook"
    );
    assert_eq!(c.call("GET", "/status", None).1["sessionId"], json!(a.sid));
    assert_eq!(apps(&a, "state"), 4);

    // Legacy capabilities work too; the new session replaces the old one, whose app WDA terminates.
    let legacy = c.ok("POST", "/session", Some(json!({"desiredCapabilities": {}})));
    let b = legacy["sessionId"].as_str().expect("id").to_owned();
    assert_eq!(
        error(c.call("GET", &a.s("/source"), None)),
        (404, "invalid session id".into())
    );
    assert_eq!(fake.sessions_created(), 2);
    let state = c.ok(
        "POST",
        &format!("/session/{b}/wda/apps/state"),
        Some(json!({"bundleId": "com.apple.MobileAddressBook"})),
    );
    assert_eq!(state, 1, "killing a session terminates the app it launched");

    assert_eq!(c.ok("DELETE", &format!("/session/{b}"), None), Value::Null);
    assert_eq!(fake.sessions_deleted(), 1);
    assert_eq!(
        error(c.call("DELETE", &format!("/session/{b}"), None)),
        (404, "invalid session id".into())
    );

    let (status, refused) = c.call(
        "POST",
        "/session",
        Some(json!({"capabilities": {"alwaysMatch": {"bundleId": "com.nope"}}})),
    );
    assert_eq!(status, 500);
    assert_eq!(refused["value"]["error"], "session not created");
    assert!(
        refused["value"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Cannot launch com.nope application"))
    );
    let (status, unknown) = c.call("GET", "/no/such/route", None);
    assert_eq!(error((status, unknown.clone())), (404, "unknown command".into()));
    assert_eq!(unknown["value"]["traceback"], "");
}

#[test]
fn contacts_list_search_filters_and_says_no_results() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    let xml = c.source();
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<XCUIElementTypeApplication "),
        "{xml}"
    );
    let scoped = c.ok("GET", &c.s("/source?scope=AppiumAUT"), None);
    assert!(
        scoped
            .as_str()
            .is_some_and(|x| x.contains("\n<AppiumAUT>\n  <XCUIElementTypeApplication "))
    );
    assert!(c.has("NavigationBar", "Contacts") && c.has("StaticText", "Contacts") && c.has("Button", "Add"));
    assert_eq!(
        c.rows(),
        [
            "John Appleseed",
            "Kate Bell",
            "Anna Haro",
            "Daniel Higgins Jr.",
            "David Taylor",
            "Hank M. Zakroff"
        ]
    );
    assert_eq!(
        error(c.keys("John")),
        (400, "invalid element state".into()),
        "no field has focus"
    );

    c.swipe((200.0, 300.0), (200.0, 700.0));
    assert_eq!(c.rows().len(), 6, "a pull-down on the list changes nothing");
    assert!(!c.has("Keyboard", "") && !c.has("Button", "Cancel"));
    c.tap("SearchField", "Search");
    assert!(c.screen().iter().any(|e| e.kind == "Keyboard"), "the keyboard is up");
    assert!(c.has("Button", "Cancel"));
    c.type_text("john");
    assert_eq!(c.rows(), ["John Appleseed"], "the search matches any case");
    assert!(c.has("SearchField", "john"));
    c.type_text("\u{8}\u{8}\u{8}\u{8}ZzZzNoSuchContact");
    assert!(c.rows().is_empty());
    assert!(c.has("Other", "No Results for \u{201c}ZzZzNoSuchContact\u{201d}"));
    assert!(c.has("StaticText", "No Results") && c.has("StaticText", "Check the spelling or try a new search."));
    c.tap("Button", "Cancel");
    assert_eq!(c.rows().len(), 6);
    assert!(!c.has("Button", "Cancel") && !c.screen().iter().any(|e| e.kind == "Keyboard"));
    assert_eq!(fake.typed(), "john\u{8}\u{8}\u{8}\u{8}ZzZzNoSuchContact");
}

#[test]
fn contacts_open_a_contact_and_come_back_to_the_search() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    c.tap("SearchField", "Search");
    c.type_text("John");
    c.tap("Cell", "John Appleseed");
    assert!(c.has("Button", "Edit") && c.has("Button", "Back") && !c.has("Button", "Add"));
    assert!(c.has("StaticText", "John Appleseed") && c.has("Cell", "Contact Photo & Poster"));
    assert!(c.has("StaticText", "mobile") && c.has("StaticText", "888-555-5512"));
    c.tap("Button", "Back");
    assert_eq!(c.rows(), ["John Appleseed"], "the search is kept");
    assert!(c.has("SearchField", "John") && c.has("Button", "Cancel"));

    // Home and back: as it was; a launch: the list root, no search.
    c.ok("POST", "/wda/homescreen", None);
    assert!(c.source().contains("bundleId=\"com.apple.springboard\""));
    c.tap("Icon", "Contacts");
    assert!(c.has("SearchField", "John"));
    apps(&c, "launch");
    assert_eq!(c.rows().len(), 6);
}

#[test]
fn contacts_create_then_delete_as_the_original_tools_do() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    c.tap("Button", "Add");
    assert!(c.has("NavigationBar", "New Contact") && c.has("TextField", "First name"));
    let done = |c: &Client| {
        c.screen()
            .into_iter()
            .find(|e| e.kind == "Button" && e.says("Done"))
            .expect("Done")
    };
    assert!(!done(&c).enabled, "a contact needs a name");
    c.tap("TextField", "First name");
    c.type_text("Trailblaze");
    c.tap("TextField", "Last name");
    c.type_text("Demo");
    c.tap("Cell", "add phone");
    assert!(c.screen().iter().any(|e| e.kind == "TextField"
        && e.label.as_deref() == Some("mobile")
        && e.placeholder.as_deref() == Some("Phone")));
    c.type_text("5551234567");
    assert!(done(&c).enabled);
    c.tap("Button", "Done");
    assert!(c.has("StaticText", "Trailblaze Demo") && c.has("StaticText", "5551234567") && c.has("Button", "Edit"));

    // Saved like a database: a new launch lists it.
    apps(&c, "launch");
    assert!(c.rows().contains(&"Trailblaze Demo".to_owned()));
    c.tap("Cell", "Trailblaze Demo");
    c.tap("Button", "Edit");
    assert!(c.has("TextField", "Trailblaze") && !c.has("Button", "Delete Contact"));
    for _ in 0..4 {
        if c.has("Button", "Delete Contact") {
            break;
        }
        c.swipe((200.0, 700.0), (200.0, 300.0));
    }
    c.tap("Button", "Delete Contact");
    assert!(c.screen().iter().any(|e| e.kind == "Sheet"), "an action sheet asks");
    c.tap("Button", "Delete Contact");
    assert!(c.has("Button", "Add"), "back on the list");
    assert!(!c.rows().contains(&"Trailblaze Demo".to_owned()));
    assert_eq!(c.rows().len(), 6);
}

/// An app showing one text, for the page source's escaping.
struct Board(&'static str);

impl FakeApp for Board {
    fn bundle_id(&self) -> &str {
        "com.example.board"
    }
    fn name(&self) -> &str {
        "Board"
    }
    fn screen(&self) -> Screen {
        Screen {
            width: 100,
            height: 100,
            scale: 1,
            status_bar: 0,
        }
    }
    fn launch(&mut self) {}
    fn windows(&mut self) -> Vec<Element> {
        let text = Element::new("StaticText", Rect::new(0, 0, 100, 20))
            .label(self.0)
            .id(self.0);
        vec![Element::new("Window", Rect::new(0, 0, 100, 100)).child(text)]
    }
    fn tap(&mut self, _: f64, _: f64) {}
    fn swipe(&mut self, _: (f64, f64), _: (f64, f64), _: u64) {}
    fn keyboard_shown(&self) -> bool {
        false
    }
    fn type_text(&mut self, _: &str) {}
    fn delete_backward(&mut self) {}
    fn press_return(&mut self) {}
    fn dismiss_keyboard(&mut self) -> bool {
        false
    }
}

const HOSTILE: &str = "A\"<b>&'x\r\n\tשלום 👩‍👩‍👧 \u{1}end";

#[test]
fn hostile_text_is_escaped_in_the_source() {
    let fake = FakeWda::start(Board(HOSTILE));
    let c = Client::open(&fake, "com.example.board");
    let xml = c.source();
    let escaped = "A&quot;&lt;b&gt;&amp;'x&#13;&#10;&#9;שלום 👩‍👩‍👧 end";
    for attr in ["value", "name", "label"] {
        assert!(xml.contains(&format!("{attr}=\"{escaped}\"")), "{attr} in {xml}");
    }
    // A control character is dropped (XML 1.0 cannot hold it), as WDA drops it; the rest parses back.
    let clean = HOSTILE.replace('\u{1}', "");
    let screen = parse(&xml);
    let text = screen.iter().find(|e| e.kind == "StaticText").expect("the text");
    assert_eq!(
        (text.label.as_deref(), text.value.as_deref()),
        (Some(clean.as_str()), Some(clean.as_str()))
    );
}

#[test]
fn typing_is_recorded_exactly_and_return_moves_on() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    c.tap("Button", "Add");
    c.tap("TextField", "First name");
    let typed = "Zoë \"<&>\" 👩‍👩‍👧\nשלום";
    c.type_text(typed);
    assert_eq!(fake.typed(), typed);
    assert!(c.has("TextField", "Zoë \"<&>\" 👩‍👩‍👧"), "the first name, up to return");
    assert!(c.has("TextField", "שלום"), "return moved to the last name");
}

#[test]
fn elements_are_found_clicked_and_read() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    let add = c.ok(
        "POST",
        &c.s("/element"),
        Some(json!({"using": "accessibility id", "value": "Add"})),
    );
    let id = add["element-6066-11e4-a52e-4f735466cecf"]
        .as_str()
        .expect("a W3C element")
        .to_owned();
    assert_eq!(add["ELEMENT"], json!(id));
    assert_eq!(
        c.ok("GET", &c.s(&format!("/element/{id}/attribute/label")), None),
        "Add"
    );
    assert_eq!(c.ok("GET", &c.s(&format!("/element/{id}/displayed")), None), true);
    assert_eq!(
        c.ok("GET", &c.s(&format!("/element/{id}/rect")), None),
        json!({"x": 346, "y": 62, "width": 44, "height": 44})
    );
    let cells = c.ok(
        "POST",
        &c.s("/elements"),
        Some(json!({"using": "class name", "value": "XCUIElementTypeCell"})),
    );
    assert_eq!(cells.as_array().map(Vec::len), Some(6));
    c.ok("POST", &c.s(&format!("/element/{id}/click")), None);
    let first = c.ok(
        "POST",
        &c.s("/element"),
        Some(json!({"using": "accessibility id", "value": "First name"})),
    );
    let first = first["ELEMENT"].as_str().expect("id").to_owned();
    c.ok(
        "POST",
        &c.s(&format!("/element/{first}/value")),
        Some(json!({"text": "Ann", "value": ["A", "n", "n"]})),
    );
    assert_eq!(c.ok("GET", &c.s(&format!("/element/{first}/text")), None), "Ann");
    assert_eq!(
        c.ok("GET", &c.s(&format!("/element/{first}/attribute/focused")), None),
        true
    );
    assert_eq!(
        error(c.call("GET", &c.s(&format!("/element/{id}/text")), None)),
        (404, "stale element reference".into()),
        "Add is gone"
    );
    assert_eq!(
        error(c.call(
            "POST",
            &c.s("/element"),
            Some(json!({"using": "accessibility id", "value": "Nope"})),
        )),
        (404, "no such element".into())
    );
}

#[test]
fn screen_size_screenshot_and_buttons() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    assert_eq!(
        c.ok("GET", &c.s("/window/size"), None),
        json!({"width": 402, "height": 874})
    );
    let screen = c.ok("GET", &c.s("/wda/screen"), None);
    assert_eq!(
        (screen["scale"].as_i64(), screen["statusBarSize"]["width"].as_i64()),
        (Some(3), Some(402))
    );
    let b64 = c.ok("GET", &c.s("/screenshot"), None);
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64.as_str().expect("base64"))
        .expect("base64");
    let reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().expect("a PNG");
    assert_eq!(
        (reader.info().width, reader.info().height),
        (1206, 2622),
        "points × scale"
    );
    c.ok("POST", &c.s("/wda/pressButton"), Some(json!({"name": "volumeUp"})));
    assert_eq!(
        error(c.call("POST", &c.s("/wda/pressButton"), Some(json!({"name": "power"})))),
        (500, "unknown error".into())
    );
    c.ok("POST", &c.s("/wda/pressButton"), Some(json!({"name": "home"})));
    assert_eq!(apps(&c, "state"), 3);
    assert_eq!(apps(&c, "terminate"), true);
    assert_eq!(apps(&c, "terminate"), false);
}

#[test]
fn several_fakes_are_several_phones() {
    let (one, two) = (
        FakeWda::contacts(),
        FakeWda::with_udid("PHONE-2", trailblaze_e2e::fake_wda::Contacts::new()),
    );
    assert_ne!(one.url(), two.url());
    assert_eq!(two.udid(), "PHONE-2");
    let c = Client::open(&one, CONTACTS);
    c.tap("Button", "Add");
    assert!(c.has("NavigationBar", "New Contact"));
    let d = Client::open(&two, CONTACTS);
    assert!(d.has("Button", "Add"), "the other phone is still on its list");
}

#[test]
fn delays_apply_to_answers() {
    let fake = FakeWda::contacts();
    let c = Client::open(&fake, CONTACTS);
    fake.set_source_delay(Duration::from_millis(300));
    let t = Instant::now();
    c.ok("GET", "/status", None);
    assert!(t.elapsed() < Duration::from_millis(300));
    c.source();
    assert!(t.elapsed() >= Duration::from_millis(300));
    fake.set_delay(Duration::from_millis(200));
    let t = Instant::now();
    c.ok("GET", "/status", None);
    assert!(t.elapsed() >= Duration::from_millis(200));
}

#[test]
fn a_silent_wda_hangs_and_a_stopped_one_refuses() {
    let fake = FakeWda::contacts();
    // A kept-alive connection, answered once.
    let mut open = std::net::TcpStream::connect(("127.0.0.1", fake.port())).expect("connects");
    open.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    open.write_all(b"GET /wda/healthcheck HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("sends");
    let mut answer = [0u8; 512];
    let n = open.read(&mut answer).expect("an answer");
    assert!(
        answer[..n].starts_with(b"HTTP/1.1 200 OK"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );

    fake.go_silent();
    let quick: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_millis(300)))
        .build()
        .into();
    let url = format!("{}/status", fake.url());
    assert!(quick.get(&url).call().is_err(), "a silent WDA never answers");
    let last = fake.requests().last().map(|r| r.path.clone());
    assert_eq!(last.as_deref(), Some("/status"), "it read the request");

    let port = fake.port();
    fake.stop();
    let end = open.read_to_end(&mut Vec::new());
    assert!(
        end.is_ok() || end.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "the open connection is closed, not left hanging"
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens"
    );
    drop(fake);

    let dropped = FakeWda::demo();
    let port = dropped.port();
    drop(dropped);
    let refused = std::net::TcpStream::connect(("127.0.0.1", port));
    assert!(refused.is_err(), "a dropped fake listens no more");
}
