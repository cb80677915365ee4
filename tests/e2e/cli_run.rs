//! `run`'s CI options (`--tag`, `--report-dir`, `--junit`, `--arg`), the device chosen with
//! `--device` (the demo over the fake adb device), scripts' console on stderr, `check --tsc` over
//! tool scripts, and a run whose results cannot be written.

use std::path::Path;

use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::{Fixture, in_dir, text};

fn secrets(f: &Fixture) -> String {
    f.root().join("demo/demo.secrets").display().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

#[test]
fn tags_report_dir_and_junit_choose_the_trails_and_place_the_files() {
    let f = Fixture::demo();
    let dir = f.dir.path().join("ci/report");
    let junit = f.dir.path().join("ci/results/junit.xml");
    let pw = secrets(&f);
    let args = [
        "run",
        "--secrets",
        &pw,
        "--tag",
        "smoke",
        "--report-dir",
        s(&dir),
        "--junit",
        s(&junit),
    ];
    let o = in_dir(&f, f.dir.path(), &args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("2 passed, 0 failed"), "the two smoke trails: {out}");
    assert!(dir.join("report.json").is_file() && dir.join("report.html").is_file());
    let xml = std::fs::read_to_string(&junit).expect("junit written where asked");
    assert_eq!(xml.matches("<testcase").count(), 2, "{xml}");
    // Every artifact path is printed.
    assert!(
        out.contains(s(&junit)) && out.contains(s(&dir.join("report.html"))),
        "{out}"
    );
    // Control: excluding the tag leaves the other trail; `--exclude-tag` wins over `--tag`.
    let o = in_dir(&f, f.dir.path(), &["run", "--secrets", &pw, "--exclude-tag", "smoke"]);
    assert!(text(&o).0.contains("1 passed, 0 failed"), "{}", text(&o).0);
    let o = in_dir(
        &f,
        f.dir.path(),
        &["run", "--secrets", &pw, "--tag", "smoke", "--exclude-tag", "smoke"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("matches the --tag/--exclude-tag filter"),
        "{}",
        text(&o).1
    );
}

const ARGS_TRAIL: &str = "config:
  id: demo/sign-in-as
  target: demo
  args:
    EMAIL: { type: string, default: nobody@example.com }
trailhead:
  step: Launch
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Sign in as the given account
    recording:
      tools:
        - inputText:
            text: \"{{args.EMAIL}}\"
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText:
            text: \"{{secret:DEMO_PASSWORD}}\"
            nodeSelector: { androidAccessibility: { resourceIdRegex: \".*:id/password\" } }
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Sign in } }
  - verify: The inbox is shown
    recording:
      tools:
        - assertVisibleBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Inbox } }
";

#[test]
fn arg_values_reach_the_trail_over_its_defaults() {
    let f = Fixture::demo();
    let trail = f.map_dir().join("trails/sign-in-as.trail.yaml");
    std::fs::write(&trail, ARGS_TRAIL).expect("write");
    let pw = secrets(&f);
    // The simulated app accepts only the demo account: the default fails, the given value passes.
    let o = in_dir(&f, f.dir.path(), &["run", "--secrets", &pw, s(&trail)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the default account cannot sign in: {}",
        text(&o).0
    );
    let o = in_dir(
        &f,
        f.dir.path(),
        &["run", "--secrets", &pw, "--arg", "EMAIL=jane@example.com", s(&trail)],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o).0, text(&o).1);
    // A malformed pair is refused without repeating it (it may be a secret).
    let o = in_dir(&f, f.dir.path(), &["run", "--arg", "hunter2-no-equals", s(&trail)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(err.contains("NAME=VALUE") && !err.contains("hunter2"), "{err}");
}

#[test]
fn the_demo_runs_on_an_android_device_behind_the_adb_protocol() {
    const SERIAL: &str = "emulator-5554";
    let fake = FakeAdb::demo(SERIAL);
    let f = Fixture::demo();
    let server = fake.addr().to_string();
    let pw = secrets(&f);
    let o = in_dir(&f, f.dir.path(), &["devices", "--adb-server", &server]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("sim\t") && out.contains(&format!("android:{SERIAL}\tdevice\tPixel_7")),
        "{out}"
    );
    let o = in_dir(
        &f,
        f.dir.path(),
        &[
            "run",
            "--json",
            "--secrets",
            &pw,
            "--device",
            "android",
            "--adb-server",
            &server,
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["device"], "android");
    assert_eq!(report["trails"].as_array().map(Vec::len), Some(3));
    // The taps reached the fake phone, not the simulator.
    assert!(fake.phone().typed.contains("jane@example.com"));
    let o = in_dir(
        &f,
        f.dir.path(),
        &[
            "snapshot",
            "--device",
            &format!("android:{SERIAL}"),
            "--adb-server",
            &server,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // The phone is where the last trail left it (a real device is not reset between commands).
    assert!(text(&o).0.contains("TextView \"Inbox\""), "{}", text(&o).0);
    // Controls: an unknown serial and an unknown kind of device are exit 2, named.
    let o = in_dir(
        &f,
        f.dir.path(),
        &["snapshot", "--device", "android:R58M", "--adb-server", &server],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("R58M") && text(&o).1.contains(SERIAL),
        "{}",
        text(&o).1
    );
    let o = in_dir(&f, f.dir.path(), &["run", "--device", "tvos"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("unknown device `tvos`"), "{}", text(&o).1);
}

#[test]
fn a_scripts_console_lines_reach_stderr_scrubbed() {
    // A trailmap without `target.tools`, so every scripted tool is LLM-visible.
    let f = Fixture::new("c");
    f.tool(
        "chatty",
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         /** Says hello. */\n\
         export const chatty = trailblaze.tool<{}, {}>(async () => {\n\
           console.log(\"hello from a tool\");\n\
           console.warn(\"the password is\", password());\n\
           return {};\n\
         });\n\
         function password(): string { return \"hunter2\"; }\n",
    );
    let pw = f.dir.path().join("c.secrets");
    std::fs::write(&pw, "PW=hunter2\n").expect("write");
    let o = in_dir(&f, f.dir.path(), &["tool", "chatty", "--secrets", s(&pw)]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("[chatty] hello from a tool"), "{err}");
    assert!(err.contains("[chatty] warn: the password is ***"), "{err}");
    assert!(!err.contains("hunter2") && !out.contains("hunter2"), "{err}");
    // Control: with no secrets given, the same line shows the text, so the check above can see it.
    let o = in_dir(&f, f.dir.path(), &["tool", "chatty"]);
    assert!(text(&o).1.contains("the password is hunter2"), "{}", text(&o).1);
}

#[test]
fn check_tsc_type_checks_tool_scripts_and_the_native_check_says_it_did_not() {
    let f = Fixture::demo();
    f.tool(
        "typo",
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         /** Has a type error in its body. */\n\
         export const typo = trailblaze.tool<{}, {}>(async () => {\n\
           const n: number = \"not a number\";\n\
           return { n };\n\
         });\n",
    );
    let o = in_dir(&f, f.dir.path(), &["check"]);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the native gate does not read bodies: {out}{err}"
    );
    assert!(
        err.contains("notice: scripted tools (tools/*.ts) were not type-checked"),
        "{err}"
    );
    let o = in_dir(&f, f.dir.path(), &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("TS2322") && out.contains("typo.ts:4:"), "{out}");
    assert!(!err.contains("notice: scripted tools"), "{err}");
}

/// A full disk, as a file-size limit makes it (SIGXFSZ is ignored, so writes fail with EFBIG):
/// the run says so once, exits 1 (its results are lost, as when a trail fails, not bad usage),
/// and leaves no half-written file.
#[test]
fn a_run_that_cannot_write_its_results_fails_once_cleanly() {
    let f = Fixture::demo();
    let out_dir = f.dir.path().join("small-disk");
    let cmd = format!(
        "ulimit -f 4 && exec '{}' run --secrets '{}' --out '{}'",
        trailblaze_e2e::trailblaze_bin().display(),
        secrets(&f),
        out_dir.display()
    );
    let o = std::process::Command::new("bash")
        .args(["-c", &cmd])
        .current_dir(f.dir.path())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .output()
        .expect("bash runs");
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{err}");
    assert_eq!(err.matches("error: cannot write the reports").count(), 1, "{err}");
    let warnings = err.lines().filter(|l| l.starts_with("warning:")).count();
    assert!(
        warnings <= 4,
        "one warning per cause, not per step ({warnings}):\n{err}"
    );
    let mut left = Vec::new();
    let mut stack = vec![out_dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".tmp") {
                left.push(p);
            }
        }
    }
    assert!(left.is_empty(), "half-written files left: {left:?}");
    // Control: without the limit the same run passes, so the failure above is the limit's.
    let o = in_dir(&f, f.dir.path(), &["run", "--secrets", &secrets(&f)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
}

#[test]
fn screenshots_can_be_limited_to_failures_or_turned_off() {
    let f = Fixture::demo();
    let pw = secrets(&f);
    let screens = |which: &str| -> usize {
        let dir = f.dir.path().join(format!("shots-{which}"));
        let o = in_dir(
            &f,
            f.dir.path(),
            &["run", "--secrets", &pw, "--screenshots", which, "--report-dir", s(&dir)],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        let report = std::fs::read_to_string(dir.join("report.json")).expect("report");
        report.matches("\"screen\": \"screens/").count()
    };
    // Control: by default every step has its screen, so the counts below can be told apart.
    assert!(screens("all") >= 3);
    assert_eq!(screens("failures"), 0, "every step passed: no screen kept");
    assert_eq!(screens("none"), 0);
    // A failing step keeps its screen under `failures`, and only it.
    let bad = f.map_dir().join("trails/fails.trail.yaml");
    std::fs::write(
        &bad,
        "config:\n  id: demo/fails\n  target: demo\ntrail:\n  - verify: A screen that never shows\n    recording:\n      tools:\n        - assertVisibleBySelector:\n            nodeSelector: { androidAccessibility: { textRegex: Nowhere } }\n",
    )
    .expect("write");
    let dir = f.dir.path().join("shots-failing");
    let o = in_dir(
        &f,
        f.dir.path(),
        &["run", "--screenshots", "failures", "--report-dir", s(&dir), s(&bad)],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).0);
    let report = std::fs::read_to_string(dir.join("report.json")).expect("report");
    assert_eq!(report.matches("\"screen\": \"screens/").count(), 1, "{report}");
    let o = in_dir(&f, f.dir.path(), &["run", "--screenshots", "some"]);
    assert_eq!(o.status.code(), Some(2));
}
