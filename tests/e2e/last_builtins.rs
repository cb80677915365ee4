//! The last of the original's built-ins, each with a success and a failure, on the simulated device
//! and on the fake phone behind the real adb protocol (the alarm app of tests/fixtures/waypoints).

use serde_json::json;
use trailblaze_e2e::alarms_fixture::{Alarms, err, field, here, last_seq, ok, on_each_device, path_str, tools_after};

fn restart(s: &trailblaze::Session) {
    ok(
        s,
        "launchApp",
        json!({ "appId": "com.example.alarms", "launchMode": "FORCE_RESTART" }),
    );
}

#[test]
fn taps_by_text_and_accessibility_text_as_the_original_finds_them() {
    on_each_device(|s, _| {
        // Contains, not whole: `LARM` is in `ALARMS`.
        ok(s, "tapOnElementWithText", json!({ "text": "LARM" }));
        assert_eq!(here(s), ["alarms/android/list"]);
        let e = err(s, "tapOnElementWithText", json!({ "text": "Snooze" }));
        assert!(e.contains("matching `text`") && !e.contains("Snooze"), "{e}");
        // The whole accessibility text; `index` as text, as the original types it.
        ok(
            s,
            "tapOnElementWithAccessibilityText",
            json!({ "accessibilityText": "Add alarm", "index": "0" }),
        );
        assert_eq!(here(s), ["alarms/android/picker"]);
        let e = err(
            s,
            "tapOnElementWithAccessibilityText",
            json!({ "accessibilityText": "Add" }),
        );
        assert!(e.contains("matching `accessibilityText`"), "{e}");
        let e = err(
            s,
            "tapOnElementWithAccessibilityText",
            json!({ "accessibilityText": "OK", "index": "first" }),
        );
        assert!(e.contains("`index` must be a whole number"), "{e}");
        restart(s);
        // Long presses (a press-and-hold; the app's rows take it as a tap).
        ok(s, "longPressOnElementWithText", json!({ "text": "ALARMS" }));
        assert_eq!(here(s), ["alarms/android/list"]);
        assert!(err(s, "longPressOnElementWithText", json!({ "text": "ALARM" })).contains("matching `text`"));
        ok(
            s,
            "longPressElementWithAccessibilityText",
            json!({ "accessibilityText": "Add alarm" }),
        );
        assert_eq!(here(s), ["alarms/android/picker"]);
        let e = err(
            s,
            "longPressElementWithAccessibilityText",
            json!({ "accessibilityText": "Add alarm" }),
        );
        assert!(e.contains("no node on the screen"), "{e}");
        restart(s);
        ok(s, "tapOnElementWithText", json!({ "text": "ALARMS" }));
        ok(
            s,
            "tapOnAccessibilityNode",
            json!({ "contentDescriptionRegex": "Add al.*" }),
        );
        assert_eq!(here(s), ["alarms/android/picker"]);
        assert!(
            err(s, "tapOnAccessibilityNode", json!({ "classNameRegex": ".*" })).contains("`contentDescriptionRegex`")
        );
    });
}

#[test]
fn visibility_assertions_by_text_accessibility_text_and_resource_id() {
    on_each_device(|s, fake| {
        ok(s, "assertVisibleWithText", json!({ "text": "HOME" }));
        ok(s, "assertVisibleWithResourceId", json!({ "resourceId": "clock" }));
        ok(
            s,
            "assertVisibleWithResourceId",
            json!({ "resourceId": "com.example.alarms:id/clock" }),
        );
        // On the phone each missing element is waited for (5 s) before it fails.
        let e = err(s, "assertVisibleWithText", json!({ "text": "ALARM" }));
        assert!(e.contains("not visible"), "{e}");
        let e = err(s, "assertVisibleWithResourceId", json!({ "resourceId": "fab" }));
        assert!(e.contains("`resourceId`"), "{e}");
        ok(s, "tapOnElementWithText", json!({ "text": "ALARMS" }));
        ok(
            s,
            "assertVisibleWithAccessibilityText",
            json!({ "accessibilityText": "Add alarm" }),
        );
        if fake.is_none() {
            let e = err(
                s,
                "assertVisibleWithAccessibilityText",
                json!({ "accessibilityText": "Remove" }),
            );
            assert!(e.contains("not visible"), "{e}");
        }
    });
}

#[test]
fn tap_on_a_selector_at_a_relative_point_and_its_failures() {
    on_each_device(|s, _| {
        let r = ok(
            s,
            "tapOn",
            json!({ "selector": { "androidAccessibility": { "textRegex": "ALARMS" } }, "relativePoint": "10%,50%" }),
        );
        assert_eq!(here(s), ["alarms/android/list"]);
        assert!(
            r["tapped"]["x"].as_i64().is_some_and(|x| x < 540),
            "left of the centre: {r}"
        );
        let e = err(
            s,
            "tapOn",
            json!({ "selector": { "androidAccessibility": { "textRegex": ".*" } } }),
        );
        assert!(e.contains("matches") && e.contains("nodes"), "{e}");
        let e = err(
            s,
            "tapOn",
            json!({ "selector": { "androidAccessibility": { "textRegex": "HOME" } }, "relativePoint": "left" }),
        );
        assert!(e.contains("`relativePoint`"), "{e}");
    });
}

fn ref_of(s: &trailblaze::Session, text: &str) -> String {
    let snap = ok(s, "snapshot", json!({}));
    let line = snap["text"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .find(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no {text}: {snap}"))
        .to_string();
    line[line.find('[').unwrap_or(0) + 1..line.find(']').unwrap_or(0)].to_string()
}

#[test]
fn long_press_and_drags_by_ref_record_what_they_did() {
    on_each_device(|s, fake| {
        let alarms = ref_of(s, "ALARMS");
        let seq = last_seq(s);
        ok(s, "longPress", json!({ "ref": alarms }));
        assert_eq!(
            tools_after(s, seq),
            ["tapOnElementBySelector"],
            "recorded as the press on its selector"
        );
        assert_eq!(here(s), ["alarms/android/list"]);
        assert!(err(s, "longPress", json!({ "ref": "zz999" })).contains("unknown ref"));
        let from = ref_of(s, "6:45");
        let seq = last_seq(s);
        ok(
            s,
            "dragTo",
            json!({ "ref": from, "toX": 540, "toY": 200, "durationMs": 800 }),
        );
        assert_eq!(tools_after(s, seq), ["dragByPoints"]);
        if let Some(fake) = fake {
            let last = fake.phone().commands.last().cloned().unwrap_or_default();
            assert!(last.contains("input swipe") && last.contains(" 540 200 800"), "{last}");
        }
        let e = err(s, "dragTo", json!({ "ref": from, "toRef": from, "toX": 1 }));
        assert!(e.contains("not both"), "{e}");
        assert!(err(s, "dragTo", json!({ "ref": from, "toX": 1 })).contains("go together"));
        ok(
            s,
            "dragByPoints",
            json!({ "startX": 100, "startY": 900, "endX": 100, "endY": 400 }),
        );
        assert!(
            err(
                s,
                "dragByPoints",
                json!({ "startX": 100, "startY": 900, "endX": 100, "endY": 99999 })
            )
            .contains("off the screen")
        );
        ok(
            s,
            "swipeWithRelativeCoordinates",
            json!({ "startRelative": "50%,80%", "endRelative": "50%,20%" }),
        );
        assert!(
            err(
                s,
                "swipeWithRelativeCoordinates",
                json!({ "startRelative": "50", "endRelative": "1%,1%" })
            )
            .contains("`startRelative`")
        );
        // BACK from the list goes home; unknown arguments are refused by name.
        let seq = last_seq(s);
        ok(s, "pressBack", json!({}));
        assert_eq!(tools_after(s, seq), ["pressKey"]);
        assert_eq!(here(s), ["alarms/android/home"]);
        assert!(err(s, "pressBack", json!({ "times": 2 })).contains("times"));
    });
}

#[test]
fn clear_text_and_input_text_random() {
    on_each_device(|s, _| {
        ok(s, "tapOnElementWithText", json!({ "text": "ALARMS" }));
        ok(
            s,
            "tapOnElementWithAccessibilityText",
            json!({ "accessibilityText": "Add alarm" }),
        );
        ok(
            s,
            "tapOnElementBySelector",
            json!({ "nodeSelector": { "androidAccessibility": { "hintTextRegex": "hour" } } }),
        );
        ok(s, "inputText", json!({ "text": "123" }));
        assert_eq!(field(s, "hour").as_deref(), Some("123"));
        let r = ok(s, "clearText", json!({}));
        assert_eq!(r["erased"], 3, "exactly the field's length");
        assert_eq!(field(s, "hour").as_deref(), Some(""));
        assert!(err(s, "clearText", json!({ "all": true })).contains("all"));
        // A fresh value typed and remembered: later calls find it as {{alarmLabel}}.
        let r = ok(
            s,
            "inputTextRandom",
            json!({ "variable": "alarmLabel", "prefix": "7", "digitCount": 1, "hideKeyboardAfter": false }),
        );
        let value = r["value"].as_str().expect("value").to_string();
        assert!(value.len() == 2 && value.starts_with('7'), "{value}");
        assert_eq!(field(s, "hour").as_deref(), Some(value.as_str()));
        ok(
            s,
            "assertEquals",
            json!({ "actual": "{{alarmLabel}}", "expected": value }),
        );
        // A name that cannot be remembered types nothing.
        ok(s, "clearText", json!({}));
        let e = err(s, "inputTextRandom", json!({ "variable": "no spaces please" }));
        assert!(e.contains("`variable`"), "{e}");
        assert_eq!(field(s, "hour").as_deref(), Some(""));
        assert!(err(s, "inputTextRandom", json!({ "variable": "v", "digitCount": 0 })).contains("`digitCount`"));
    });
}

#[test]
fn stop_app_wait_for_change_and_the_whole_view_tree() {
    on_each_device(|s, fake| {
        ok(s, "stopApp", json!({ "appId": "com.example.alarms" }));
        assert!(here(s).is_empty(), "the launcher shows");
        if let Some(fake) = fake {
            let cmds = fake.phone().commands.join("\n");
            assert!(cmds.contains("am force-stop 'com.example.alarms'"), "{cmds}");
        }
        let e = err(s, "stopApp", json!({ "appId": "com.example.nothere" }));
        assert!(e.contains("not installed"), "{e}");
        restart(s);
        let tree = ok(s, "requestDetailedViewHierarchy", json!({}));
        assert!(
            tree["text"]
                .as_str()
                .is_some_and(|t| t.contains("id=\"com.example.alarms:id/clock\"")),
            "{tree}"
        );
        assert!(err(s, "requestDetailedViewHierarchy", json!({ "depth": 2 })).contains("depth"));
        match fake {
            // The simulated screen changes only when a tool acts: settled at once.
            None => {
                assert_eq!(ok(s, "waitForChange", json!({}))["changed"], false);
                assert!(err(s, "waitForChange", json!({ "timeoutMs": 0 })).contains("`timeoutMs`"));
            }
            // The phone is watched: nothing moves, so a required change fails and a settle passes.
            Some(_) => {
                let e = err(s, "waitForChange", json!({ "timeoutMs": 600 }));
                assert!(e.contains("did not change within 600 ms"), "{e}");
                let r = ok(s, "waitForChange", json!({ "timeoutMs": 600, "requireChange": false }));
                assert_eq!(r["changed"], false);
            }
        }
    });
}

#[test]
fn answers_boolean_string_and_element_retriever() {
    on_each_device(|s, _| {
        ok(
            s,
            "booleanAssertion",
            json!({ "reason": "the home tab shows", "result": true }),
        );
        let e = err(
            s,
            "booleanAssertion",
            json!({ "reason": "no alarm is set", "result": false }),
        );
        assert!(e.contains("the statement is false: no alarm is set"), "{e}");
        assert_eq!(
            ok(
                s,
                "stringEvaluation",
                json!({ "reason": "the clock", "result": "10:09" })
            )["result"],
            "10:09"
        );
        assert!(err(s, "stringEvaluation", json!({ "reason": "r" })).contains("result"));
        ok(s, "tapOnElementWithText", json!({ "text": "ALARMS" }));
        let r = ok(
            s,
            "elementRetriever",
            json!({ "identifier": "the add button", "locatorType": "content_description", "value": "Add alarm" }),
        );
        assert!(
            r["ref"].as_str().is_some_and(|x| !x.is_empty()) && r["contentDescription"] == "Add alarm",
            "{r}"
        );
        let e = err(
            s,
            "elementRetriever",
            json!({ "identifier": "x", "locatorType": "TEXT", "value": "Snooze" }),
        );
        assert!(e.contains("no node on the screen"), "{e}");
        let e = err(
            s,
            "elementRetriever",
            json!({ "identifier": "x", "locatorType": "TEXT", "value": "", "success": false, "reason": "nothing like it" }),
        );
        assert!(e.contains("nothing like it"), "{e}");
    });
}

#[test]
fn run_trail_replays_another_trails_recordings_and_script_runs_its_source() {
    let a = Alarms::new();
    let ok_trail = a.home.join("trails/alarms/to-list.trail.yaml");
    std::fs::write(
        &ok_trail,
        "config:\n  target: alarms\ntrail:\n  - step: Open the list\n    recording:\n      android:\n        - tapOnElementWithText: { text: ALARMS }\n",
    )
    .expect("write");
    let bad_trail = a.home.join("trails/alarms/bad.trail.yaml");
    std::fs::write(
        &bad_trail,
        "config:\n  target: alarms\ntrail:\n  - step: Open a tab that is not there\n    recording:\n      android:\n        - tapOnElementWithText: { text: WEATHER }\n",
    )
    .expect("write");
    let not_trail = a.home.join("trails/config/trailblaze.yaml");
    on_each_device(|s, _| {
        let seq = last_seq(s);
        ok(s, "runTrail", json!({ "path": path_str(&ok_trail) }));
        assert_eq!(tools_after(s, seq), ["tapOnElementWithText"]);
        assert_eq!(here(s), ["alarms/android/list"]);
        assert!(err(s, "runTrail", json!({ "path": path_str(&bad_trail) })).contains("matching `text`"));
        assert!(err(s, "runTrail", json!({ "path": path_str(&not_trail) })).contains("must name a trail file"));
        // `script`: a body that asks, then returns the calls to run.
        restart(s);
        let seq = last_seq(s);
        ok(
            s,
            "script",
            json!({
                "params": { "tab": "ALARMS" },
                "source": "const seen = trailblaze.execute('assertVisibleWithText', { text: input.params.tab });\n\
                           if (seen.isError) return '';\n\
                           return `- tapOnElementWithText: { text: ${input.params.tab} }`;"
            }),
        );
        assert_eq!(tools_after(s, seq), ["assertVisibleWithText", "tapOnElementWithText"]);
        assert_eq!(here(s), ["alarms/android/list"]);
        let e = err(s, "script", json!({ "source": "throw new Error('no alarms today')" }));
        assert!(e.contains("no alarms today"), "{e}");
        let e = err(s, "script", json!({ "source": "return '- a: 1\\n- b';" }));
        assert!(e.contains("not one `toolName: {args}`"), "{e}");
    });
}

#[test]
fn the_goose_launch_check_is_a_web_tool() {
    let a = Alarms::new();
    let (_p, s) = a.sim_session();
    let e = err(&s, "playwright_desktop_launchGoose", json!({}));
    assert!(e.contains("a tool for web") && e.contains("android"), "{e}");
}
