//! The page source mapping on a realistic source, and the limits on hostile ones.

use trailblaze_core::device::limits::check_tree;
use trailblaze_core::device::{Bounds, ViewNode, ViewTree};

use crate::source::parse_source;

/// A Contacts-like screen as WDA writes it (indented, every attribute WDA gives).
const CONTACTS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<AppiumAUT>
  <XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Contacts" label="Contacts" enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852" index="0">
    <XCUIElementTypeWindow type="XCUIElementTypeWindow" enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852" index="0">
      <XCUIElementTypeNavigationBar type="XCUIElementTypeNavigationBar" name="Contacts" enabled="true" visible="true" accessible="false" x="0" y="59" width="393" height="96" index="0">
        <XCUIElementTypeButton type="XCUIElementTypeButton" name="Lists" label="Lists" enabled="true" visible="true" accessible="true" x="8" y="59" width="61.33" height="44" index="0"/>
        <XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Contacts" name="Contacts" label="Contacts" enabled="true" visible="true" accessible="true" x="16" y="103" width="140.5" height="41" index="1"/>
        <XCUIElementTypeButton type="XCUIElementTypeButton" name="add-contact" label="Add" enabled="false" visible="true" accessible="true" x="341" y="59" width="44" height="44" index="2"/>
      </XCUIElementTypeNavigationBar>
      <XCUIElementTypeSearchField type="XCUIElementTypeSearchField" value="Search" name="Search" label="Search" placeholderValue="Search" enabled="true" visible="true" accessible="true" x="16" y="155" width="361" height="36" index="1"/>
      <XCUIElementTypeTable type="XCUIElementTypeTable" enabled="true" visible="true" accessible="false" x="0" y="199" width="393" height="600" index="2">
        <XCUIElementTypeCell type="XCUIElementTypeCell" name="contact-0" enabled="true" visible="true" accessible="false" x="0" y="199" width="393" height="44" index="0" selected="false">
          <XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="John Appleseed" name="John Appleseed" label="John Appleseed" enabled="true" visible="true" accessible="true" x="20" y="210" width="150" height="22" index="0"/>
        </XCUIElementTypeCell>
        <XCUIElementTypeCell type="XCUIElementTypeCell" enabled="true" visible="true" accessible="false" x="0" y="243" width="393" height="44" index="1" selected="true">
          <XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Kate Bell" name="Kate Bell" label="Kate Bell" enabled="true" visible="true" accessible="true" x="20" y="254" width="90" height="22" index="0"/>
        </XCUIElementTypeCell>
        <XCUIElementTypeOther type="XCUIElementTypeOther" name="section-header" enabled="true" visible="false" accessible="false" x="0" y="287" width="393" height="28" index="2">
          <XCUIElementTypeOther type="XCUIElementTypeOther" enabled="true" visible="false" accessible="false" x="0" y="287" width="393" height="28" index="0">
            <XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="B" name="B" label="B" enabled="true" visible="true" accessible="true" x="16" y="290" width="12" height="22" index="0"/>
          </XCUIElementTypeOther>
        </XCUIElementTypeOther>
        <XCUIElementTypeImage type="XCUIElementTypeImage" name="divider" enabled="true" visible="true" accessible="false" x="0" y="315" width="393" height="0" index="3"/>
        <XCUIElementTypeOther type="XCUIElementTypeOther" enabled="true" visible="true" accessible="false" x="0" y="320" width="0" height="0" index="4">
          <XCUIElementTypeImage type="XCUIElementTypeImage" name="avatar-kate" label="Kate's photo" enabled="true" visible="true" accessible="true" x="330" y="320" width="40" height="40" index="0"/>
          <XCUIElementTypeImage type="XCUIElementTypeImage" name="chevron" enabled="true" visible="true" accessible="false" x="375" y="330" width="8" height="13" index="1"/>
        </XCUIElementTypeOther>
      </XCUIElementTypeTable>
      <XCUIElementTypeSecureTextField type="XCUIElementTypeSecureTextField" value="••••••••" name="passcode" label="Passcode" placeholderValue="Passcode" enabled="true" visible="true" accessible="true" x="16" y="800" width="361" height="20" index="3" focused="true"/>
      <XCUIElementTypeTextField type="XCUIElementTypeTextField" value="Ada" label="" placeholderValue="First name" enabled="true" visible="true" accessible="true" x="16" y="760" width="200" height="20" index="4"/>
      <XCUIElementTypeSwitch type="XCUIElementTypeSwitch" value="1" name="Favorites only" label="Favorites only" enabled="true" visible="true" accessible="true" x="320" y="820" width="51" height="31" index="5"/>
      <XCUIElementTypeSwitch type="XCUIElementTypeSwitch" value="0" name="Hide groups" label="Hide groups" enabled="true" visible="true" accessible="true" x="320" y="820" width="51" height="31" index="6"/>
    </XCUIElementTypeWindow>
  </XCUIElementTypeApplication>
</AppiumAUT>
"#;

fn contacts() -> ViewTree {
    parse_source(CONTACTS, 393, 852, Some("com.apple.MobileAddressBook".into())).expect("parses")
}

/// Every node, depth first, without recursion.
fn all(tree: &ViewTree) -> Vec<&ViewNode> {
    let mut out = Vec::new();
    let mut stack = vec![&tree.root];
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(n.children.iter().rev());
    }
    out
}

fn by_label<'a>(tree: &'a ViewTree, label: &str) -> &'a ViewNode {
    all(tree)
        .into_iter()
        .find(|n| n.content_description.as_deref() == Some(label))
        .unwrap_or_else(|| panic!("no node labelled {label}"))
}

fn kind(n: &ViewNode) -> &str {
    n.class_name.trim_start_matches("XCUIElementType")
}

#[test]
fn a_contacts_screen_maps_to_the_core_ios_convention() {
    let tree = contacts();
    assert_eq!(
        (tree.app_id.as_deref(), tree.width, tree.height),
        (Some("com.apple.MobileAddressBook"), 393, 852)
    );
    // The application is the root (no frame around one application).
    assert_eq!(tree.root.class_name, "XCUIElementTypeApplication");
    assert!(tree.root.is_ios());
    assert_eq!(
        tree.root.bounds,
        Bounds {
            left: 0,
            top: 0,
            right: 393,
            bottom: 852
        }
    );

    let lists = by_label(&tree, "Lists");
    assert_eq!(kind(lists), "Button");
    // The name equals the label: WDA's fallback, not an identifier. A button shows its label as text.
    assert_eq!(
        (lists.resource_id.as_deref(), lists.text.as_deref()),
        (None, Some("Lists"))
    );
    assert!(lists.clickable && lists.enabled && !lists.editable);
    // 8 + 61.33 rounds to 69.
    assert_eq!(
        lists.bounds,
        Bounds {
            left: 8,
            top: 59,
            right: 69,
            bottom: 103
        }
    );
    let add = by_label(&tree, "Add");
    assert_eq!(add.resource_id.as_deref(), Some("add-contact"));
    assert!(!add.enabled);

    let nav = all(&tree)
        .into_iter()
        .find(|n| kind(n) == "NavigationBar")
        .expect("a navigation bar");
    assert_eq!(
        (nav.resource_id.as_deref(), nav.content_description.as_deref()),
        (Some("Contacts"), None)
    );
    assert!(!nav.clickable);
    let title = &nav.children[1];
    assert_eq!((kind(title), title.text.as_deref()), ("StaticText", Some("Contacts")));
    assert!(!title.clickable);
    assert_eq!(title.bounds.right, 157);

    let search = by_label(&tree, "Search");
    // Its value is its placeholder: the field is empty.
    assert_eq!(
        (search.text.as_deref(), search.hint_text.as_deref()),
        (None, Some("Search"))
    );
    assert!(search.editable && search.clickable && !search.password);

    let table = all(&tree).into_iter().find(|n| kind(n) == "Table").expect("a table");
    assert!(table.scrollable && !table.clickable);
    let rows: Vec<(&str, Option<&str>)> = table
        .children
        .iter()
        .map(|c| (kind(c), c.content_description.as_deref().or(c.resource_id.as_deref())))
        .collect();
    // The hidden header and the zero-size wrapper are gone, their visible children kept in their
    // place; the zero-height divider is gone.
    assert_eq!(
        rows,
        [
            ("Cell", Some("contact-0")),
            ("Cell", None),
            ("StaticText", Some("B")),
            ("Image", Some("Kate's photo")),
            ("Image", Some("chevron")),
        ]
    );
    let (john, kate) = (&table.children[0], &table.children[1]);
    assert!(john.clickable && !john.selected && kate.selected);
    assert_eq!(john.children[0].text.as_deref(), Some("John Appleseed"));
    assert!(
        all(&tree)
            .iter()
            .all(|n| n.resource_id.as_deref() != Some("section-header"))
    );
    assert!(all(&tree).iter().all(|n| n.resource_id.as_deref() != Some("divider")));
    // An image is clickable when it has a label.
    assert!(table.children[3].clickable && !table.children[4].clickable);

    let passcode = by_label(&tree, "Passcode");
    assert!(passcode.password && passcode.editable && passcode.focused);
    assert_eq!(passcode.text.as_deref(), Some("••••••••"));
    assert_eq!(passcode.resource_id.as_deref(), Some("passcode"));
    let name = all(&tree)
        .into_iter()
        .find(|n| kind(n) == "TextField")
        .expect("a text field");
    assert_eq!(
        (name.text.as_deref(), name.hint_text.as_deref()),
        (Some("Ada"), Some("First name"))
    );
    assert_eq!(
        (name.content_description.as_deref(), name.resource_id.as_deref()),
        (None, None)
    );
    assert!(!name.password && !name.focused);

    assert_eq!(by_label(&tree, "Favorites only").checked, Some(true));
    // A switch's value is its state, not its text: it reads its label.
    assert_eq!(
        by_label(&tree, "Favorites only").text.as_deref(),
        Some("Favorites only")
    );
    assert_eq!(by_label(&tree, "Hide groups").checked, Some(false));
    assert!(by_label(&tree, "Hide groups").clickable);
    assert_eq!(lists.checked, None);
    check_tree(&tree).expect("within the limits");
}

#[test]
fn several_top_elements_share_a_frame_and_old_sources_need_no_wrapper() {
    let app = r#"<XCUIElementTypeApplication type="XCUIElementTypeApplication" visible="true" x="0" y="0" width="10" height="10"/>"#;
    let tree = parse_source(&format!("<AppiumAUT>{app}{app}</AppiumAUT>"), 10, 10, None).expect("two");
    assert_eq!((kind(&tree.root), tree.root.children.len()), ("Other", 2));
    let tree = parse_source(app, 10, 10, None).expect("no wrapper");
    assert_eq!(kind(&tree.root), "Application");
    // Nothing visible: an empty frame, not an error.
    let hidden = app.replace("visible=\"true\"", "visible=\"false\"");
    let tree = parse_source(&format!("<AppiumAUT>{hidden}</AppiumAUT>"), 10, 10, None).expect("hidden");
    assert!(tree.root.children.is_empty());
}

fn element(attrs: &str) -> String {
    // No `visible`: an element without one is shown.
    format!(r#"<XCUIElementTypeOther type="XCUIElementTypeOther" {attrs}/>"#)
}

fn source(inner: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" visible="true" x="0" y="0" width="393" height="852">{inner}</XCUIElementTypeApplication></AppiumAUT>"#
    )
}

fn refused(xml: &str) -> String {
    parse_source(xml, 393, 852, None).expect_err("refused")
}

#[test]
fn a_source_wider_than_the_node_cap_is_refused() {
    let leaf = element(r#"x="0" y="0" width="1" height="1""#);
    // Compact (the tree builder counts) and indented (the parser's own cap stops it first).
    for sep in ["", "\n    "] {
        let e = refused(&source(&vec![leaf.as_str(); 100_000].join(sep)));
        assert!(e.contains("more than 50000 nodes"), "{e}");
    }
    // Control: a long list within the cap.
    let tree = parse_source(&source(&leaf.repeat(10_000)), 393, 852, None).expect("within the cap");
    assert_eq!(tree.root.children.len(), 10_000);
}

#[test]
fn a_source_nested_past_the_limit_is_refused_before_parsing() {
    let open = r#"<XCUIElementTypeOther type="XCUIElementTypeOther" visible="true" x="0" y="0" width="1" height="1">"#;
    let nested = |depth: usize| {
        source(&format!(
            "{}{}",
            open.repeat(depth),
            "</XCUIElementTypeOther>".repeat(depth)
        ))
    };
    for depth in [300, 10_000, 100_000] {
        let e = refused(&nested(depth));
        assert!(e.contains("nests deeper than 256"), "{e}");
    }
    // Hidden elements make no nodes, but the parser would still recurse through them.
    let hidden = open.replace("visible=\"true\"", "visible=\"false\"");
    let e = refused(&source(&format!(
        "{}{}",
        hidden.repeat(10_000),
        "</XCUIElementTypeOther>".repeat(10_000)
    )));
    assert!(e.contains("nests deeper than 256"), "{e}");
    // Unclosed elements too.
    assert!(refused(&format!("<AppiumAUT>{}", open.repeat(10_000))).contains("deeper"));
    // Control: the deepest allowed tree reads (the application plus 255 below it).
    let tree = parse_source(&nested(255), 393, 852, None).expect("at the limit");
    check_tree(&tree).expect("within the limits");
    // One more is past the tree builder's limit (the parser's bound leaves it room).
    assert!(refused(&nested(256)).contains("nests deeper than 256"));
}

#[test]
fn numbers_out_of_range_or_not_numbers_are_refused() {
    for (attrs, says) in [
        (r#"x="1e300" y="0" width="1" height="1""#, "beyond ±1000000"),
        (r#"x="0" y="2000000" width="1" height="1""#, "beyond ±1000000"),
        (r#"x="999999" y="0" width="5" height="1""#, "beyond ±1000000"),
        (r#"x="0" y="0" width="1e9" height="1""#, "beyond ±1000000"),
        (r#"x="NaN" y="0" width="1" height="1""#, "not a finite number"),
        (r#"x="0" y="inf" width="1" height="1""#, "not a finite number"),
        (r#"x="0" y="0" width="-infinity" height="1""#, "not a finite number"),
        (r#"x="0" y="0" width="-5" height="10""#, "negative"),
        (r#"x="0" y="0" width="5" height="-0.5""#, "negative"),
        (r#"x="twelve" y="0" width="1" height="1""#, "not a number"),
        (r#"x="" y="0" width="1" height="1""#, "not a number"),
        // A hidden element's numbers are held to the same rules.
        (
            r#"visible="false" x="NaN" y="0" width="1" height="1""#,
            "not a finite number",
        ),
    ] {
        let e = refused(&source(&element(attrs)));
        assert!(e.contains(says) && e.starts_with("page source:1:"), "{attrs}: {e}");
    }
    // Controls: the far edge, fractions, negative positions (scrolled off) and missing numbers.
    for attrs in [
        r#"x="999999" y="-999999" width="1" height="1""#,
        r#"x="-20.25" y="0.5" width="10.5" height="0.75""#,
        r#"name="no-geometry""#,
    ] {
        parse_source(&source(&element(attrs)), 393, 852, None).unwrap_or_else(|e| panic!("{attrs}: {e}"));
    }
}

#[test]
fn garbage_is_refused_with_a_message() {
    let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><AppiumAUT>&lol2;</AppiumAUT>"#;
    for (xml, says) in [
        ("", "not XML"),
        ("not xml at all", "not XML"),
        ("{\"value\": 1}", "not XML"),
        ("<AppiumAUT>", "not XML"),
        ("<AppiumAUT><XCUIElementTypeButton></AppiumAUT>", "not XML"),
        ("<html><body>502</body></html>", "expected <AppiumAUT>"),
        ("<AppiumAUT></AppiumAUT>", "no element"),
        ("<AppiumAUT>\u{0}\u{1}</AppiumAUT>", "not XML"),
        (bomb, "not XML"),
    ] {
        let e = refused(xml);
        assert!(e.contains(says), "{xml:?}: {e}");
    }
}

#[test]
fn a_tab_selected_by_its_traits_reads_selected() {
    let tab = |traits: &str| {
        format!(
            r#"<XCUIElementTypeButton type="XCUIElementTypeButton" label="Favorites" x="0" y="800" width="80" height="40" traits="{traits}"/>"#
        )
    };
    for (traits, selected) in [
        ("Button, Selected", true),
        ("Button", false),
        ("Button, NotSelectedish", false),
    ] {
        let tree = parse_source(&source(&tab(traits)), 393, 852, None).expect("parses");
        assert_eq!(tree.root.children[0].selected, selected, "{traits}");
    }
}
