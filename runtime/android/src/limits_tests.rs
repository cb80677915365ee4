//! The limits on every path a view tree comes in by, through the `uiautomator dump` reader.

use trailblaze_core::device::ViewNode;
use trailblaze_core::device::limits::*;
use crate::parse_dump;

fn node(class: &str) -> ViewNode {
    ViewNode {
        class_name: class.into(),
        ..ViewNode::default()
    }
}

/// `<hierarchy>` holding `depth` nested `<node>`s.
fn deep_xml(depth: usize) -> String {
    let open = r#"<node class="android.view.View" bounds="[0,0][10,10]">"#;
    format!(
        "<?xml version='1.0'?><hierarchy rotation=\"0\">{}{}</hierarchy>",
        open.repeat(depth),
        "</node>".repeat(depth)
    )
}

fn deep_json(depth: usize) -> String {
    let open = r#"{"className":"V","bounds":{"left":0,"top":0,"right":10,"bottom":10},"enabled":true,"clickable":false,"editable":false,"focused":false,"checked":null,"password":false,"children":["#;
    let leaf = r#"{"className":"V","bounds":{"left":0,"top":0,"right":10,"bottom":10},"enabled":true,"clickable":false,"editable":false,"focused":false,"checked":null,"password":false}"#;
    format!(
        r#"{{"appId":"a.b","width":10,"height":10,"root":{}{leaf}{}}}"#,
        open.repeat(depth),
        "]}".repeat(depth)
    )
}

#[test]
fn a_dump_nested_past_the_limit_is_refused_while_parsing_on_every_path() {
    // Far deeper than any stack could recurse: each reader must stop before descending.
    for depth in [MAX_DEPTH + 1, 100_000] {
        let e = parse_dump(&deep_xml(depth)).expect_err("too deep");
        assert!(e.contains("nests deeper than 256"), "{e}");
        let e = tree_from_json(deep_json(depth).as_bytes()).expect_err("too deep");
        assert!(e.contains("nests deeper than 256"), "{e}");
    }
    // Control: the deepest tree allowed reads on both paths (the XML root is the first node).
    let xml = parse_dump(&deep_xml(MAX_DEPTH + 1 - 1)).expect("at the limit");
    let json = tree_from_json(deep_json(MAX_DEPTH).as_bytes()).expect("at the limit");
    for tree in [xml, json] {
        check_tree(&tree).expect("within the limits");
        let mut depth = 0;
        let mut n = &tree.root;
        while let Some(c) = n.children.first() {
            depth += 1;
            n = c;
        }
        assert!(depth >= MAX_DEPTH - 1, "{depth}");
    }
}

#[test]
fn a_dump_wider_than_the_node_cap_is_refused() {
    let leaf = r#"<node class="V" bounds="[0,0][1,1]"/>"#;
    let xml = format!(
        "<hierarchy><node class=\"F\" bounds=\"[0,0][10,10]\">{}</node></hierarchy>",
        leaf.repeat(MAX_NODES + 1)
    );
    let e = parse_dump(&xml).expect_err("too many nodes");
    assert!(e.contains(&format!("more than {MAX_NODES} nodes")), "{e}");
    let leaf = r#"{"className":"V","bounds":{"left":0,"top":0,"right":1,"bottom":1},"enabled":true,"clickable":false,"editable":false,"focused":false,"checked":null,"password":false}"#;
    let items = vec![leaf; MAX_NODES + 1].join(",");
    let json = format!(
        r#"{{"width":10,"height":10,"root":{{"className":"F","bounds":{{"left":0,"top":0,"right":10,"bottom":10}},"children":[{items}]}}}}"#
    );
    let e = tree_from_json(json.as_bytes()).expect_err("too many nodes");
    assert!(e.contains(&format!("more than {MAX_NODES} nodes")), "{e}");
    // Control: a wide screen under the cap reads.
    let xml = format!(
        "<hierarchy><node class=\"F\" bounds=\"[0,0][10,10]\">{}</node></hierarchy>",
        leaf_xml().repeat(1000)
    );
    assert_eq!(parse_dump(&xml).expect("reads").root.children.len(), 1000);
}

fn leaf_xml() -> &'static str {
    r#"<node class="V" bounds="[0,0][1,1]"/>"#
}

#[test]
fn coordinates_past_the_range_are_refused_with_the_node_position() {
    let near_max = format!(
        "<hierarchy><node class=\"F\" bounds=\"[0,0][1080,2400]\"><node class=\"B\" bounds=\"[{m},{m}][{m},{m}]\"/></node></hierarchy>",
        m = i32::MAX - 1
    );
    let e = parse_dump(&near_max).expect_err("out of range");
    assert!(
        e.contains("uiautomator dump:1:") && e.contains("beyond ±1000000"),
        "{e}"
    );
    let json = format!(
        r#"{{"width":1080,"height":2400,"root":{{"className":"F","bounds":{{"left":{m},"top":0,"right":{m},"bottom":5}}}}}}"#,
        m = i32::MAX
    );
    assert!(
        tree_from_json(json.as_bytes())
            .expect_err("out of range")
            .contains("beyond")
    );
    // A tree a device built itself is checked the same way, screen size included.
    let mut tree = parse_dump(
        "<hierarchy><node class=\"F\" bounds=\"[0,0][1080,2400]\"><node class=\"B\" bounds=\"[-20,5][30,60]\"/></node></hierarchy>",
    )
    .expect("negative but in range is fine (a node scrolled half out)");
    check_tree(&tree).expect("in range");
    tree.root.children[0].bounds.right = i32::MAX;
    assert_eq!(check_tree(&tree), Err(TreeError::OutOfRange(MAX_COORD)));
    tree.root.children[0].bounds.right = 30;
    tree.height = -1;
    assert_eq!(check_tree(&tree), Err(TreeError::OutOfRange(MAX_COORD)));
}

#[test]
fn a_json_tree_skips_unknown_keys_but_not_past_the_depth_limit() {
    let ok = r#"{"width":5,"height":5,"root":{"className":"F","bounds":{"left":0,"top":0,"right":5,"bottom":5},"extra":{"a":[1,{"b":null}]}}}"#;
    assert_eq!(tree_from_json(ok.as_bytes()).expect("reads").root.class_name, "F");
    let junk = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep = format!(
        r#"{{"width":5,"height":5,"root":{{"className":"F","bounds":{{"left":0,"top":0,"right":5,"bottom":5}},"extra":{junk}}}}}"#
    );
    let e = tree_from_json(deep.as_bytes()).expect_err("too deep");
    assert!(e.contains("deeper than"), "{e}");
}

#[test]
fn the_builder_is_balanced_and_bounded() {
    let mut b = TreeBuilder::with_limits(TreeLimits {
        max_depth: 2,
        max_nodes: 4,
        max_coord: 100,
    });
    b.open(node("a")).expect("root");
    b.open(node("b")).expect("depth 1");
    b.open(node("c")).expect("depth 2");
    assert_eq!(b.open(node("d")), Err(TreeError::TooDeep(2)));
    b.close().expect("c");
    b.leaf(node("e")).expect("4th node");
    assert_eq!(b.leaf(node("f")), Err(TreeError::TooManyNodes(4)));
    b.close().expect("b");
    b.close().expect("a");
    assert_eq!(b.close(), Err(TreeError::Unbalanced));
    let root = b.finish().expect("whole");
    assert_eq!(root.children[0].children.len(), 2);
    let mut far = node("x");
    far.bounds.left = 101;
    assert_eq!(
        TreeBuilder::new().leaf(far.clone()),
        Ok(()),
        "the default range is wider"
    );
    let mut b = TreeBuilder::with_limits(TreeLimits {
        max_coord: 100,
        ..TreeLimits::DEFAULT
    });
    assert_eq!(b.leaf(far), Err(TreeError::OutOfRange(100)));
    assert_eq!(TreeBuilder::new().finish(), Err(TreeError::Empty));
}
