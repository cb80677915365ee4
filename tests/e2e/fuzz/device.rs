//! What a device sends, mutated: `uiautomator dump` XML (the adb device) and the JSON view tree (the
//! C/Java embedder's device): depth, width, sizes, attributes, entities, encodings. Every input is
//! parsed; every tree that parses is shown as a session's snapshot (refs, rendering, the snapshot's
//! limits) and its first ref tapped, on a device that serves it. The answer is a value or an error,
//! never a panic (a session job that panicked reads `panicked`: a finding), an abort or a hang.

use std::sync::{Arc, Mutex};

use serde_json::json;
use trailblaze::device::{Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewTree};
use trailblaze::{CallError, Session, SessionOptions, Settings};
use trailblaze_e2e::Fixture;

/// Serves whatever tree it was last given.
struct Served(Arc<Mutex<Option<ViewTree>>>);

impl Device for Served {
    fn name(&self) -> String {
        "fuzzed".into()
    }
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        let tree = self.0.lock().map_err(|_| DeviceError::Action("lock".into()))?.clone();
        tree.ok_or_else(|| DeviceError::Action("no tree".into()))
    }
    fn captures(&self) -> u64 {
        0
    }
    fn tap(&mut self, _: i32, _: i32) -> Result<(), DeviceError> {
        Ok(())
    }
    fn long_press(&mut self, _: i32, _: i32) -> Result<(), DeviceError> {
        Ok(())
    }
    fn input_text(&mut self, _: &str) -> Result<(), DeviceError> {
        Ok(())
    }
    fn press_key(&mut self, _: KeyCode) -> Result<(), DeviceError> {
        Ok(())
    }
    fn launch_app(&mut self, _: &str, _: LaunchMode) -> Result<(), DeviceError> {
        Ok(())
    }
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        Err(DeviceError::Action("no pictures".into()))
    }
}

/// A session on a [`Served`] device, and the tree it serves.
struct Shown {
    _f: Fixture,
    session: Session,
    tree: Arc<Mutex<Option<ViewTree>>>,
    shown: usize,
}

impl Shown {
    fn new() -> Shown {
        let f = Fixture::new("t");
        let tree = Arc::new(Mutex::new(None));
        let session = f
            .project()
            .open_session(
                "t",
                SessionOptions {
                    device: Some(Box::new(Served(tree.clone()))),
                    settings: Settings::default(),
                    ..SessionOptions::default()
                },
            )
            .expect("session");
        Shown {
            _f: f,
            session,
            tree,
            shown: 0,
        }
    }

    /// Shows every 8th tree: a snapshot, then a tap on its first ref. Panics on a finding.
    fn show(&mut self, tree: ViewTree) {
        self.shown += 1;
        if self.shown % 8 != 1 {
            return;
        }
        if let Ok(mut t) = self.tree.lock() {
            *t = Some(tree);
        }
        let snap = self.session.call("snapshot", json!({}));
        finding(&snap);
        let first_ref = snap.ok().and_then(|v| {
            let text = v["text"].as_str()?.to_string();
            let start = text.find('[')? + 1;
            let end = start + text[start..].find(']')?;
            Some(text[start..end].to_string())
        });
        if let Some(r) = first_ref {
            finding(&self.session.call("tap", json!({ "ref": r })));
        }
    }
}

fn finding(r: &Result<serde_json::Value, CallError>) {
    if let Err(e @ CallError::Panicked { .. }) = r {
        panic!("a device's input made the session panic: {e}");
    }
}

/// The demo app's screens as the sim serves them.
fn seed_trees() -> Vec<ViewTree> {
    let f = Fixture::demo();
    let (_p, s) = f.session(Settings::default());
    let mut trees = vec![trailblaze_e2e::device_tree(&s)];
    let _ = s.call(
        "inputText",
        json!({ "text": "jane@example.com", "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } }),
    );
    trees.push(trailblaze_e2e::device_tree(&s));
    trees
}

#[test]
fn uiautomator_xml_from_a_device_answers_every_input() {
    let seeds: Vec<String> = seed_trees()
        .iter()
        .flat_map(|t| {
            [
                trailblaze_e2e::fake_adb::xml::render(t, true),
                trailblaze_e2e::fake_adb::xml::render(t, false),
            ]
        })
        .collect();
    let tokens = [
        "<node class=\"a\" bounds=\"[0,0][10,10]\">",
        "</node>",
        "<node/>",
        "<node text=\"",
        "\" ",
        " bounds=\"[-2147483648,-2147483648][2147483647,2147483647]\"",
        " bounds=\"[9,9][1,1]\"",
        " bounds=\"[0,0]\"",
        " text=\"&#x0;&#1114111;&#xD800;&amp;&lt;&quot;\"",
        " checked=\"true\" enabled=\"false\" password=\"true\"",
        " resource-id=\"com.x:id/",
        "<!DOCTYPE h [<!ENTITY e \"x\">]>",
        "&e;",
        "<![CDATA[x]]>",
        "<?xml version='1.0' encoding='UTF-16'?>",
        "\u{feff}",
        "\u{202e}",
        "\u{0}",
        "é",
        "<hierarchy rotation=\"1\">",
        "</hierarchy>",
        "\"",
        "'",
        "<",
        ">",
    ];
    let mut shown = Shown::new();
    super::fuzz("uiautomator xml", 0x0DD5_EED5_0F0F_A11D, &seeds, &tokens, |xml| {
        match trailblaze::android::wire::parse_dump(xml) {
            Ok(tree) => {
                shown.show(tree);
                true
            }
            Err(_) => false,
        }
    });
}

#[test]
fn a_json_view_tree_from_an_embedder_answers_every_input() {
    let seeds: Vec<String> = seed_trees()
        .iter()
        .map(|t| serde_json::to_string(t).expect("a tree serializes"))
        .collect();
    let tokens = [
        "{\"className\":\"a\",\"children\":[",
        "]}",
        "{\"children\":[{\"children\":[{\"children\":[",
        "\"bounds\":{\"left\":-2147483648,\"top\":0,\"right\":2147483647,\"bottom\":1},",
        "\"text\":\"\\ud800\\u0000\\u202e\",",
        "\"width\":-1,",
        "\"height\":99999999999,",
        "1e999",
        "-0",
        "null",
        "true",
        "[]",
        "{}",
        ",",
        ":",
        "\"",
        "\\",
        "é",
        "\u{0}",
    ];
    let mut shown = Shown::new();
    super::fuzz("json view tree", 0x5EED_1A50_7EE5_0001, &seeds, &tokens, |text| {
        match trailblaze::device::limits::tree_from_json(text.as_bytes()) {
            Ok(tree) => {
                shown.show(tree);
                true
            }
            Err(_) => false,
        }
    });
}
