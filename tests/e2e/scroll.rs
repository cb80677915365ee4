//! `scrollUntilTextIsVisible` on a screen longer than the screen: the simulated device scrolls its
//! `scrollable` container on a swipe, and the fake phone (the same app behind adb) does too.

use serde_json::json;
use trailblaze::Session;
use trailblaze_e2e::android_fixture::{self as app, fails, passes};

fn visible(s: &Session, text: &str) -> bool {
    let snap = passes(s, "snapshot", json!({}));
    snap["text"]
        .as_str()
        .unwrap_or_default()
        .contains(&format!("\"{text}\""))
}

fn scrolls_to_the_last_row_and_taps_it(s: &Session) -> serde_json::Value {
    assert!(
        visible(s, "Item 1") && !visible(s, "Item 30"),
        "the last row starts off the screen"
    );
    let v = passes(
        s,
        "scrollUntilTextIsVisible",
        json!({ "text": "Item 30", "reasoning": "the end" }),
    );
    assert!(v["swipes"].as_u64().is_some_and(|n| n >= 1), "{v}");
    assert!(visible(s, "Item 30") && !visible(s, "Item 1"), "the list moved up");
    // The row is where the result says: a tap there opens it.
    passes(s, "tapOnPoint", json!({ "x": v["found"]["x"], "y": v["found"]["y"] }));
    assert!(visible(s, "Picked"), "the tap hit the scrolled row");
    v
}

#[test]
fn the_sim_scrolls_an_off_screen_row_into_view() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    let v = scrolls_to_the_last_row_and_taps_it(&s);
    // Already visible: no swipe at all; `id` and `textRegex` find rows too.
    passes(&s, "pressKey", json!({ "keyCode": "BACK" }));
    let again = passes(&s, "scrollUntilTextIsVisible", json!({ "id": "row30" }));
    assert_eq!(again["swipes"], 0, "{again}");
    let up = passes(
        &s,
        "scrollUntilTextIsVisible",
        json!({ "textRegex": "Item [2]", "direction": "UP", "scrollStartPosition": "BOTTOM" }),
    );
    assert!(up["swipes"].as_u64() >= v["swipes"].as_u64(), "back to the top: {up}");
}

#[test]
fn the_sim_fails_at_the_end_of_the_list_without_quoting_the_text() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    let err = fails(&s, "scrollUntilTextIsVisible", json!({ "text": "Item 99" }));
    assert!(err.contains("stopped moving") && err.contains("DOWN"), "{err}");
    assert!(
        !err.contains("Item 99"),
        "the error names the field, not its value: {err}"
    );
    let err = fails(&s, "scrollUntilTextIsVisible", json!({ "direction": "DOWN" }));
    assert!(err.contains("`text`, `textRegex` or `id`"), "{err}");
    let err = fails(
        &s,
        "scrollUntilTextIsVisible",
        json!({ "text": "x", "visibilityPercentage": 0 }),
    );
    assert!(err.contains("visibilityPercentage"), "{err}");
    // The other way, back to the top, it stops there too and says which way it went.
    let err = fails(
        &s,
        "scrollUntilTextIsVisible",
        json!({ "text": "Item 99", "direction": "UP" }),
    );
    assert!(err.contains("UP") && err.contains("stopped moving"), "{err}");
    assert!(visible(&s, "Item 1"), "back at the top");
}

#[test]
fn center_element_brings_the_row_to_the_middle() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    let v = passes(
        &s,
        "scrollUntilTextIsVisible",
        json!({ "text": "Item 20", "centerElement": true }),
    );
    let y = v["found"]["y"].as_i64().unwrap_or_default();
    assert!((y - 1200).abs() <= 400, "near the middle of the 2400-pixel screen: {v}");
}

#[test]
fn the_phone_scrolls_with_input_swipe_and_the_dump_follows() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let before = fake.phone().commands.len();
    let v = scrolls_to_the_last_row_and_taps_it(&s);
    let swipes: Vec<String> = app::commands_since(&fake, before)
        .into_iter()
        .filter(|c| c.starts_with("input swipe"))
        .collect();
    assert_eq!(
        swipes.len() as u64,
        v["swipes"].as_u64().unwrap_or_default(),
        "{swipes:?}"
    );
    assert!(
        swipes.iter().all(|c| c == "input swipe 540 1680 540 720 400"),
        "the finger moves up across the middle: {swipes:?}"
    );
    // The dump marks the list scrollable, as uiautomator does for a list longer than its view.
    passes(&s, "pressKey", json!({ "keyCode": "BACK" }));
    passes(
        &s,
        "assertVisibleBySelector",
        json!({ "nodeSelector": { "androidAccessibility": { "resourceIdRegex": ".*:id/list", "isScrollable": true } } }),
    );
}

#[test]
fn the_phone_reports_a_row_it_cannot_reach() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let err = fails(
        &s,
        "scrollUntilTextIsVisible",
        json!({ "text": "Item 99", "direction": "down" }),
    );
    assert!(err.contains("stopped moving"), "{err}");
    let swipes = fake
        .phone()
        .commands
        .iter()
        .filter(|c| c.starts_with("input swipe"))
        .count();
    assert!(
        (2..=4).contains(&swipes),
        "it stops once the list stops moving: {swipes}"
    );
}
