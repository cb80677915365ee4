//! The simulated device, behaviour by behaviour, through the `Device` trait.

use super::*;
use crate::device::{Bounds, ViewNode};

const APP: &str = r#"
id: com.example.test
start: signIn
screens:
  signIn:
    back: null
    nodes:
      - { id: email, class: android.widget.EditText, hint: Email, editable: true }
      - { id: password, class: android.widget.EditText, hint: Password, editable: true, password: true }
      - { id: submit, class: android.widget.Button, text: Sign in, enterTaps: true,
          tap: { goto: home, require: { email: a@b.c, password: pw }, otherwise: { show: Wrong email or password } } }
  home:
    title: Home
    nodes:
      - id: row
        tap: { goto: detail }
        children:
          - { class: android.widget.TextView, text: Row label }
      - { id: settings, class: android.widget.Button, text: Settings, tap: { goto: settings } }
      - { id: off, text: Disabled, enabled: false, tap: { goto: detail } }
  detail:
    back: signIn
    nodes:
      - { class: android.widget.TextView, text: Detail }
  settings:
    nodes:
      - { id: dark, class: android.widget.Switch, text: Dark mode, toggle: true }
      - { id: up, text: Up, tap: { back: true } }
"#;

fn load(yaml: &str) -> SimDevice {
    SimDevice::from_app_yaml(yaml, Path::new("app.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

fn load_err(yaml: &str) -> String {
    match SimDevice::from_app_yaml(yaml, Path::new("trailmaps/x/app.yaml")) {
        Ok(_) => panic!("loaded an invalid app"),
        Err(e) => e.to_string(),
    }
}

fn find<'a>(node: &'a ViewNode, pred: &dyn Fn(&ViewNode) -> bool) -> Option<&'a ViewNode> {
    if pred(node) {
        return Some(node);
    }
    node.children.iter().find_map(|c| find(c, pred))
}

fn node(dev: &mut SimDevice, id: &str) -> Option<ViewNode> {
    let tree = dev.snapshot().unwrap();
    let suffix = format!(":id/{id}");
    find(&tree.root, &|n| {
        n.resource_id.as_deref().is_some_and(|r| r.ends_with(&suffix))
    })
    .cloned()
}

fn has_text(dev: &mut SimDevice, text: &str) -> bool {
    let tree = dev.snapshot().unwrap();
    find(&tree.root, &|n| n.text.as_deref() == Some(text)).is_some()
}

fn tap_id(dev: &mut SimDevice, id: &str) {
    let n = node(dev, id).unwrap_or_else(|| panic!("no node `{id}` on {:?}", dev.current_screen()));
    let (x, y) = n.bounds.center();
    dev.tap(x, y).unwrap();
}

fn type_into(dev: &mut SimDevice, id: &str, text: &str) {
    tap_id(dev, id);
    dev.input_text(text).unwrap();
}

#[test]
fn typing_holds_text_and_masks_passwords() {
    let mut dev = load(APP);
    assert_eq!(node(&mut dev, "email").unwrap().text, None);
    type_into(&mut dev, "email", "a@b.c");
    let email = node(&mut dev, "email").unwrap();
    assert_eq!(email.text.as_deref(), Some("a@b.c"));
    assert_eq!(email.resource_id.as_deref(), Some("com.example.test:id/email"));
    assert!(email.focused);
    type_into(&mut dev, "password", "pw");
    let tree = dev.snapshot().unwrap();
    let json = serde_json::to_string(&tree).unwrap();
    assert!(json.contains("••"), "{json}");
    assert!(!json.contains("\"pw\""), "the password leaked: {json}");
    // The real text still satisfies `require`.
    tap_id(&mut dev, "submit");
    assert_eq!(dev.current_screen(), Some("home"));
}

#[test]
fn input_text_needs_a_focused_field() {
    let mut dev = load(APP);
    let err = dev.input_text("x").unwrap_err().to_string();
    assert!(err.contains("no focused field") && err.contains("signIn"), "{err}");
    tap_id(&mut dev, "email");
    dev.input_text("x").unwrap();
    dev.press_key(KeyCode::Escape).unwrap();
    assert!(dev.input_text("y").is_err());
    assert_eq!(node(&mut dev, "email").unwrap().text.as_deref(), Some("x"));
}

fn signed_in() -> SimDevice {
    let mut dev = load(APP);
    type_into(&mut dev, "email", "a@b.c");
    type_into(&mut dev, "password", "pw");
    tap_id(&mut dev, "submit");
    assert_eq!(dev.current_screen(), Some("home"));
    dev
}

#[test]
fn require_fails_into_otherwise_then_succeeds() {
    let mut dev = load(APP);
    type_into(&mut dev, "email", "a@b.c");
    type_into(&mut dev, "password", "wrong");
    assert!(!has_text(&mut dev, "Wrong email or password"));
    tap_id(&mut dev, "submit");
    assert_eq!(dev.current_screen(), Some("signIn"));
    assert!(has_text(&mut dev, "Wrong email or password"));
    // Fix the password: five backspaces, then the right one.
    tap_id(&mut dev, "password");
    for _ in 0..5 {
        dev.press_key(KeyCode::Backspace).unwrap();
    }
    dev.input_text("pw").unwrap();
    tap_id(&mut dev, "submit");
    assert_eq!(dev.current_screen(), Some("home"));
    assert!(!has_text(&mut dev, "Wrong email or password"));
}

#[test]
fn taps_navigate_through_labels_and_ignore_nothing_and_disabled() {
    let mut dev = signed_in();
    dev.tap(1, SCREEN_HEIGHT - 1).unwrap();
    dev.tap(-5, 10_000).unwrap();
    tap_id(&mut dev, "off");
    assert_eq!(dev.current_screen(), Some("home"));
    // The label is a plain child; the tap reaches the row that holds it.
    let tree = dev.snapshot().unwrap();
    let label = find(&tree.root, &|n| n.text.as_deref() == Some("Row label")).unwrap();
    let (x, y) = label.bounds.center();
    dev.long_press(x, y).unwrap();
    assert_eq!(dev.current_screen(), Some("detail"));
}

#[test]
fn back_follows_target_null_and_stack() {
    let mut dev = signed_in();
    tap_id(&mut dev, "settings");
    assert_eq!(dev.current_screen(), Some("settings"));
    dev.press_key(KeyCode::Back).unwrap(); // absent: pop
    assert_eq!(dev.current_screen(), Some("home"));
    tap_id(&mut dev, "row");
    dev.press_key(KeyCode::Back).unwrap(); // explicit target, unwinding the stack
    assert_eq!(dev.current_screen(), Some("signIn"));
    dev.press_key(KeyCode::Back).unwrap(); // null: stays
    assert_eq!(dev.current_screen(), Some("signIn"));
    tap_id(&mut dev, "submit");
    tap_id(&mut dev, "settings");
    tap_id(&mut dev, "up"); // `tap: {back: true}`
    assert_eq!(dev.current_screen(), Some("home"));
    dev.press_key(KeyCode::Back).unwrap(); // the stack held only signIn (unwound before)
    assert_eq!(dev.current_screen(), Some("signIn"));
}

#[test]
fn back_on_an_empty_stack_leaves_the_app() {
    let mut dev = load("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ id: f, editable: true }]\n");
    tap_id(&mut dev, "f");
    dev.press_key(KeyCode::Back).unwrap();
    assert_eq!(dev.current_screen(), None);
    let tree = dev.snapshot().unwrap();
    assert_eq!(tree.app_id, None);
    assert!(tree.root.children.is_empty());
    dev.launch_app("a.b", LaunchMode::Resume).unwrap();
    assert_eq!(dev.current_screen(), Some("s"));
}

#[test]
fn toggle_flips() {
    let mut dev = signed_in();
    tap_id(&mut dev, "settings");
    assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(false));
    tap_id(&mut dev, "dark");
    assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(true));
    tap_id(&mut dev, "dark");
    assert_eq!(node(&mut dev, "dark").unwrap().checked, Some(false));
    assert_eq!(node(&mut dev, "up").unwrap().checked, None);
}

#[test]
fn only_snapshot_counts_as_a_capture() {
    let mut dev = load(APP);
    assert_eq!(dev.captures(), 0);
    let (x, y) = node(&mut dev, "email").unwrap().bounds.center();
    assert_eq!(dev.captures(), 1);
    dev.tap(x, y).unwrap();
    dev.input_text("a").unwrap();
    dev.press_key(KeyCode::Tab).unwrap();
    dev.screenshot().unwrap();
    dev.launch_app("com.example.test", LaunchMode::Resume).unwrap();
    assert_eq!(dev.captures(), 1);
    dev.snapshot().unwrap();
    assert_eq!(dev.captures(), 2);
}

/// Every node's siblings are disjoint and its children lie inside it.
fn check_layout(node: &ViewNode) -> Result<(), String> {
    let overlap = |a: &Bounds, b: &Bounds| a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    for (i, a) in node.children.iter().enumerate() {
        if a.bounds.left >= a.bounds.right || a.bounds.top >= a.bounds.bottom {
            return Err(format!("empty bounds {:?}", a.bounds));
        }
        let p = node.bounds;
        let b = a.bounds;
        if b.left < p.left || b.right > p.right || b.top < p.top || b.bottom > p.bottom {
            return Err(format!("{b:?} outside its parent {p:?}"));
        }
        if let Some(c) = node.children[i + 1..].iter().find(|c| overlap(&a.bounds, &c.bounds)) {
            return Err(format!("{:?} overlaps {:?}", a.bounds, c.bounds));
        }
        check_layout(a)?;
    }
    Ok(())
}

#[test]
fn bounds_are_laid_out_without_overlap() {
    let mut dev = signed_in();
    let tree = dev.snapshot().unwrap();
    check_layout(&tree.root).unwrap();
    assert_eq!(tree.root.children.len(), 4, "title + three nodes");
    let again = dev.snapshot().unwrap();
    assert_eq!(tree, again, "layout is deterministic");
    // Positive control: given bounds that overlap are kept and the check sees it.
    let mut dev = load(
        "id: a.b\nstart: s\nscreens:\n  s:\n    nodes:\n      - { text: A, bounds: [0, 0, 500, 500] }\n      - { text: B, bounds: [100, 100, 600, 600] }\n",
    );
    let tree = dev.snapshot().unwrap();
    assert_eq!(
        tree.root.children[1].bounds,
        Bounds {
            left: 100,
            top: 100,
            right: 600,
            bottom: 600
        }
    );
    assert!(check_layout(&tree.root).unwrap_err().contains("overlaps"));
}

#[test]
fn keys_tab_enter_home() {
    let mut dev = load(APP);
    dev.press_key(KeyCode::Tab).unwrap();
    dev.input_text("a@b.c").unwrap();
    dev.press_key(KeyCode::Tab).unwrap();
    dev.input_text("pw").unwrap();
    assert!(node(&mut dev, "password").unwrap().focused);
    dev.press_key(KeyCode::Home).unwrap();
    assert_eq!(dev.snapshot().unwrap().app_id, None);
    assert!(dev.input_text("x").is_err());
    dev.press_key(KeyCode::Enter).unwrap(); // at the launcher: nothing
    dev.launch_app("com.example.test", LaunchMode::Resume).unwrap();
    assert_eq!(dev.current_screen(), Some("signIn"));
    dev.press_key(KeyCode::Enter).unwrap();
    assert_eq!(dev.current_screen(), Some("home"));
    dev.press_key(KeyCode::Enter).unwrap(); // no enterTaps node here: nothing
    assert_eq!(dev.current_screen(), Some("home"));
}

#[test]
fn launch_modes_and_unknown_apps() {
    let mut dev = signed_in();
    let err = dev
        .launch_app("com.other", LaunchMode::Reinstall)
        .unwrap_err()
        .to_string();
    assert!(err.contains("com.other") && err.contains("com.example.test"), "{err}");
    tap_id(&mut dev, "settings");
    tap_id(&mut dev, "dark");
    dev.launch_app("com.example.test", LaunchMode::ForceRestart).unwrap();
    assert_eq!(dev.current_screen(), Some("signIn"));
    assert_eq!(
        node(&mut dev, "email").unwrap().text,
        None,
        "typed text dies with the process"
    );
    let mut dev2 = signed_in();
    tap_id(&mut dev2, "settings");
    tap_id(&mut dev2, "dark");
    dev2.launch_app("com.example.test", LaunchMode::ForceRestart).unwrap();
    type_into(&mut dev2, "email", "a@b.c");
    type_into(&mut dev2, "password", "pw");
    tap_id(&mut dev2, "submit");
    tap_id(&mut dev2, "settings");
    assert_eq!(node(&mut dev2, "dark").unwrap().checked, Some(true), "settings survive");
    dev2.launch_app("com.example.test", LaunchMode::Reinstall).unwrap();
    assert_eq!(dev2.current_screen(), Some("signIn"));
    type_into(&mut dev2, "email", "a@b.c");
    type_into(&mut dev2, "password", "pw");
    tap_id(&mut dev2, "submit");
    tap_id(&mut dev2, "settings");
    assert_eq!(
        node(&mut dev2, "dark").unwrap().checked,
        Some(false),
        "reinstall clears"
    );
}

#[test]
fn screenshot_is_escaped_svg_without_secrets() {
    let mut dev = load(
        "id: a.b\nstart: s\nscreens:\n  s:\n    nodes:\n      - { text: \"Tom & <Jerry>\" }\n      - { id: p, editable: true, password: true }\n",
    );
    type_into(&mut dev, "p", "s3cret");
    let shot = dev.screenshot().unwrap();
    assert_eq!(shot.mime, "image/svg+xml");
    let svg = String::from_utf8(shot.bytes).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("Tom &amp; &lt;Jerry&gt;"),
        "{svg}"
    );
    assert!(!svg.contains("<Jerry>") && !svg.contains("s3cret"), "{svg}");
    assert!(svg.contains("••••••"));
    assert_eq!(
        crate::markup::escape("a\u{1}'\"", crate::markup::Dialect::Xml),
        "a\u{FFFD}&apos;&quot;"
    );
}

#[test]
fn load_errors_name_the_problem_and_the_file() {
    // Positive control: the valid app loads.
    load(APP);
    let err = load_err(&APP.replace("hint: Email", "hnt: Email"));
    assert!(err.contains("hnt") && err.contains("trailmaps/x/app.yaml"), "{err}");
    let err = load_err(&APP.replace("goto: detail }", "goto: detial }"));
    assert!(
        err.contains("`detial`") && err.contains("trailmaps/x/app.yaml") && err.contains("home"),
        "{err}"
    );
    let err = load_err(&APP.replace("back: signIn", "back: nowhere"));
    assert!(err.contains("`nowhere`"), "{err}");
    let err = load_err(&APP.replace("start: signIn", "start: begin"));
    assert!(err.contains("`begin`"), "{err}");
    let err = load_err(&APP.replace("id: settings,", "id: row,"));
    assert!(err.contains("id `row` is used twice"), "{err}");
    let err = load_err(&APP.replace("require: { email:", "require: { mail:"));
    assert!(err.contains("`mail`"), "{err}");
    let err = load_err(&APP.replace("tap: { back: true }", "tap: { }"));
    assert!(err.contains("needs `goto"), "{err}");
    let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ password: true }]\n");
    assert!(err.contains("editable"), "{err}");
    let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ bounds: [5, 5, 1, 1] }]\n");
    assert!(err.contains("bounds"), "{err}");
    let err = load_err("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{ text: 12 }]\n");
    assert!(err.contains("trailmaps/x/app.yaml"), "{err}");
    let many = format!(
        "id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{}]\n",
        ["{}"; 1001].join(", ")
    );
    assert!(load_err(&many).contains("1001 nodes"));
    let deep = format!("{}{{}}{}", "{children: [".repeat(17), "]}".repeat(17));
    let err = load_err(&format!("id: a.b\nstart: s\nscreens:\n  s:\n    nodes: [{deep}]\n"));
    assert!(err.contains("deeper than 16"), "{err}");
    let missing = Path::new("/nonexistent/app.yaml");
    let err = SimDevice::from_app_file(missing).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/app.yaml"), "{err}");
}

#[test]
fn demo_app_signs_in_reads_mail_and_toggles_dark_mode() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps/demo/app.yaml");
    let mut dev = SimDevice::from_app_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dev.name(), "sim:com.example.demo");
    dev.launch_app("com.example.demo", LaunchMode::Reinstall).unwrap();
    type_into(&mut dev, "email", "jane@example.com");
    type_into(&mut dev, "password", "hunter1");
    tap_id(&mut dev, "submit");
    assert!(has_text(&mut dev, "Wrong email or password"));
    tap_id(&mut dev, "password");
    dev.press_key(KeyCode::Backspace).unwrap();
    dev.input_text("2").unwrap();
    dev.press_key(KeyCode::Enter).unwrap();
    assert_eq!(dev.current_screen(), Some("inbox"));
    let tree = dev.snapshot().unwrap();
    check_layout(&tree.root).unwrap();
    let rows = ["message1", "message2", "message3"];
    for row in rows {
        let n = node(&mut dev, row).unwrap();
        assert!(n.clickable && n.bounds.bottom <= SCREEN_HEIGHT, "{row}: {n:?}");
    }
    for row in rows {
        tap_id(&mut dev, &format!("{row}Subject"));
        assert_eq!(dev.current_screen(), Some(row));
        let body = node(&mut dev, "body").unwrap();
        assert!(body.text.is_some_and(|t| !t.is_empty()));
        tap_id(&mut dev, "backToInbox");
        assert_eq!(dev.current_screen(), Some("inbox"));
    }
    tap_id(&mut dev, "message2");
    dev.press_key(KeyCode::Back).unwrap();
    assert_eq!(dev.current_screen(), Some("inbox"));
    dev.press_key(KeyCode::Back).unwrap();
    assert_eq!(dev.current_screen(), Some("inbox"), "BACK does not sign out");
    tap_id(&mut dev, "settings");
    assert_eq!(node(&mut dev, "darkMode").unwrap().checked, Some(false));
    tap_id(&mut dev, "darkMode");
    assert_eq!(node(&mut dev, "darkMode").unwrap().checked, Some(true));
    tap_id(&mut dev, "navigateUp");
    assert_eq!(dev.current_screen(), Some("inbox"));
}
