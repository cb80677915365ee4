//! Waypoints, shortcuts, trailheads and toolsets on the project's own fixture (tests/fixtures/
//! waypoints, an alarm app): every file loads and checks with both gates; a bad selector is a finding
//! at its line in both; a shortcut whose start waypoint does not hold fails before it acts, one whose
//! end waypoint does not hold fails after; a forbidden selector that is present is named; the
//! snapshot and `trailblaze waypoints` name where the screen is; toolsets decide what `tools --json`
//! lists and what a session offers, and `setActiveToolSets` changes it.

use serde_json::{Value, json};
use trailblaze_e2e::alarms_fixture::{Alarms, err, here, last_seq, ok, on_each_device, tools_after};
use trailblaze_e2e::{in_dir, text};

fn check_json(a: &Alarms, extra: &[&str]) -> (Value, String, Option<i32>) {
    let mut args = vec!["check", "--json"];
    args.extend_from_slice(extra);
    let o = in_dir(&a.f, &a.home, &args);
    let (out, err) = text(&o);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("json: {out}{err}"));
    (v, err, o.status.code())
}

#[test]
fn every_navigation_file_loads_and_passes_both_gates() {
    let a = Alarms::new();
    let (v, err, code) = check_json(&a, &[]);
    assert_eq!(code, Some(0), "{v}{err}");
    assert_eq!(v["findings"], json!([]), "{v}");
    assert_eq!(
        v["navigation"],
        json!({ "waypoints": 4, "shortcuts": 3, "trailheads": 1, "toolsets": 1 })
    );
    // The TypeScript compiler agrees (the shortcuts' calls and every selector, as TypeScript).
    let (v, err, code) = check_json(&a, &["--tsc"]);
    assert_eq!(code, Some(0), "{v}{err}");
    assert_eq!(v["findings"], json!([]), "{v}");
    // And the trail that walks the shortcuts replays green.
    let o = in_dir(&a.f, &a.home, &["run"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
}

#[test]
fn a_bad_waypoint_selector_or_shortcut_call_is_a_finding_at_its_line_in_both_gates() {
    let a = Alarms::new();
    a.file(
        "waypoints/broken.waypoint.yaml",
        "id: alarms/android/broken\nandroid:\n  required:\n    - selector:\n        androidAccessibility:\n          textRegx: OK\n  forbidden:\n    - selector: { androidAccessibility: { textRegex: \"(\" } }\n",
    );
    a.file(
        "shortcuts/alarms_broken.shortcut.yaml",
        "id: alarms_broken\ndescription: d\nshortcut: { from: alarms/android/home, to: alarms/android/nowhere }\ntools:\n  - tapOnElementWithText: { txt: ALARMS }\n",
    );
    let (native, _, code) = check_json(&a, &[]);
    assert_eq!(code, Some(1));
    let (tsc, _, code) = check_json(&a, &["--tsc"]);
    assert_eq!(code, Some(1));
    let at = |v: &Value, file: &str| -> Vec<(u64, u64, String)> {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["file"].as_str().is_some_and(|p| p.ends_with(file)))
            .map(|f| {
                (
                    f["line"].as_u64().unwrap_or(0),
                    f["col"].as_u64().unwrap_or(0),
                    f["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let w = at(&native, "broken.waypoint.yaml");
    assert!(
        w.iter().any(|(l, c, m)| (*l, *c) == (6, 11) && m.contains("textRegx")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|(l, _, m)| *l == 8 && m.contains("regular expression")),
        "{w:?}"
    );
    let s = at(&native, "alarms_broken.shortcut.yaml");
    assert!(s.iter().any(|(l, _, m)| *l == 5 && m.contains("txt")), "{s:?}");
    assert!(
        s.iter()
            .any(|(l, _, m)| *l == 3 && m.contains("alarms/android/nowhere")),
        "{s:?}"
    );
    // tsc finds the same places (its own words), the regular expression through the native gate.
    // Both gates agree on what is wrong where: the file, the waypoint or shortcut, the tool. (tsc
    // points at the selector or call as a whole, the native gate at the key inside it.)
    let identity = |v: &Value| -> std::collections::BTreeSet<String> {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| format!("{} · {} · {}", f["file"], f["step"], f["tool"]))
            .collect()
    };
    assert_eq!(identity(&tsc), identity(&native), "{tsc}\n{native}");
    assert_eq!(at(&tsc, "broken.waypoint.yaml").len(), 2, "{tsc}");
    assert!(
        at(&tsc, "alarms_broken.shortcut.yaml")
            .iter()
            .any(|(l, _, m)| *l == 5 && m.contains("txt")),
        "{tsc}"
    );
}

#[test]
fn a_shortcut_whose_start_does_not_hold_fails_before_acting_and_one_whose_end_does_not_after() {
    on_each_device(|s, _| {
        // At home, not in the picker: the start check fails and nothing else runs.
        assert_eq!(here(s), ["alarms/android/home"]);
        let seq = last_seq(s);
        let e = err(s, "alarms_setTime", json!({ "hour": "7" }));
        assert!(
            e.contains("starts at waypoint `alarms/android/picker`")
                && e.contains("nothing was done")
                && e.contains("\"The hour and minute fields\" (0 of 2 found)"),
            "{e}"
        );
        assert_eq!(tools_after(s, seq), ["assertWaypoint"], "only the check ran");
        assert_eq!(here(s), ["alarms/android/home"], "the screen did not move");
        // Walk there by the shortcuts (each checks both ends), then a time the app refuses: the body
        // runs, the screen stays in the picker, and the end check names what is missing.
        ok(s, "alarms_homeToList", json!({}));
        ok(s, "alarms_listToPicker", json!({}));
        let seq = last_seq(s);
        let e = err(s, "alarms_setTime", json!({ "hour": "8" }));
        assert!(
            e.contains("ran, and the screen did not reach its end waypoint `alarms/android/saved`")
                && e.contains("missing required \"The new 7:30 alarm\""),
            "{e}"
        );
        let ran = tools_after(s, seq);
        assert!(
            ran.contains(&"inputText".to_string()) && ran.last().map(String::as_str) == Some("assertWaypoint"),
            "{ran:?}"
        );
        // Positive control, from a fresh start (the fields keep what was typed): the right time
        // reaches the end waypoint, the default minute applied.
        ok(s, "alarms_launch", json!({}));
        ok(s, "alarms_homeToList", json!({}));
        ok(s, "alarms_listToPicker", json!({}));
        ok(s, "alarms_setTime", json!({ "hour": "7" }));
        assert_eq!(here(s), ["alarms/android/saved"]);
    });
}

#[test]
fn a_waypoint_with_a_forbidden_selector_present_fails_naming_it() {
    on_each_device(|s, _| {
        ok(s, "alarms_homeToList", json!({}));
        // Control: on the list the waypoint holds.
        assert_eq!(
            ok(s, "assertWaypoint", json!({ "waypoint": "alarms/android/list" }))["waypoint"],
            "alarms/android/list"
        );
        ok(s, "alarms_listToPicker", json!({}));
        ok(s, "alarms_setTime", json!({ "hour": "7" }));
        // Back on the list, now with the new alarm: it is the forbidden one.
        let e = err(
            s,
            "assertWaypoint",
            json!({ "waypoint": "alarms/android/list", "timeoutMs": 300 }),
        );
        assert!(e.contains("forbidden present \"The new 7:30 alarm\" (1 found)"), "{e}");
        assert!(!e.contains("missing required"), "every required one is there: {e}");
        let e = err(s, "assertWaypoint", json!({ "waypoint": "alarms/android/lst" }));
        assert!(
            e.contains("unknown waypoint") && e.contains("alarms/android/list"),
            "{e}"
        );
    });
}

#[test]
fn a_trailhead_lands_on_its_waypoint_from_anywhere_or_fails_naming_it() {
    on_each_device(|s, _| {
        ok(s, "alarms_homeToList", json!({}));
        ok(s, "alarms_launch", json!({}));
        assert_eq!(here(s), ["alarms/android/home"]);
        // The app stopped: the launcher shows, and the trailhead brings it back.
        ok(s, "stopApp", json!({ "appId": "com.example.alarms" }));
        assert!(here(s).is_empty());
        ok(s, "alarms_launch", json!({}));
        assert_eq!(here(s), ["alarms/android/home"]);
    });
    // One whose launch lands elsewhere fails after it ran, naming where it should have landed.
    let a = Alarms::new();
    a.file(
        "trailheads/alarms_launchToList.trailhead.yaml",
        "id: alarms_launchToList\ndescription: d\ntrailhead: { to: alarms/android/list }\ntools:\n  - launchApp: { appId: com.example.alarms, launchMode: FORCE_RESTART }\n",
    );
    let (_p, s) = a.sim_session();
    let e = err(&s, "alarms_launchToList", json!({}));
    assert!(
        e.contains("trailhead `alarms_launchToList` ran") && e.contains("`alarms/android/list`"),
        "{e}"
    );
}

#[test]
fn the_snapshot_and_the_waypoints_command_name_where_the_screen_is() {
    let a = Alarms::new();
    let (_p, s) = a.sim_session();
    let snap = ok(&s, "snapshot", json!({}));
    assert!(
        snap["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("waypoint: alarms/android/home\n")),
        "{snap}"
    );
    let o = in_dir(&a.f, &a.home, &["waypoints", "--json"]);
    let (out, e) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("json");
    let at: Vec<&str> = rows
        .iter()
        .filter(|r| r["here"] == true)
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(at, ["alarms/android/home"], "{out}");
    assert_eq!(rows.len(), 4);
    // Control: no device looked at, no `here`.
    let o = in_dir(&a.f, &a.home, &["waypoints", "--no-screen", "--json"]);
    assert!(text(&o).0.contains("\"here\": null"), "{}", text(&o).0);
}

fn tool_names(a: &Alarms) -> Vec<String> {
    let o = in_dir(&a.f, &a.home, &["tools", "--json"]);
    let (out, e) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let defs: Vec<Value> = serde_json::from_str(&out).expect("json");
    defs.iter()
        .filter_map(|d| d["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn toolsets_decide_what_tools_json_lists() {
    let a = Alarms::new();
    // `tool_sets: [core_interaction, navigation]`: no verification, no memory, not `alarm_extras`.
    let names = tool_names(&a);
    for present in [
        "tap",
        "type",
        "snapshot",
        "pressBack",
        "setActiveToolSets",
        "alarms_launch",
    ] {
        assert!(names.iter().any(|n| n == present), "{present} in {names:?}");
    }
    for absent in [
        "assertVisible",
        "rememberText",
        "assertWaypoint",
        "alarms_countAlarms",
        "alarms_homeToList",
    ] {
        assert!(!names.iter().any(|n| n == absent), "{absent} not in {names:?}");
    }
    // Declaring more toolsets changes the list.
    let manifest = std::fs::read_to_string(a.map_dir().join("trailmap.yaml")).expect("read");
    a.file(
        "trailmap.yaml",
        &manifest.replace(
            "[core_interaction, navigation]",
            "[core_interaction, verification, alarm_extras]",
        ),
    );
    let names = tool_names(&a);
    for present in ["assertVisible", "assertWaypoint", "alarms_countAlarms"] {
        assert!(names.iter().any(|n| n == present), "{present} in {names:?}");
    }
    assert!(
        !names.iter().any(|n| n == "pressBack"),
        "navigation is no longer declared: {names:?}"
    );
    // With none declared, the framework's defaults (verification and memory among them).
    a.file(
        "trailmap.yaml",
        &manifest.replace("      tool_sets: [core_interaction, navigation]\n", ""),
    );
    let names = tool_names(&a);
    assert!(
        names.iter().any(|n| n == "rememberText") && names.iter().any(|n| n == "pressBack"),
        "{names:?}"
    );
}

#[test]
fn set_active_tool_sets_changes_what_a_session_offers() {
    on_each_device(|s, _| {
        let offered =
            |s: &trailblaze::Session| -> Vec<String> { s.offered_tools().into_iter().map(|d| d.name).collect() };
        let start = offered(s);
        assert!(!start.contains(&"assertVisible".to_string()) && start.contains(&"pressBack".to_string()));
        // The screen is at home: its shortcut is offered, the others wait for their start.
        assert!(start.contains(&"alarms_homeToList".to_string()) && !start.contains(&"alarms_setTime".to_string()));
        let r = ok(
            s,
            "setActiveToolSets",
            json!({ "toolSetIds": ["verification", "alarm_extras"] }),
        );
        assert!(
            r["active"]
                .as_array()
                .is_some_and(|a| a.contains(&json!("alarm_extras"))),
            "{r}"
        );
        let now = offered(s);
        assert!(now.contains(&"assertVisible".to_string()) && now.contains(&"alarms_countAlarms".to_string()));
        assert!(
            !now.contains(&"pressBack".to_string()),
            "navigation was replaced: {now:?}"
        );
        assert!(now.contains(&"tap".to_string()), "core_interaction is always enabled");
        assert_eq!(s.active_toolsets().iter().filter(|t| *t == "navigation").count(), 0);
        // Unknown or other-platform ids are refused, naming them; nothing changes.
        let e = err(s, "setActiveToolSets", json!({ "toolSetIds": ["verificaton"] }));
        assert!(e.contains("did you mean `verification`"), "{e}");
        let e = err(s, "setActiveToolSets", json!({ "toolSetIds": ["web_core"] }));
        assert!(e.contains("not for this session's device"), "{e}");
        assert_eq!(offered(s), now);
        // Empty: the always-enabled ones only.
        ok(s, "setActiveToolSets", json!({ "toolSetIds": [] }));
        assert!(!offered(s).contains(&"assertVisible".to_string()));
        // After a move, the shortcut from the new screen is offered.
        ok(s, "alarms_homeToList", json!({}));
        let moved = offered(s);
        assert!(
            moved.contains(&"alarms_listToPicker".to_string()) && !moved.contains(&"alarms_homeToList".to_string())
        );
    });
}
