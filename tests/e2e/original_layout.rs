//! A workspace laid out the original's way (tests/fixtures/original-layout, written here): the
//! anchor `trails/config/trailblaze.yaml`, trailmaps under `trails/config/trailmaps/`, a legacy flat
//! target, trails as `<name>/trail.yaml`, `*.trail.yaml` and `blaze.yaml`, every recording key form,
//! the list form, an empty trailhead, package-id and missing targets, every manifest and tool-spec
//! key, `.js` tools with `.yaml` descriptors and every selector field. It is found from inside,
//! loads, type-checks with both gates and replays green on the simulated clock app.

use std::path::{Path, PathBuf};

use serde_json::Value;
use trailblaze::ProjectOptions;
use trailblaze::device::sim::SimDevice;
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::{Fixture, copy_dir, in_dir, repo_root, text};

/// A copy of the fixture workspace (generated files land in the copy), and a fixture for the cache.
fn workspace() -> (Fixture, PathBuf) {
    let f = Fixture::new("unused");
    let home = f.dir.path().join("ws");
    copy_dir(&repo_root().join("tests/fixtures/original-layout"), &home);
    (f, home)
}

fn clock_app(home: &Path) -> PathBuf {
    home.join("trails/config/trailmaps/clock/app.yaml")
}

#[test]
fn every_trail_is_found_from_inside_the_workspace_and_passes_both_gates() {
    let (f, home) = workspace();
    // From a trail's own folder, deep inside: the anchor above is found.
    let deep = home.join("trails/clock/set-alarm-730am");
    let o = in_dir(&f, &deep, &["check", "--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let report: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(report["trails"], 8, "{out}");
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(0), "{out}");
    let notices = report["notices"].to_string();
    assert!(
        notices.contains("no-target.trail.yaml: not type-checked: it names no target")
            && notices.contains("its target `com.android.deskclock` is no loaded trailmap"),
        "{notices}"
    );
    // The real TypeScript compiler agrees, over the trails and the tools' own source.
    let o = in_dir(&f, &home, &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("4 tool script(s),") && out.contains("1 waypoint(s),") && out.contains(": 0 finding(s)"),
        "{out}{err}"
    );
}

#[test]
fn the_clock_trails_replay_green_on_the_simulated_app() {
    let (f, home) = workspace();
    let o = in_dir(&f, &home, &["run", "trails/clock", "--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).expect("json");
    let outcomes: Vec<(String, String)> = report["trails"]
        .as_array()
        .expect("trails")
        .iter()
        .map(|t| (t["file"].as_str().unwrap_or("").to_string(), t["outcome"].to_string()))
        .collect();
    assert_eq!(outcomes.len(), 5, "{outcomes:?}");
    let skipped: Vec<_> = outcomes.iter().filter(|(_, o)| o.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "only the grammar trail is skipped: {outcomes:?}");
    assert!(skipped[0].0.ends_with("selector-grammar.trail.yaml"));
    // The `.js` tool typed into the picker: the alarm exists only if 7 and 30 reached its fields.
    assert!(err.contains("✓ step 4 The new 7:30 alarm is in the list"), "{err}");
    // The platform's classifier (`android-phone`) was chosen over the other devices' recordings.
    assert!(err.contains("✓ step 1 Open the timer"), "{err}");
}

#[test]
fn a_package_id_target_runs_with_the_built_ins_on_a_device() {
    let (f, home) = workspace();
    let app = SimDevice::from_app_file(&clock_app(&home)).expect("clock app");
    let fake = FakeAdb::start("emulator-5554", app);
    let server = fake.addr().to_string();
    let file = "trails/apps/package-target.trail.yaml";
    let o = in_dir(
        &f,
        &home,
        &["run", file, "--device", "android", "--adb-server", &server],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("1 passed"), "{out}");
    // Control: on the simulated device there is no app for such a trail, and it says what to do.
    let o = in_dir(&f, &home, &["run", file]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).0.contains("--device android"), "{}", text(&o).0);
}

#[test]
fn a_lone_trail_file_runs_outside_any_workspace() {
    let (f, home) = workspace();
    // A folder with no workspace above it (the fixture's own temp folder has a `trailmaps/`).
    let outside = tempfile::tempdir().expect("temp dir");
    let lone = outside.path().to_path_buf();
    std::fs::copy(
        home.join("trails/apps/no-target.trail.yaml"),
        lone.join("home.trail.yaml"),
    )
    .expect("copy");
    let o = in_dir(&f, &lone, &["check", "home.trail.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // Control: with no file named, there is still no workspace here, and it says so.
    let o = in_dir(&f, &lone, &["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no trailmaps folder"), "{}", text(&o).1);
}

#[test]
fn migrate_rewrites_the_list_form_and_the_result_still_runs() {
    let (f, home) = workspace();
    let file = "trails/clock/legacy-list.trail.yaml";
    let before = std::fs::read_to_string(home.join(file)).expect("read");
    assert!(before.contains("- prompts:"));
    let o = in_dir(&f, &home, &["migrate", file]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let after = std::fs::read_to_string(home.join(file)).expect("read");
    assert!(after.starts_with("config:") && after.contains("\ntrail:\n"), "{after}");
    let o = in_dir(&f, &home, &["run", file]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(text(&o).0.contains("1 passed"));
    // Again: nothing to do, and the file is untouched.
    let o = in_dir(&f, &home, &["migrate", file]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).1.contains("already in the current form"), "{}", text(&o).1);
    assert_eq!(std::fs::read_to_string(home.join(file)).expect("read"), after);
    // A file with a parse error is reported at its line and left as it was.
    let bad = home.join("trails/bad.trail.yaml");
    std::fs::write(&bad, "- config:\n    id: x\n- prompts:\n  - stpe: typo\n").expect("write");
    let o = in_dir(&f, &home, &["migrate", "trails/bad.trail.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("bad.trail.yaml:4:5"), "{}", text(&o).1);
    assert!(std::fs::read_to_string(&bad).expect("read").contains("stpe"));
}

#[test]
fn the_workspace_config_is_read_strictly() {
    let (f, home) = workspace();
    let anchor = home.join("trails/config/trailblaze.yaml");
    let good = std::fs::read_to_string(&anchor).expect("read");
    std::fs::write(&anchor, format!("{good}targetz: []\n")).expect("write");
    let o = in_dir(&f, &home, &["check"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(err.contains("targetz") && err.contains("trailblaze.yaml:"), "{err}");
    // A listed target with no trailmap is said, not fatal (the original loads such a workspace).
    std::fs::write(&anchor, good.replace("  - clock", "  - clocks")).expect("write");
    let o = in_dir(&f, &home, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(
        text(&o)
            .1
            .contains("warning: trailblaze.yaml: target `clocks` is no trailmap of this workspace"),
        "{}",
        text(&o).1
    );
    // Control: an all-comments anchor is an empty config.
    std::fs::write(&anchor, "# nothing yet\n").expect("write");
    assert_eq!(in_dir(&f, &home, &["check"]).status.code(), Some(0));
}

#[test]
fn scripted_tools_in_the_original_style_are_discovered_with_their_input_types() {
    let (f, home) = workspace();
    let project = trailblaze::open(
        &home.join("trails/config/trailmaps"),
        ProjectOptions {
            cache_dir: Some(f.cache()),
            ..ProjectOptions::default()
        },
    )
    .expect("the trailmaps load");
    assert!(
        project.trailmaps.get("legacy").is_some(),
        "the legacy flat target loads"
    );
    let catalog = project.catalog("clock").expect("catalog");
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    let tool = |name: &str| catalog.tool(name).unwrap_or_else(|| panic!("{name} is discovered"));
    // A union type from a shared helper module, through `import { selectors }`.
    let open = tool("clock_openTab");
    assert_eq!(
        open.input_schema["properties"]["tab"]["enum"],
        serde_json::json!(["ALARM", "CLOCK", "TIMER", "STOPWATCH"])
    );
    assert!(open.flags.surface_to_llm, "named in target.tools");
    // No type parameters: no arguments.
    assert_eq!(
        tool("clock_android_launchApp").input_schema["properties"],
        serde_json::json!({})
    );
    // The `.js` tool from its descriptor: required unless it says otherwise, `enum` kept.
    let typed = tool("clock_typeTime");
    assert_eq!(typed.input_schema["required"], serde_json::json!(["hour", "minute"]));
    assert_eq!(
        typed.input_schema["properties"]["period"]["enum"],
        serde_json::json!(["AM", "PM"])
    );
    assert!(
        typed.flags.surface_to_llm,
        "hoisted from target.platforms.android.tools"
    );
    // The multi-tool descriptor: both exports; `excluded_tools` hides one, one is not offered.
    assert!(!tool("clock_startTimer").flags.surface_to_llm);
    assert!(!tool("clock_readStopwatch").flags.surface_to_llm);
    // The composed tool named by `id:`.
    assert_eq!(tool("clock_back").name, "clock_back");
    // Unit tests of tools are no tools.
    let names: Vec<&str> = catalog.tools().map(|t| t.name.as_str()).collect();
    assert!(!names.iter().any(|k| k.contains("test")), "{names:?}");
}
