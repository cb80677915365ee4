//! The editor's JSON Schemas (`trailblaze dts`) against the gates, with a real validator (ajv, in
//! tests/schema-validator): every trail and declaration file of the project's trailmaps is valid
//! under its schema, and over a corpus of broken trails the schema and `check` (the parse gate and
//! the type gate) call the same files wrong, except the differences listed in `DIFFERENCES` (which
//! the test also holds to: a listed case that stops differing fails it, so the list stays true).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trailblaze_e2e::{Fixture, copy_dir, in_dir, repo_root, text};

/// Broken trails (and controls), each a whole file for trailmap `demo`.
const CORPUS: &[(&str, &str)] = &[
    (
        "ok-minimal",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - pressKey: { keyCode: BACK }\n",
    ),
    (
        "ok-single-call-form",
        "trail:\n  - step: Go\n    recording:\n      tools: { launchApp: { appId: com.example.demo } }\n",
    ),
    (
        "ok-empty-recording",
        "trail:\n  - step: Go\n    recording:\n      android: {}\n",
    ),
    (
        "ok-verify-and-retries",
        "trail:\n  - verify: Inbox\n    maxRetries: 2\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Inbox } } }\n",
    ),
    (
        "ok-args-template",
        "config:\n  args:\n    WHO: { type: string, default: ana }\ntrail:\n  - step: Type\n    recording:\n      tools:\n        - inputText: { text: \"{{args.WHO}}\" }\n",
    ),
    (
        "ok-quoted-number-as-text",
        "trail:\n  - step: Type\n    recording:\n      tools:\n        - inputText: { text: '12345678' }\n",
    ),
    (
        "ok-agent-step",
        "trail:\n  - step: Do it yourself\n    recordable: false\n",
    ),
    ("bad-top-key", "trails:\n  - step: Go\n"),
    ("bad-step-key", "trail:\n  - step: Go\n    recordin: {}\n"),
    ("bad-step-and-verify", "trail:\n  - step: Go\n    verify: Gone\n"),
    ("bad-neither-step-nor-verify", "trail:\n  - recording: {}\n"),
    ("bad-trailhead-verify", "trailhead:\n  verify: Start\ntrail: []\n"),
    ("bad-max-retries", "trail:\n  - step: Go\n    maxRetries: two\n"),
    (
        "bad-two-keys-in-a-call",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - pressKey: { keyCode: BACK }\n          launchApp: { appId: x }\n",
    ),
    (
        "bad-args-not-a-map",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - pressKey: BACK\n",
    ),
    (
        "bad-call-as-text",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - launchApp\n",
    ),
    ("bad-trail-not-a-list", "trail:\n  step: Go\n"),
    ("bad-empty-step-text", "trail:\n  - step:\n"),
    ("bad-config-key", "config:\n  tag: [smoke]\ntrail: []\n"),
    ("bad-tags-not-a-list", "config:\n  tags: { a: b }\ntrail: []\n"),
    ("bad-empty-skip", "config:\n  skip: \"\"\ntrail: []\n"),
    (
        "bad-recording-not-a-map",
        "trail:\n  - step: Go\n    recording: [pressKey]\n",
    ),
    (
        "bad-recording-key",
        "trail:\n  - step: Go\n    recording:\n      tool:\n        - pressKey: { keyCode: BACK }\n",
    ),
    (
        "bad-recordable-false-with-recording",
        "trail:\n  - step: Go\n    recordable: false\n    recording:\n      tools:\n        - pressKey: { keyCode: BACK }\n",
    ),
    (
        "bad-unknown-tool",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - tapOnTheMoon: {}\n",
    ),
    (
        "bad-wrong-arg-type",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - inputText: { text: 5 }\n",
    ),
    (
        "bad-missing-arg",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - inputText: {}\n",
    ),
    (
        "bad-enum-value",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - pressKey: { keyCode: NOPE }\n",
    ),
    (
        "bad-unknown-arg",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - launchApp: { appId: x, colour: red }\n",
    ),
    (
        "bad-regex",
        "trail:\n  - step: Go\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"(\" } } }\n",
    ),
];

/// Where the schema and the gates disagree, and why (docs/sdk.md lists the same).
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "bad-recording-key",
        "any device classifier is a recording key, so the schema takes any key; the gate refuses a near miss of a known one",
    ),
    (
        "bad-recordable-false-with-recording",
        "a rule across two keys of a step",
    ),
    ("bad-regex", "a regular expression's validity is not a JSON Schema rule"),
];

fn validator() -> PathBuf {
    repo_root().join("tests/schema-validator")
}

/// Runs ajv over `docs` (schema name, file, value); returns each file's verdict and first errors.
fn ajv(schemas: &BTreeMap<&str, PathBuf>, docs: &[(String, PathBuf, Value)]) -> BTreeMap<PathBuf, (bool, Value)> {
    use std::io::Write;
    let input = json!({
        "schemas": schemas,
        "docs": docs.iter().map(|(s, f, v)| json!({ "schema": s, "file": f, "value": v })).collect::<Vec<_>>(),
    });
    let mut child = std::process::Command::new("node")
        .arg(validator().join("validate.mjs"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write");
    let o = child.wait_with_output().expect("node ends");
    let (out, err) = text(&o);
    assert!(o.status.success(), "ajv: {err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    v.as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                PathBuf::from(r["file"].as_str().unwrap_or_default()),
                (r["valid"] == json!(true), r["errors"].clone()),
            )
        })
        .collect()
}

/// The file as the parse gate's YAML reader reads it (quote styles kept: `'123'` is text).
fn yaml_value(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).expect("read");
    trailblaze::gates::parse_yaml(&text, file).expect("yaml").value
}

fn files(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, suffix, out);
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
}

#[test]
fn the_schemas_take_every_project_file_and_agree_with_the_gates_on_broken_trails() {
    assert!(
        validator().join("node_modules/ajv").is_dir(),
        "needs `npm ci --prefix tests/schema-validator` (test.sh runs it)"
    );
    let f = Fixture::demo();
    copy_dir(&repo_root().join("trailmaps/web-demo"), &f.root().join("web-demo"));
    for id in ["demo", "web-demo"] {
        let o = in_dir(&f, f.dir.path(), &["dts", "--trailmap", id]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
    // The editor's binding: every schema of both trailmaps, by pattern.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.path().join(".vscode/settings.json")).expect("settings"))
            .expect("json");
    let bound = settings["yaml.schemas"].as_object().expect("yaml.schemas");
    assert_eq!(bound.len(), 12, "{settings}");
    assert_eq!(
        bound["trailmaps/demo/.trailblaze/schemas/trail.schema.json"][0],
        json!("trailmaps/demo/trails/**/*.trail.yaml")
    );
    let schema_dir = |id: &str| f.root().join(id).join(".trailblaze/schemas");
    let mut schemas: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for name in ["trailmap", "app", "tool", "host", "navigation"] {
        schemas.insert(name, schema_dir("demo").join(format!("{name}.schema.json")));
    }
    schemas.insert("demo-trail", schema_dir("demo").join("trail.schema.json"));
    schemas.insert("web-trail", schema_dir("web-demo").join("trail.schema.json"));

    // 1. Every file of the project's trailmaps and fixtures is valid under its schema.
    let mut docs = Vec::new();
    let waypoints = repo_root().join("tests/fixtures/waypoints/trails/config/trailmaps");
    let original = repo_root().join("tests/fixtures/original-layout/trails/config/trailmaps");
    for (root, suffix, schema) in [
        (f.root().join("demo/trails"), ".trail.yaml", "demo-trail"),
        (f.root().join("web-demo/trails"), ".trail.yaml", "web-trail"),
        (f.root(), "trailmap.yaml", "trailmap"),
        (waypoints.clone(), "trailmap.yaml", "trailmap"),
        (original.clone(), "trailmap.yaml", "trailmap"),
        (f.root(), "app.yaml", "app"),
        (waypoints.clone(), "app.yaml", "app"),
        (original.clone(), "app.yaml", "app"),
        (f.root(), ".host.yaml", "host"),
        (original.clone(), ".tool.yaml", "tool"),
        (f.root(), ".tool.yaml", "tool"),
        (waypoints.clone(), ".shortcut.yaml", "navigation"),
        (waypoints.clone(), ".trailhead.yaml", "navigation"),
    ] {
        let mut found = Vec::new();
        files(&root, suffix, &mut found);
        assert!(!found.is_empty(), "no {suffix} under {}", root.display());
        for file in found {
            docs.push((schema.to_string(), file.clone(), yaml_value(&file)));
        }
    }
    let n = docs.len();
    let verdicts = ajv(&schemas, &docs);
    let invalid: Vec<_> = verdicts.iter().filter(|(_, (ok, _))| !ok).collect();
    assert!(invalid.is_empty(), "project files the schemas refuse: {invalid:#?}");
    assert!(n >= 20, "{n} files");

    // 2. Broken trails: the schema and `check` call the same ones wrong, but for the listed differences.
    let bad = f.map_dir().join("trails/corpus");
    std::fs::create_dir_all(&bad).expect("mkdir");
    let mut docs = Vec::new();
    for (name, body) in CORPUS {
        let file = bad.join(format!("{name}.trail.yaml"));
        std::fs::write(
            &file,
            format!("config:\n  target: demo\n{body}").replacen(
                "config:\n  target: demo\nconfig:\n",
                "config:\n  target: demo\n",
                1,
            ),
        )
        .expect("write");
        docs.push(("demo-trail".to_string(), file.clone(), yaml_value(&file)));
    }
    let schema = ajv(&schemas, &docs);
    let o = in_dir(
        &f,
        f.dir.path(),
        &["check", "--no-cache", "--json", "trailmaps/demo/trails/corpus"],
    );
    let (out, err) = text(&o);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let gate_bad: BTreeSet<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["warning"] != json!(true))
        .filter_map(|f| f["file"].as_str())
        .filter_map(|p| {
            Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().replace(".trail.yaml", ""))
        })
        .collect();
    let mut table = String::new();
    let mut differ = BTreeSet::new();
    for (name, _) in CORPUS {
        let file = bad.join(format!("{name}.trail.yaml"));
        let (schema_ok, errors) = &schema[&file];
        let gate_ok = !gate_bad.contains(*name);
        table.push_str(&format!("{name}: gate {gate_ok}, schema {schema_ok} {errors}\n"));
        // The corpus says what each case is: a control passes both.
        assert_eq!(gate_ok, name.starts_with("ok-"), "the gate on {name}:\n{table}{out}");
        if gate_ok != *schema_ok {
            differ.insert(*name);
        }
    }
    let listed: BTreeSet<&str> = DIFFERENCES.iter().map(|(n, _)| *n).collect();
    assert_eq!(differ, listed, "where the schema and the gates differ:\n{table}");
}

#[test]
fn a_settings_file_that_is_not_plain_json_is_left_alone_and_others_keep_their_settings() {
    let f = Fixture::demo();
    let vscode = f.dir.path().join(".vscode");
    std::fs::create_dir_all(&vscode).expect("mkdir");
    let settings = vscode.join("settings.json");
    std::fs::write(
        &settings,
        "{ \"editor.tabSize\": 2, \"yaml.schemas\": { \"other.json\": [\"x.yaml\"] } }",
    )
    .expect("write");
    let o = in_dir(&f, f.dir.path(), &["dts"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    assert_eq!(v["editor.tabSize"], json!(2), "{v}");
    assert_eq!(v["yaml.schemas"]["other.json"], json!(["x.yaml"]), "{v}");
    assert!(
        v["yaml.schemas"]["trailmaps/demo/.trailblaze/schemas/trail.schema.json"].is_array(),
        "{v}"
    );
    // With a comment (JSONC), it is not rewritten: a warning says what to add by hand.
    let jsonc = "// mine\n{ \"editor.tabSize\": 4 }\n";
    std::fs::write(&settings, jsonc).expect("write");
    let o = in_dir(&f, f.dir.path(), &["dts"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).1.contains("left alone"), "{}", text(&o).1);
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), jsonc);
}
