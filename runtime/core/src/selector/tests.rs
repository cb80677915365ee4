use super::*;
use crate::device::{Bounds, ViewNode, ViewTree};

#[test]
#[allow(clippy::invalid_regex)] // the control builds an invalid regex on purpose
fn java_quoting_matches_the_stretch_as_text() {
    let p = r"\QMouse - USB-C, Gray - $34.99\E";
    assert!(check_pattern(p).is_ok());
    assert!(text_matches(p, Some("Mouse - USB-C, Gray - $34.99")));
    assert!(!text_matches(p, Some("Mouse - USB-C, Gray - $34X99")));
    // A quote with no `\E` runs to the end; regex around it still works.
    assert!(text_matches(r"Total: \Q$5.00", Some("Total: $5.00")));
    assert!(text_matches(r"(?i)total.*\Q(1)\E", Some("TOTAL x (1)")));
    // An escaped backslash before Q is a backslash and a Q, not a quote.
    assert!(text_matches(r"a\\Qb", Some(r"a\Qb")));
    // Control: without the quoting the pattern is no valid Rust regex at all.
    #[allow(clippy::invalid_regex)]
    let raw = regex::Regex::new(r"\QMouse\E");
    assert!(raw.is_err());
}

fn node(class: &str, text: Option<&str>, id: Option<&str>, top: i32, children: Vec<ViewNode>) -> ViewNode {
    ViewNode {
        class_name: class.into(),
        text: text.map(Into::into),
        resource_id: id.map(Into::into),
        bounds: Bounds {
            left: 0,
            top,
            right: 1000,
            bottom: top + 100,
        },
        enabled: true,
        children,
        ..ViewNode::default()
    }
}

/// Two rows with the same label, told apart by their containers.
fn snap() -> Snapshot {
    let row = |id: &str, top: i32| {
        node(
            "android.widget.LinearLayout",
            None,
            Some(id),
            top,
            vec![node("android.widget.TextView", Some("Open"), None, top, vec![])],
        )
    };
    let root = node(
        "android.widget.FrameLayout",
        None,
        None,
        0,
        vec![
            node("android.widget.TextView", Some("Header"), None, 0, vec![]),
            row("app:id/first", 200),
            row("app:id/second", 400),
        ],
    );
    Snapshot::from_tree(ViewTree {
        app_id: Some("app".into()),
        width: 1000,
        height: 2000,
        root,
    })
}

fn text(t: &str) -> TrailblazeNodeSelector {
    TrailblazeNodeSelector {
        android_accessibility: Some(AndroidAccessibilityMatch {
            text_regex: Some(t.into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn the_whole_grammar_reads_and_what_the_tree_does_not_carry_never_matches() {
    let mut root = node("android.widget.FrameLayout", None, None, 0, vec![]);
    let mut tab = node(
        "android.widget.TextView",
        Some("ALARM"),
        Some("app:id/tab"),
        100,
        vec![],
    );
    tab.selected = true;
    let mut list = node(
        "androidx.recyclerview.widget.RecyclerView",
        None,
        Some("app:id/list"),
        300,
        vec![],
    );
    list.scrollable = true;
    let mut switch = node("android.widget.Switch", None, Some("app:id/on"), 500, vec![]);
    switch.checked = Some(false);
    root.children = vec![tab, list, switch];
    let s = Snapshot::from_tree(ViewTree {
        app_id: Some("app".into()),
        width: 1000,
        height: 2000,
        root,
    });
    let one = |v: serde_json::Value| -> usize {
        let sel: TrailblazeNodeSelector = serde_json::from_value(v).expect("the grammar reads it");
        sel.resolve(&s).len()
    };
    use serde_json::json;
    assert_eq!(one(json!({"androidAccessibility": {"isSelected": true}})), 1);
    assert_eq!(one(json!({"androidAccessibility": {"isScrollable": true}})), 1);
    assert_eq!(
        one(json!({"androidAccessibility": {"isCheckable": true}})),
        1,
        "checkable: has a checked state"
    );
    assert_eq!(
        one(json!({"androidMaestro": {"selected": true, "clickable": false}})),
        1
    );
    // What an Android view tree does not carry reads as absent: `false` holds, `true` or a number never.
    assert_eq!(
        one(json!({"androidAccessibility": {"textRegex": "ALARM", "isHeading": false}})),
        1
    );
    assert_eq!(
        one(json!({"androidAccessibility": {"textRegex": "ALARM", "isHeading": true}})),
        0
    );
    assert_eq!(
        one(json!({"androidAccessibility": {"textRegex": "ALARM", "collectionItemRowIndex": 0}})),
        0
    );
    assert_eq!(
        one(json!({"androidAccessibility": {"textRegex": "ALARM", "labeledByTextRegex": "Tabs"}})),
        0
    );
    // Other platforms' drivers read, and never match an Android screen.
    for driver in [
        json!({"iosMaestro": {"textRegex": "ALARM"}}),
        json!({"iosAxe": {"labelRegex": "ALARM", "enabled": true}}),
        json!({"compose": {"textRegex": "ALARM", "testTag": "tab"}}),
        json!({"web": {"ariaNameRegex": "ALARM", "headingLevel": 1, "nthIndex": 0}}),
    ] {
        assert_eq!(one(driver), 0);
    }
    // Control: an unknown field of a new driver is refused, as everywhere.
    assert!(serde_json::from_value::<TrailblazeNodeSelector>(json!({"iosAxe": {"label": "x"}})).is_err());
    // A driver with nothing in it says nothing about the node.
    let empty: TrailblazeNodeSelector = serde_json::from_value(json!({"iosAxe": {}})).expect("reads");
    assert_eq!(empty.without_predicate(), Some(String::new()));
}

#[test]
fn driver_matches_are_whole_value_regexes() {
    let s = snap();
    assert_eq!(text("Header").resolve(&s).len(), 1);
    assert_eq!(text("Head").resolve(&s).len(), 0, "a partial match is no match");
    assert_eq!(text("Op.n").resolve(&s).len(), 2);
    assert_eq!(
        text("(").resolve(&s).len(),
        0,
        "an invalid regex falls back to equality"
    );
}

#[test]
fn relational_keys_and_index_narrow_the_matches() {
    let s = snap();
    let id = |r: &str| TrailblazeNodeSelector {
        android_accessibility: Some(AndroidAccessibilityMatch {
            resource_id_regex: Some(r.into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let in_second = TrailblazeNodeSelector {
        child_of: Some(Box::new(id(".*second"))),
        ..text("Open")
    };
    let found = in_second.resolve(&s);
    assert_eq!(found.len(), 1);
    assert_eq!(
        s.nodes[s.nodes[found[0]].parent.unwrap()].resource_id.as_deref(),
        Some("app:id/second")
    );
    let below_first = TrailblazeNodeSelector {
        below: Some(Box::new(id(".*first"))),
        ..text("Open")
    };
    assert_eq!(
        below_first.resolve(&s),
        found,
        "the second row's label is below the first row"
    );
    let second_by_index = TrailblazeNodeSelector {
        index: Some(1),
        ..text("Open")
    };
    assert_eq!(second_by_index.resolve(&s), found);
    let containing = TrailblazeNodeSelector {
        contains_child: Some(Box::new(text("Open"))),
        ..Default::default()
    };
    assert_eq!(containing.resolve(&s).len(), 2);
}

#[test]
fn every_generated_selector_resolves_to_exactly_its_node() {
    let s = snap();
    for i in 0..s.nodes.len() {
        match TrailblazeNodeSelector::for_node(&s, i) {
            Some(sel) => assert_eq!(sel.resolve(&s), [i], "node {i}: {sel:?}"),
            // Only the bare root container has nothing to tell it apart.
            None => assert_eq!(i, 0),
        }
    }
    // The duplicate label is disambiguated relationally, not by index.
    let second_label = s.nodes.iter().rposition(|n| n.text.as_deref() == Some("Open")).unwrap();
    let sel = TrailblazeNodeSelector::for_node(&s, second_label).unwrap();
    assert!(sel.child_of.is_some() && sel.index.is_none(), "{sel:?}");
}

#[test]
fn the_demo_app_gets_unique_selectors_on_every_screen() {
    use crate::device::Device;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps/demo/app.yaml");
    let mut sim = crate::device::sim::SimDevice::from_app_file(&path).expect("demo app");
    let s = Snapshot::from_tree(sim.snapshot().expect("snapshot"));
    let with_id = (0..s.nodes.len()).filter(|&i| s.nodes[i].resource_id.is_some());
    for i in with_id {
        let sel = TrailblazeNodeSelector::for_node(&s, i).expect("a node with an id has a selector");
        assert_eq!(sel.resolve(&s), [i]);
    }
}

#[test]
fn a_selector_part_without_a_predicate_is_named_by_its_path() {
    let sel = |v: serde_json::Value| -> TrailblazeNodeSelector { serde_json::from_value(v).expect("a selector") };
    for (v, path) in [
        (serde_json::json!({}), ""),
        (serde_json::json!({ "androidAccessibility": {} }), ""),
        (serde_json::json!({ "index": 0 }), ""),
        (
            serde_json::json!({ "androidAccessibility": { "textRegex": "x" }, "below": {} }),
            ".below",
        ),
        (
            serde_json::json!({ "containsDescendants": [{ "web": { "cssSelector": "a" } }, { "index": 1 }] }),
            ".containsDescendants[1]",
        ),
    ] {
        assert_eq!(sel(v.clone()).without_predicate().as_deref(), Some(path), "{v}");
    }
    // Positive controls: a property, or a relation whose parts all say something.
    for v in [
        serde_json::json!({ "androidAccessibility": { "isEnabled": false } }),
        serde_json::json!({ "childOf": { "web": { "ariaRole": "list" } }, "index": 2 }),
    ] {
        assert_eq!(sel(v.clone()).without_predicate(), None, "{v}");
    }
}

/// A plain-text pattern, alone or after or before `.*`, is matched with no regex built: that must
/// be what its regex says, value by value (newlines included, which `.` does not match). Control:
/// any other pattern is still a regex.
#[test]
fn a_plain_pattern_matches_what_its_regex_matches() {
    use super::pattern::{Shape, whole_value};
    let values = [
        "Sign in",
        "sign in",
        "Sign in ",
        "Inbox",
        "Total: 5",
        "café",
        "",
        "Sign_in",
        "com.example:id/email",
        "x:id/email\n",
        "a\n:id/email",
        ":id/emailx",
        "Sign in\nnow",
        "go Sign in now",
    ];
    let patterns = [
        "Sign in",
        "Inbox",
        "Total: 5",
        "café",
        "a b",
        "Sign_in",
        "%@!'\"/,;<>=`",
        ".*:id/email",
        "Sign in.*",
        ".*Sign in.*",
        ".*",
        ".*.*",
        "line\nbreak.*",
        ".*line\nbreak",
    ];
    for p in patterns {
        assert!(Shape::of(p).is_some(), "{p}");
        let re = whole_value(p).expect("a valid regex");
        for v in values.iter().copied().chain([p]) {
            assert_eq!(text_matches(p, Some(v)), re.is_match(v), "{p:?} against {v:?}");
        }
        assert!(check_pattern(p).is_ok());
    }
    for p in [
        "Sign.in",
        "In(box)?",
        "a|b",
        "x+",
        r"\d",
        "[ab]",
        "a-b",
        ".*a.b",
        ".+x",
        ".*new\nline.*",
    ] {
        assert_eq!(Shape::of(p), None, "{p}");
    }
    assert!(text_matches("Sign.in", Some("Sign in")));
    assert!(text_matches("In(box)?", Some("In")));
    assert!(check_pattern("In(box").is_err());
    // `is_regex` (the lenient assertions' test) agrees with the `regex` crate, either way.
    for p in ["Sign in", "a.*b", "(?i)x", "In(box", "a)(b", "[a", r"\Q"] {
        assert_eq!(is_regex(p), regex::Regex::new(p).is_ok(), "{p}");
    }
}

/// A screen of iOS elements as the iOS device maps them: the label is the content description, the
/// value the text, the placeholder the hint, the identifier the resource id.
fn ios_screen() -> Snapshot {
    let el = |ty: &str, label: Option<&str>, top: i32, children: Vec<ViewNode>| ViewNode {
        class_name: format!("XCUIElementType{ty}"),
        content_description: label.map(Into::into),
        bounds: Bounds {
            left: 0,
            top,
            right: 400,
            bottom: top + 40,
        },
        enabled: true,
        children,
        ..ViewNode::default()
    };
    let mut search = el("SearchField", None, 100, vec![]);
    search.hint_text = Some("Search".into());
    search.editable = true;
    let mut add = el("Button", Some("Add"), 50, vec![]);
    add.resource_id = Some("AddButton".into());
    let row = el(
        "Cell",
        Some("John Appleseed"),
        200,
        vec![el("StaticText", Some("John Appleseed"), 205, vec![])],
    );
    let mut scroll = el("Other", Some("Vertical scroll bar, 2 pages"), 300, vec![]);
    scroll.text = Some("0%".into());
    let mut switch = el("Switch", Some("Dark mode"), 400, vec![]);
    switch.text = Some("Dark mode".into());
    switch.checked = Some(true);
    Snapshot::from_tree(ViewTree {
        app_id: Some("com.apple.MobileAddressBook".into()),
        width: 402,
        height: 874,
        root: el(
            "Application",
            Some("Contacts"),
            0,
            vec![add, search, row, scroll, switch],
        ),
    })
}

#[test]
fn ios_maestro_matches_ios_elements_as_the_original_reads_them() {
    use serde_json::json;
    let s = ios_screen();
    let count = |v: serde_json::Value| -> usize {
        let sel: TrailblazeNodeSelector = serde_json::from_value(v).expect("the grammar reads it");
        sel.resolve(&s).len()
    };
    // `textRegex` reads the value, else the placeholder, else the label.
    assert_eq!(count(json!({"iosMaestro": {"textRegex": "John Appleseed"}})), 2);
    assert_eq!(count(json!({"iosMaestro": {"textRegex": "Search"}})), 1);
    assert_eq!(count(json!({"iosMaestro": {"textRegex": "0%"}})), 1);
    assert_eq!(
        count(json!({"iosMaestro": {"textRegex": "Vertical.*"}})),
        0,
        "a value hides the label"
    );
    // Maestro's dialect: case ignored, the whole value, an invalid regex is its own text.
    assert_eq!(count(json!({"iosMaestro": {"accessibilityTextRegex": "add"}})), 1);
    assert_eq!(count(json!({"iosMaestro": {"accessibilityTextRegex": "Ad"}})), 0);
    assert_eq!(count(json!({"iosMaestro": {"accessibilityTextRegex": "john.*"}})), 2);
    assert_eq!(count(json!({"iosMaestro": {"resourceIdRegex": "AddButton"}})), 1);
    assert_eq!(
        count(json!({"iosMaestro": {"classNameRegex": "XCUIElementTypeCell"}})),
        1
    );
    assert_eq!(
        count(json!({"iosMaestro": {"hintTextRegex": "Search", "focused": false}})),
        1
    );
    assert_eq!(
        count(json!({"iosMaestro": {"hintTextRegex": "Search", "focused": true}})),
        0
    );
    // A property the node lacks matches no pattern.
    assert_eq!(count(json!({"iosMaestro": {"resourceIdRegex": ".*"}})), 1);
    // `index` picks among the matches top to bottom, and relations hold as on Android.
    let second: TrailblazeNodeSelector =
        serde_json::from_value(json!({"iosMaestro": {"textRegex": "John Appleseed"}, "index": 1})).expect("reads");
    let hit = second.resolve(&s);
    assert_eq!(hit.len(), 1);
    assert_eq!(s.nodes[hit[0]].class_name, "XCUIElementTypeStaticText");
    assert_eq!(
        count(
            json!({"iosMaestro": {"textRegex": "John Appleseed"}, "childOf": {"iosMaestro": {"classNameRegex": "XCUIElementTypeCell"}}})
        ),
        1
    );
    // Control: an Android screen's nodes never match `iosMaestro`, whatever they say.
    assert_eq!(
        TrailblazeNodeSelector {
            ios_maestro: Some(IosMaestroMatch {
                text_regex: Some("Header".into()),
                ..Default::default()
            }),
            ..Default::default()
        }
        .resolve(&snap())
        .len(),
        0
    );
    assert_eq!(
        text("Header").resolve(&snap()).len(),
        1,
        "the same text as an Android match"
    );
}

#[test]
fn an_ios_node_is_recorded_as_an_ios_maestro_selector_that_finds_only_it() {
    let s = ios_screen();
    for i in 0..s.nodes.len() {
        let Some(sel) = TrailblazeNodeSelector::for_node(&s, i) else {
            continue;
        };
        assert!(
            sel.android_accessibility.is_none() && sel.ios_maestro.is_some(),
            "{sel:?}"
        );
        assert_eq!(sel.resolve(&s), vec![i], "{sel:?}");
    }
    let add = s
        .nodes
        .iter()
        .position(|n| n.resource_id.as_deref() == Some("AddButton"))
        .unwrap();
    let sel = TrailblazeNodeSelector::for_node(&s, add).unwrap();
    assert!(
        sel.ios_maestro
            .is_some_and(|m| m.resource_id_regex.is_some() || m.accessibility_text_regex.is_some())
    );
    // Control: an Android node keeps its Android form.
    let a = snap();
    let sel = TrailblazeNodeSelector::for_node(&a, 1).unwrap();
    assert!(sel.android_accessibility.is_some() && sel.ios_maestro.is_none());
}

#[test]
fn android_maestro_reads_as_maestro_did_and_android_accessibility_stays_strict() {
    use serde_json::json;
    let mut labelled = node("android.widget.ImageButton", None, Some("app:id/add"), 600, vec![]);
    labelled.content_description = Some("Add alarm".into());
    let mut root = node("android.widget.FrameLayout", None, None, 0, vec![]);
    root.children = vec![
        node("android.widget.TextView", Some("ALARM"), None, 100, vec![]),
        labelled,
    ];
    let s = Snapshot::from_tree(ViewTree {
        app_id: Some("app".into()),
        width: 1000,
        height: 2000,
        root,
    });
    let count = |v: serde_json::Value| -> usize {
        let sel: TrailblazeNodeSelector = serde_json::from_value(v).expect("reads");
        sel.resolve(&s).len()
    };
    // Case ignored; the text falls back to the accessibility text; a missing property never matches.
    assert_eq!(count(json!({"androidMaestro": {"textRegex": "alarm"}})), 1);
    assert_eq!(count(json!({"androidMaestro": {"textRegex": "add alarm"}})), 1);
    assert_eq!(
        count(json!({"androidMaestro": {"accessibilityTextRegex": ".*", "textRegex": "Add.*"}})),
        1
    );
    assert_eq!(count(json!({"androidMaestro": {"hintTextRegex": ".*"}})), 0);
    // Control: the accessibility driver's patterns stay case-sensitive and read the text alone.
    assert_eq!(count(json!({"androidAccessibility": {"textRegex": "alarm"}})), 0);
    assert_eq!(count(json!({"androidAccessibility": {"textRegex": "Add alarm"}})), 0);
    assert_eq!(count(json!({"androidAccessibility": {"textRegex": "ALARM"}})), 1);
}
