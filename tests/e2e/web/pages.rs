//! Pages that make a browser hard: frames (same and cross origin), shadow roots, dialogs, slow and
//! moving elements, a script that never ends, secrets, popups; the snapshot's shape; the LLM tools
//! on refs; a run's report.

use std::time::Duration;

use serde_json::json;
use trailblaze_e2e::web_site::Site;

use super::{PASSWORD, Web};

#[test]
fn the_snapshot_reads_like_the_phones_leaves_out_hidden_nodes_and_keeps_refs() {
    let w = Web::at("index.html");
    let text = w.snapshot_text();
    assert!(text.contains("heading \"Fixture home\" level=1"), "{text}");
    assert!(text.contains("button \"Increment\""), "{text}");
    assert!(text.contains("button \"Decrement\" (disabled)"), "{text}");
    assert!(text.contains("checkbox \"I agree\" (unchecked)"), "{text}");
    assert!(text.contains("textbox \"Notes\" placeholder=\"Write here\""), "{text}");
    assert!(
        !text.contains("Invisible button") && !text.contains("Zero button"),
        "{text}"
    );
    let first = w.ref_of("button \"Increment\"");
    assert!(
        first.len() == 4 && first.chars().next().unwrap().is_ascii_lowercase(),
        "{first}"
    );
    // Refs are stable across captures of an unchanged page, and survive a change elsewhere.
    w.ok("web_snapshot", json!({ "screenName": "again" }));
    assert_eq!(w.ref_of("button \"Increment\""), first);
    w.ok("web_click", json!({ "ref": first }));
    assert_eq!(w.ref_of("button \"Increment\""), first);
    w.ok("web_verifyTextVisible", json!({ "text": "Count: 1" }));
}

#[test]
fn frames_same_and_cross_origin_are_in_the_snapshot_and_clickable() {
    let other = Site::start();
    let w = Web::at(&format!("index.html?cross=http://localhost:{}", other.port));
    let e = std::time::Instant::now() + Duration::from_secs(5);
    while !w.snapshot_text().contains("Cross frame") && std::time::Instant::now() < e {
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = w.snapshot_text();
    assert_eq!(text.matches("button \"Frame button\"").count(), 2, "{text}");
    assert!(
        text.contains(&format!("url=\"http://localhost:{}/frame.html\"", other.port)),
        "{text}"
    );
    // The cross-origin frame's button, by its generated selector through `tap` (nthIndex 1).
    let refs: Vec<String> = text
        .lines()
        .filter(|l| l.contains("Frame button"))
        .map(|l| l[l.find('[').unwrap() + 1..l.find(']').unwrap()].to_string())
        .collect();
    w.ok_value("tap", json!({ "ref": refs[1] }));
    w.ok_value("tap", json!({ "ref": refs[0] }));
    // The cross-origin frame runs in a renderer of its own: its click handler may run a moment
    // after the tap returns (a `verify` waits for it the same way).
    let e = std::time::Instant::now() + Duration::from_secs(5);
    let mut after = w.snapshot_text();
    while after.matches("Frame clicked").count() < 2 && std::time::Instant::now() < e {
        std::thread::sleep(Duration::from_millis(100));
        after = w.snapshot_text();
    }
    assert_eq!(after.matches("Frame clicked").count(), 2, "{after}");
}

#[test]
fn open_shadow_roots_are_pierced_and_closed_ones_stay_closed() {
    let w = Web::at("shadow.html");
    let text = w.snapshot_text();
    assert!(text.contains("button \"Shadow button\""), "{text}");
    assert!(text.contains("textbox \"Shadow field\""), "{text}");
    assert!(!text.contains("Closed button"), "{text}");
    w.ok("web_click", json!({ "ref": "css=#shadow-btn" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Shadow clicked" }));
    w.ok(
        "web_type",
        json!({ "ref": "textbox \"Shadow field\"", "text": "inside" }),
    );
    assert!(w.snapshot_text().contains("value=\"inside\""));
}

#[test]
fn dialogs_are_answered_and_logged_never_hanging_a_step() {
    let w = Web::at("index.html");
    w.ok("web_click", json!({ "ref": "css=#alert" }));
    w.ok("web_verifyTextVisible", json!({ "text": "true:Ann" }));
    let e = w.session.step_notes().expect("a page tells its notes");
    let dialogs: Vec<&str> = e["dialogs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d.as_str())
        .collect();
    assert_eq!(dialogs, ["alert: Saved!", "confirm: Sure?", "prompt: Name?"]);
}

#[test]
fn slow_disabled_and_moving_elements_are_waited_for() {
    let w = Web::at("slow.html");
    // Appears after 800 ms; enabled after 600 ms; animated for 600 ms.
    w.ok("web_click", json!({ "ref": "css=#late" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Late clicked" }));
    w.ok("web_click", json!({ "ref": "button \"Ready\"" }));
    w.ok("web_click", json!({ "ref": "css=#mover" }));
    // Control: a wait shorter than the page's delay fails, saying what it waited for.
    let quick = Web::new(Duration::from_millis(200));
    quick.ok("web_navigate", json!({ "url": quick.site.url("slow.html") }));
    let e = quick.fails("web_click", json!({ "ref": "css=#late" }));
    assert!(
        e.contains("to be attached and visible") && e.contains("no element matches"),
        "{e}"
    );
}

#[test]
fn a_script_that_never_ends_fails_its_step_and_the_session_goes_on() {
    let w = Web::new(Duration::from_secs(2));
    w.ok("web_navigate", json!({ "url": w.site.url("index.html") }));
    let e = w.fails("web_click", json!({ "ref": "css=#spin" }));
    assert!(e.contains("kept it busy"), "{e}");
    // The page was stopped: the next steps run.
    w.ok("web_navigate", json!({ "url": w.site.url("form.html") }));
    w.ok("web_verifyTextVisible", json!({ "text": "Password" }));
    // A page whose script never ends while loading fails its navigation at the deadline.
    let e = w.fails("web_navigate", json!({ "url": w.site.url("endless.html") }));
    assert!(
        e.contains("did not finish loading") || e.contains("kept it busy"),
        "{e}"
    );
    w.ok("web_navigate", json!({ "url": w.site.url("index.html") }));
    w.ok("web_verifyTextVisible", json!({ "text": "Fixture home" }));
}

#[test]
fn a_secret_typed_is_never_seen() {
    let w = Web::at("form.html");
    w.ok(
        "web_type",
        json!({ "ref": "textbox \"Email\"", "text": "jane@example.com" }),
    );
    let msg = w.ok("web_type", json!({ "ref": "css=#password", "text": "{{secret:PW}}" }));
    assert!(!msg.contains(PASSWORD) && msg.contains("***"), "{msg}");
    // Into a plain text field as well: it reads *** there, in snapshots, values and scripts.
    w.ok(
        "web_type",
        json!({ "ref": "textbox \"Email\"", "text": "{{secret:PW}}" }),
    );
    let text = w.snapshot_text();
    assert!(!text.contains(PASSWORD) && text.contains("value=\"***\""), "{text}");
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#email", "type": "VALUE", "expected": "***" }),
    );
    let leaked = w.eval("document.getElementById('email').value + '|' + document.getElementById('password').value");
    assert!(!leaked.contains(PASSWORD), "{leaked}");
    // web_fillSecret with a literal value: not in the step log, not in the page's answers.
    w.ok(
        "web_fillSecret",
        json!({ "ref": "css=#password", "value": "literal-CANARY-99" }),
    );
    let leaked = w.eval("document.getElementById('password').value");
    assert!(!leaked.contains("literal-CANARY-99"), "{leaked}");
    let e = w.fails(
        "web_fillSecret",
        json!({ "ref": "css=#nope", "value": "literal-CANARY-99" }),
    );
    assert!(!e.contains("literal-CANARY-99"), "{e}");
    // The page really holds the values (control: the masking is not a wrong value typed). The
    // fixture signs in with the secret only: `***` typed as text is refused.
    w.ok("web_type", json!({ "ref": "css=#email", "text": "jane@example.com" }));
    w.ok("web_type", json!({ "ref": "css=#password", "text": "***" }));
    w.ok("web_click", json!({ "ref": "button \"Sign in\"" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Wrong email or password" }));
    w.ok(
        "web_fillSecret",
        json!({ "ref": "css=#password", "value": "{{secret:PW}}" }),
    );
    // The screenshot is masked: the field holding the secret is one solid box.
    let masked = field_pixels(&w, "password");
    assert!(
        masked.iter().all(|p| p[..3] == MASK),
        "the secret's field is not one solid mask: {:?}",
        &masked[..8.min(masked.len())]
    );
    w.ok("web_click", json!({ "ref": "button \"Sign in\"" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Welcome, Jane" }));
    let log = w.fixture.all_output();
    assert!(
        !log.contains(PASSWORD) && !log.contains("literal-CANARY-99"),
        "a secret reached the session's files"
    );
}

/// What the web device paints over a field holding a secret (walker.js `mask`: `#444`).
const MASK: [u8; 3] = [0x44, 0x44, 0x44];

/// The pixels of the screenshot inside the field `#id` (one pixel in from each edge, where the
/// field's border and focus ring are).
fn field_pixels(w: &Web, id: &str) -> Vec<[u8; 4]> {
    let rect: serde_json::Value = serde_json::from_str(&w.eval(&format!(
        "JSON.stringify((r => [r.left, r.top, r.right, r.bottom, innerWidth])(document.getElementById('{id}').getBoundingClientRect()))"
    )))
    .expect("the field's box");
    let png = w.session.screenshot().expect("screenshot");
    assert_eq!(png.mime, "image/png");
    let shot = crate::png_image::Png::decode(&png.bytes);
    let scale = f64::from(shot.width) / rect[4].as_f64().expect("innerWidth");
    let at = |i: usize| (rect[i].as_f64().expect("a number") * scale) as u32;
    let mut out = Vec::new();
    for y in at(1) + 3..at(3).saturating_sub(3) {
        for x in at(0) + 3..at(2).saturating_sub(3) {
            out.push(shot.px(x, y));
        }
    }
    assert!(out.len() > 100, "the field is {} pixels", out.len());
    out
}

#[test]
fn a_field_holding_plain_text_is_not_masked_in_the_screenshot() {
    // The control of the masking above: the same field holding text typed in plain sight shows
    // it (the field's own background and dark text), not the box.
    let w = Web::at("form.html");
    w.ok(
        "web_type",
        json!({ "ref": "css=#password", "text": "plain-text-typed" }),
    );
    let shown = field_pixels(&w, "password");
    assert!(!shown.iter().all(|p| p[..3] == MASK), "a plain field is masked");
    let light = shown.iter().filter(|p| p[0] > 200 && p[1] > 200 && p[2] > 200).count();
    let dark = shown.iter().filter(|p| p[0] < 120 && p[1] < 120 && p[2] < 120).count();
    assert!(
        light > 0 && dark > 0,
        "the field's background ({light}) and its dots ({dark})"
    );
}

#[test]
fn popups_are_followed_and_left_when_closed() {
    let w = Web::at("index.html");
    // A popup is a new target Chromium announces when it is ready: on a loaded CI machine that can
    // take seconds, so wait for the page and its URL together, generously.
    let settled = |text: &str, url: &str| {
        let until = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let here = w.ok("web_currentUrl", json!({}));
            if w.snapshot_text().contains(text) && here.ends_with(url) {
                return;
            }
            assert!(
                std::time::Instant::now() < until,
                "still at {here} after 30 s, waiting for {url} showing {text:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    w.ok("web_click", json!({ "ref": "css=#popup" }));
    settled("Popup page", "popup.html");
    w.ok("web_click", json!({ "ref": "button \"Close popup\"" }));
    settled("Fixture home", "index.html");
}

#[test]
fn tap_and_type_on_refs_record_web_tools_with_selectors() {
    let w = Web::at("index.html");
    let inc = w.ref_of("button \"Increment\"");
    w.ok_value("tap", json!({ "ref": inc }));
    let notes = w.ref_of("textbox \"Notes\"");
    w.ok_value("type", json!({ "ref": notes, "text": "typed" }));
    let reset = w.ref_of("button \"Reset\"");
    w.ok_value("tap", json!({ "ref": reset }));
    let heading = w.ref_of("heading \"Counter\"");
    w.ok_value("assertVisible", json!({ "ref": heading }));
    let steps = w.session.steps();
    let recorded: Vec<(String, serde_json::Value)> = steps
        .iter()
        .filter(|s| s.depth > 0)
        .map(|s| (s.tool.clone(), s.args.clone()))
        .collect();
    let tools: Vec<&str> = recorded.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        ["web_click", "web_type", "web_click", "web_verifyElementVisible"]
    );
    // The shortest unique selector: id, then test id, then role and name.
    assert_eq!(
        recorded[0].1["nodeSelector"],
        json!({ "web": { "cssSelector": "#inc" } })
    );
    assert_eq!(
        recorded[1].1["nodeSelector"],
        json!({ "web": { "cssSelector": "#notes" } })
    );
    assert_eq!(
        recorded[2].1["nodeSelector"],
        json!({ "web": { "dataTestId": "reset" } })
    );
    assert_eq!(
        recorded[3].1["nodeSelector"],
        json!({ "web": { "ariaRole": "heading", "ariaNameRegex": "Counter" } })
    );
    assert!(steps.iter().all(|s| s.args.get("ref").is_none() || s.depth == 0));
}

#[test]
fn a_huge_page_is_capped_with_a_note() {
    let w = Web::at("big.html?n=12000");
    let text = w.snapshot_text();
    assert!(
        text.contains("(note: the page is large:") && text.contains("left out"),
        "{}",
        &text[..200.min(text.len())]
    );
    let small = Web::at("big.html?n=100");
    assert!(!small.snapshot_text().contains("(note:"));
}
