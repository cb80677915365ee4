use std::path::Path;

use super::*;
use crate::device::Device;
use crate::device::sim::SimDevice;

const APP: &str = r#"
id: com.example.clock
start: alarms
screens:
  alarms:
    nodes:
      - { id: tab_alarm, class: android.widget.TextView, text: Alarm, toggle: true, checked: true }
      - { id: fab, class: android.widget.Button, contentDescription: Add alarm, tap: { goto: picker } }
  picker:
    nodes:
      - { id: ok, class: android.widget.Button, text: OK, tap: { back: true } }
"#;

fn snap_of(app: &str) -> Snapshot {
    let mut sim = SimDevice::from_app_yaml(app, Path::new("app.yaml")).expect("app");
    Snapshot::from_tree(sim.snapshot().expect("tree"))
}

fn waypoint(text: &str) -> Result<Waypoint, Vec<crate::yaml::YamlError>> {
    let doc = crate::yaml::parse(text, Path::new("w.waypoint.yaml")).expect("yaml");
    load::read(&doc)
}

const ALARM_TAB: &str = r#"
id: clock/android/alarm_tab
description: The alarm tab
android:
  required:
    - description: Add-alarm button
      selector: { androidAccessibility: { resourceIdRegex: "{{target.appId}}:id/fab" } }
  forbidden:
    - description: Time picker OK button
      selector: { androidAccessibility: { resourceIdRegex: "{{target.appId}}:id/ok" } }
ios: {}
"#;

#[test]
fn a_screen_is_at_a_waypoint_when_required_hold_and_forbidden_do_not() {
    let wp = waypoint(ALARM_TAB).expect("loads");
    assert_eq!(wp.blocks.len(), 2);
    let reg = Registry::new(vec![wp.clone()], vec!["com.example.clock".into()]);
    let alarms = snap_of(APP);
    assert_eq!(reg.evaluate(&wp, &alarms, Platform::Android), Verdict::Matched);
    assert_eq!(reg.matching(&alarms, Platform::Android), ["clock/android/alarm_tab"]);
    // On the picker the required button is gone and the forbidden one is there: both are named.
    let picker = snap_of(&APP.replace("start: alarms", "start: picker"));
    let v = reg.evaluate(&wp, &picker, Platform::Android);
    let text = v.explain(&wp.id);
    assert!(
        text.contains("missing required \"Add-alarm button\" (0 of 1 found)"),
        "{text}"
    );
    assert!(
        text.contains("forbidden present \"Time picker OK button\" (1 found)"),
        "{text}"
    );
}

#[test]
fn a_forbidden_selector_alone_fails_the_match_and_is_named() {
    // Control first: without the forbidden entry the same screen matches.
    let plain = r#"
id: clock/android/any
android:
  required:
    - selector: { androidAccessibility: { textRegex: OK } }
"#;
    let picker = snap_of(&APP.replace("start: alarms", "start: picker"));
    let wp = waypoint(plain).expect("loads");
    let reg = Registry::new(vec![wp.clone()], vec![]);
    assert!(reg.evaluate(&wp, &picker, Platform::Android).matched());
    let with_forbidden = format!(
        "{plain}  forbidden:\n    - description: the OK button\n      selector: {{ androidAccessibility: {{ textRegex: OK }} }}\n"
    );
    let wp = waypoint(&with_forbidden).expect("loads");
    let v = reg.evaluate(&wp, &picker, Platform::Android);
    assert_eq!(
        v,
        Verdict::Mismatch {
            missing: vec![],
            present: vec!["\"the OK button\" (1 found)".into()]
        }
    );
}

#[test]
fn no_block_for_the_device_and_an_unresolved_app_id_fail_closed() {
    let ios_only = waypoint("id: a/b\nios:\n  required:\n    - selector: { iosMaestro: { textRegex: X } }\n").unwrap();
    let reg = Registry::new(vec![], vec![]);
    let snap = snap_of(APP);
    assert!(matches!(
        reg.evaluate(&ios_only, &snap, Platform::Android),
        Verdict::NoBlock { .. }
    ));
    // `{{target.appId}}` with no app id to put there: never a match, even though the forbidden
    // selector could not fire.
    let wp = waypoint(ALARM_TAB).unwrap();
    assert!(matches!(
        reg.evaluate(&wp, &snap, Platform::Android),
        Verdict::Unresolved { .. }
    ));
    // Several app ids: any of them.
    let reg = Registry::new(vec![], vec!["com.other".into(), "com.example.clock".into()]);
    assert!(reg.evaluate(&wp, &snap, Platform::Android).matched());
}

#[test]
fn the_closest_block_of_the_lineage_gives_each_list() {
    // `android-phone` says what is forbidden, `android` what is required.
    let wp = waypoint(
        "id: a/b\nandroid:\n  required:\n    - selector: { androidAccessibility: { textRegex: Alarm } }\n\
         android-phone:\n  forbidden:\n    - selector: { androidAccessibility: { textRegex: Alarm } }\n",
    )
    .unwrap();
    let reg = Registry::new(vec![], vec![]);
    let v = reg.evaluate(&wp, &snap_of(APP), Platform::Android);
    assert!(matches!(v, Verdict::Mismatch { ref missing, ref present } if missing.is_empty() && present.len() == 1));
}

#[test]
fn bad_files_are_errors_at_their_key() {
    let e = waypoint("id: a/b\nrequired: []\n").unwrap_err();
    assert!(e[0].message.contains("belongs inside a device classifier"), "{}", e[0]);
    let e = waypoint("id: a/b\nandriod: {}\n").unwrap_err();
    assert!(e[0].message.contains("did you mean `android`"), "{}", e[0]);
    assert_eq!((e[0].pos.line, e[0].pos.col), (2, 1));
    let e = waypoint("id: a/b\nandroid:\n  requird: []\n").unwrap_err();
    assert_eq!(e[0].pos.line, 3, "{}", e[0]);
    let e = waypoint("id: a/b\nandroid:\n  required:\n    - minCount: 0\n      selector: {}\n").unwrap_err();
    assert!(e[0].message.contains("minCount"), "{}", e[0]);
    let e = waypoint("description: x\n").unwrap_err();
    assert!(e[0].message.contains("needs an `id`"), "{}", e[0]);
    // Controls: a form factor and an unknown classifier are blocks; a bare id is a waypoint.
    assert!(waypoint("id: a/b\nandroid-tablet: {}\nwatch: {}\n").is_ok());
    assert!(waypoint("id: goose/home\ndescription: no blocks yet\n").is_ok());
}

#[test]
fn a_condition_keeps_where_its_selector_is() {
    let wp = waypoint(ALARM_TAB).unwrap();
    let (_, block) = &wp.blocks[0];
    assert_eq!(block.required[0].path, "android.required[0].selector");
    assert_eq!((block.required[0].pos.line, block.required[0].pos.col), (7, 7));
}
