use super::*;
use trailblaze_core::project::ProjectOptions;

/// A tool with five type errors, one per line 4–8, each at column 9 or later.
const FIVE_ERRORS: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Probe. */
export const probe = trailblaze.tool<{ n: number }, { s: string }>(async (input, ctx) => {
  const a: string = input.n;
  await ctx.tools.tap({ ref: 1 });
  ctx.host.nope({});
  const b: number = "x";
  await ctx.tools.pressKey({ keyCode: "SPACEBAR" });
  return { s: a + b };
});
"#;

const CLEAN: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Probe. */
export const probe = trailblaze.tool<{ n: number }, { s: string }>(async (input, ctx) => {
  const a: string = String(input.n);
  await ctx.tools.tap({ ref: "y1" });
  await ctx.tools.pressKey({ keyCode: "ENTER" });
  return { s: a };
});
"#;

/// A project in a temp folder (outside the repository) with trailmap `m` holding `probe.ts`.
fn project_with(tool: &str) -> (tempfile::TempDir, Project) {
    let dir = tempfile::tempdir().expect("temp dir");
    let map = dir.path().join("trailmaps/m");
    std::fs::create_dir_all(map.join("tools")).expect("mkdir");
    std::fs::write(map.join("trailmap.yaml"), "id: m\n").expect("write");
    std::fs::write(map.join("tools/probe.ts"), tool).expect("write");
    let opts = ProjectOptions {
        cache_dir: Some(dir.path().join("cache")),
        ..ProjectOptions::default()
    };
    let project = Project::open(&dir.path().join("trailmaps"), opts).expect("project opens");
    (dir, project)
}

#[test]
fn check_tsc_type_checks_tools_and_reports_file_line_col() {
    let (dir, project) = project_with(FIVE_ERRORS);
    let report = check_tools_tsc(&project, &["m".to_string()]).expect("tsc runs");
    let probe = project.trailmaps.get("m").expect("m").dir.join("tools/probe.ts");
    let got: Vec<(PathBuf, usize, &str)> = report
        .findings
        .iter()
        .map(|f| (f.file.clone(), f.line, &f.message[..6]))
        .collect();
    let want: Vec<(PathBuf, usize, &str)> = [
        (4, "TS2322"),
        (5, "TS2322"),
        (6, "TS2339"),
        (7, "TS2322"),
        (8, "TS2322"),
    ]
    .into_iter()
    .map(|(l, c)| (probe.clone(), l, c))
    .collect();
    assert_eq!(got, want, "{:#?}", report.findings);
    assert!(report.findings.iter().all(|f| f.col > 1 && !f.warning));
    assert_eq!(report.errors(), 5);
    assert_eq!(report.tool_files, 1);
    assert!(report.notices.is_empty(), "tools were type-checked: no notice");
    assert!(
        report.findings[0]
            .to_string()
            .starts_with(&format!("{}:4:", probe.display()))
    );
    // The vendored SDK it compiled against sits inside the trailmap.
    assert!(
        dir.path()
            .join("trailmaps/m/tools/.trailblaze/scripting/index.ts")
            .is_file()
    );

    // Positive control: the same tool, correct, gives no finding (and was compiled).
    let (_dir, project) = project_with(CLEAN);
    let report = check_tools_tsc(&project, &["m".to_string()]).expect("tsc runs");
    assert_eq!(report.findings, Vec::new());
    assert_eq!(report.tool_files, 1);
}

/// The notice is about `.ts` tools: a project with none (composed tools and generated `.d.ts` files
/// only) is not told its tools went unchecked; the test below is the control with a `.ts` tool.
#[test]
fn the_native_check_says_nothing_of_tools_when_there_is_no_ts_tool() {
    let (dir, _) = project_with(CLEAN);
    let tools = dir.path().join("trailmaps/m/tools");
    std::fs::remove_file(tools.join("probe.ts")).expect("remove");
    std::fs::write(tools.join("trailblaze-client.d.ts"), "export {};\n").expect("write");
    let project = Project::open(
        &dir.path().join("trailmaps"),
        ProjectOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..ProjectOptions::default()
        },
    )
    .expect("project opens");
    assert_eq!(check_native(&project, &[]).notices, Vec::<String>::new());
}

#[test]
fn the_native_check_says_once_that_tools_were_not_type_checked() {
    let (_dir, project) = project_with(FIVE_ERRORS);
    let mut native = check_native(&project, &[]);
    assert_eq!(native.notices, vec![TOOLS_NOT_TYPE_CHECKED.to_string()]);
    assert!(native.findings.is_empty(), "the native gate does not see tool bodies");
    assert!(TOOLS_NOT_TYPE_CHECKED.contains("--tsc"));
    // Absorbing another native report keeps one notice; absorbing the tsc tools report adds
    // its findings (the control: the same project does have errors the notice is about).
    native.absorb(check_native(&project, &[]));
    native.absorb(check_tools_tsc(&project, &["m".to_string()]).expect("tsc runs"));
    assert_eq!(native.notices.len(), 1);
    assert_eq!(native.errors(), 5);
}

#[test]
fn a_trailmap_without_tool_scripts_is_not_compiled() {
    let (dir, project) = project_with(CLEAN);
    std::fs::remove_file(dir.path().join("trailmaps/m/tools/probe.ts")).expect("rm");
    let report = check_tools_tsc(&project, &["m".to_string(), "unknown".to_string()]).expect("runs");
    assert_eq!((report.tool_files, report.findings.len()), (0, 0));
}

#[test]
fn an_app_id_target_is_skipped_with_a_notice_and_a_near_miss_is_a_finding() {
    let (dir, project) = project_with(CLEAN);
    let write = |name: &str, target: &str| {
        let file = dir.path().join(name);
        let text = format!(
            "config:\n  target: {target}\ntrail:\n  - step: a\n    recording:\n      tools:\n        - nope: {{}}\n"
        );
        std::fs::write(&file, text).expect("write");
        file
    };
    let app = write("app.trail.yaml", "com.example.app");
    let typo = write("typo.trail.yaml", "mm");
    let known = write("known.trail.yaml", "m");
    let report = check_native(&project, &[app, typo, known]);
    assert!(
        report
            .notices
            .iter()
            .any(|n| n.contains("app.trail.yaml: not type-checked: its target `com.example.app`")),
        "{:?}",
        report.notices
    );
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("target `mm`") && m.contains("did you mean `m`?")),
        "{messages:?}"
    );
    // Control: the trail whose target loads is type-checked, so its unknown tool is found.
    assert!(messages.iter().any(|m| m.contains("nope")), "{messages:?}");
}
