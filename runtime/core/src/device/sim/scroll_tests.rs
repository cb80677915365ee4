//! Scroll containers on the simulated device: a swipe inside one moves its content within its ends,
//! what is scrolled out leaves the tree, taps land where the rows are shown, and apps without one
//! behave as before.

use super::*;
use crate::device::{Bounds, ViewNode};

fn app(rows: usize, extra: &str) -> String {
    let items: String = (1..=rows)
        .map(|i| {
            format!(
                "          - {{ id: r{i}, class: android.widget.TextView, text: \"Row {i}\", tap: {{ goto: end }} }}\n"
            )
        })
        .collect();
    format!(
        "id: com.example.s\nstart: list\nscreens:\n  list:\n    nodes:\n      - id: box\n        scrollable: true{extra}\n        children:\n{items}  end:\n    nodes:\n      - {{ text: End }}\n"
    )
}

fn load(yaml: &str) -> SimDevice {
    SimDevice::from_app_yaml(yaml, Path::new("app.yaml")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

fn row(dev: &mut SimDevice, text: &str) -> Option<Bounds> {
    fn find(n: &ViewNode, text: &str) -> Option<Bounds> {
        if n.text.as_deref() == Some(text) {
            return Some(n.bounds);
        }
        n.children.iter().find_map(|c| find(c, text))
    }
    find(&dev.snapshot().ok()?.root, text)
}

#[test]
fn a_swipe_in_the_container_moves_its_content_within_its_ends() {
    let mut d = load(&app(40, ""));
    let first = row(&mut d, "Row 1").expect("the first row is shown");
    assert!(
        row(&mut d, "Row 40").is_none(),
        "the last row is below the screen: not in the tree"
    );
    d.swipe((540, 1500), (540, 1000), 400).expect("swipes");
    let moved = row(&mut d, "Row 5").expect("row 5 still shown");
    assert_eq!(
        moved.top,
        first.top + 4 * 144 - 500,
        "moved up by the finger's 500 pixels"
    );
    for _ in 0..20 {
        d.swipe((540, 2000), (540, 200), 400).expect("swipes");
    }
    let last = row(&mut d, "Row 40").expect("the end of the list is shown");
    assert!(last.bottom <= SCREEN_HEIGHT, "{last:?}");
    assert!(row(&mut d, "Row 1").is_none());
    // A tap lands on the row shown there.
    let (x, y) = last.center();
    d.tap(x, y).expect("tap");
    assert_eq!(d.current_screen(), Some("end"));
    // Down again, past the top: it stops at the top.
    d.press_key(KeyCode::Back).expect("back");
    for _ in 0..20 {
        d.swipe((540, 500), (540, 2300), 400).expect("swipes");
    }
    assert_eq!(row(&mut d, "Row 1"), Some(first));
}

#[test]
fn a_row_partly_in_view_is_cut_to_the_container_and_the_container_says_it_scrolls() {
    let mut d = load(&app(40, ""));
    let tree = d.snapshot().expect("tree");
    let container = &tree.root.children[0];
    assert!(container.scrollable, "longer than its view: uiautomator's scrollable");
    let view = container.bounds;
    assert_eq!(view.bottom, SCREEN_HEIGHT - 32, "it ends at the bottom margin");
    d.swipe((540, 1500), (540, 1440), 400).expect("a short swipe");
    let tree = d.snapshot().expect("tree");
    let shown = &tree.root.children[0].children;
    assert!(
        shown
            .iter()
            .all(|n| n.bounds.top >= view.top && n.bounds.bottom <= view.bottom)
    );
    assert!(
        shown.first().is_some_and(|n| n.bounds.bottom - n.bounds.top < 128),
        "the top row is cut"
    );
}

#[test]
fn content_that_fits_does_not_scroll_and_a_swipe_elsewhere_changes_nothing() {
    let mut d = load(&app(3, ""));
    let before = d.snapshot().expect("tree");
    assert!(!before.root.children[0].scrollable, "it fits: not scrollable");
    d.swipe((540, 300), (540, 100), 400).expect("swipes");
    assert_eq!(d.snapshot().expect("tree"), before);
    // Control: the long list does move under the same swipe.
    let mut long = load(&app(40, ""));
    let before = long.snapshot().expect("tree");
    long.swipe((540, 300), (540, 100), 400).expect("swipes");
    assert_ne!(long.snapshot().expect("tree"), before);
}

#[test]
fn scrollable_is_a_container_only_and_does_not_nest() {
    let err = |yaml: &str| match SimDevice::from_app_yaml(yaml, Path::new("app.yaml")) {
        Ok(_) => panic!("loaded: {yaml}"),
        Err(e) => e.to_string(),
    };
    let e = err(&app(2, "\n        tap: { goto: end }"));
    assert!(
        e.contains("screens.list.nodes[0].scrollable") && e.contains("container"),
        "{e}"
    );
    let nested = "id: a.b\nstart: s\nscreens:\n  s:\n    nodes:\n      - scrollable: true\n        children:\n          - { scrollable: true, children: [ { text: x } ] }\n";
    let e = err(nested);
    assert!(
        e.contains("children[0].scrollable") && e.contains("inside another"),
        "{e}"
    );
}
