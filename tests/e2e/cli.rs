//! The `trailblaze` binary.

use std::process::Command;

use trailblaze_e2e::{Fixture, trailblaze_bin};

fn run(f: &Fixture, args: &[&str]) -> std::process::Output {
    run_env(f, args, &[])
}

/// `trailblaze --trailmaps <fixture> --out <fixture out> ARGS` with extra environment variables.
fn run_env(f: &Fixture, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(trailblaze_bin())
        .args(["--trailmaps"])
        .arg(f.root())
        .env("TRAILBLAZE_OUT", f.out())
        .args(args)
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("trailblaze runs")
}

fn json_out(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn a_second_process_transpiles_nothing() {
    let f = Fixture::demo();
    let args = [
        "tool",
        "--secrets",
        "trailmaps/demo/demo.secrets",
        "--json",
        "signIn",
        "account=demo",
    ];
    let secrets = f.root().join("demo/demo.secrets");
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args[2] = secrets.display().to_string();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = run(&f, &argv);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first = json_out(&first);
    assert!(
        first["transpiled"].as_u64().unwrap_or(0) >= 2,
        "the first process transpiles signIn.ts and screen.ts: {first}"
    );
    let second = json_out(&run(&f, &argv));
    assert_eq!(second["ok"], true);
    assert_eq!(
        second["transpiled"], 0,
        "every transpile comes from the disk cache: {second}"
    );
}

#[test]
fn tool_runs_a_scripted_tool_and_lists_its_steps() {
    let f = Fixture::demo();
    let secrets = f.root().join("demo/demo.secrets");
    let o = run(
        &f,
        &[
            "tool",
            "--secrets",
            secrets.to_str().unwrap_or_default(),
            "--json",
            "signIn",
            "account=demo",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_out(&o);
    assert_eq!(v["result"], serde_json::json!({ "screen": "inbox" }));
    let tools: Vec<&str> = v["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool"].as_str())
        .collect();
    assert_eq!(tools[0], "signIn");
    assert!(
        tools.contains(&"inputText") && tools.contains(&"launchApp"),
        "{tools:?}"
    );
    // The password is typed through a placeholder and never written.
    assert!(!f.all_output().contains("hunter2"));
}

#[test]
fn exit_codes_separate_failures_from_usage_errors() {
    let f = Fixture::demo();
    let unknown = run(&f, &["tool", "tapp"]);
    assert_eq!(unknown.status.code(), Some(2));
    let failed = run(&f, &["tool", "openMessage", "index=1"]);
    assert_eq!(
        failed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
    let ok = run(&f, &["tool", "launchApp", "appId=com.example.demo"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn tool_accepts_only_llm_visible_tools() {
    let f = Fixture::demo();
    let hidden = run(&f, &["tool", "inputText", "text=hello"]);
    assert_eq!(hidden.status.code(), Some(2));
    let err = String::from_utf8_lossy(&hidden.stderr);
    assert!(
        err.contains("not an LLM-visible tool") && err.contains("trailblaze tool type text="),
        "{err}"
    );
    let typo = run(&f, &["tool", "inputTex", "text=hello"]);
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(
        err.contains("unknown tool `inputTex`") && !err.contains("`inputText`"),
        "hidden names are never suggested: {err}"
    );
    let near = run(&f, &["tool", "tapp", "ref=x"]);
    let err = String::from_utf8_lossy(&near.stderr);
    assert!(err.contains("did you mean") && err.contains("tap"), "{err}");
    // Positive control: the LLM-visible form works.
    let ok = run(&f, &["tool", "type", "keyCode=TAB"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn tools_tokens_prints_each_cost_and_the_total() {
    let f = Fixture::demo();
    let o = run(&f, &["tools", "--json", "--tokens"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_out(&o);
    let tools = v["tools"].as_array().expect("tools");
    let sum: u64 = tools.iter().filter_map(|t| t["tokens"].as_u64()).sum();
    assert!(sum > 100 && v["total"] == sum, "{v}");
    assert!(tools.iter().any(|t| t["name"] == "type"), "{v}");
    assert!(!tools.iter().any(|t| t["name"] == "inputText"), "{v}");
}

#[test]
fn snapshot_prints_refs() {
    let f = Fixture::demo();
    let o = run(&f, &["snapshot"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("EditText hint=\"Email\"") && text.contains("] Button \"Sign in\""),
        "{text}"
    );
}

#[test]
fn check_exits_1_on_findings_and_0_when_clean() {
    let f = Fixture::demo();
    let clean = run(&f, &["check", "demo"]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    let bad = f.map_dir().join("trails/bad.trail.yaml");
    std::fs::write(
        &bad,
        "config:\n  target: demo\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { txt: a }\n",
    )
    .unwrap();
    let o = run(&f, &["check", bad.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("bad.trail.yaml:7:") && out.contains("error: step 1 · inputText: "),
        "{out}"
    );
    let usage = run(&f, &["check", "/no/such/place"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// `check` keeps each trail's result in the cache folder and reports the same thing from it;
/// `--no-cache` neither reads nor writes it.
#[test]
fn check_reports_the_same_from_its_cache_and_no_cache_skips_it() {
    let f = Fixture::demo();
    let bad = f.map_dir().join("trails/bad.trail.yaml");
    std::fs::write(
        &bad,
        "config:\n  target: demo\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { txt: a }\n",
    )
    .expect("write");
    let shown = |o: &std::process::Output| {
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let uncached = shown(&run(&f, &["check", "demo", "--no-cache"]));
    assert_eq!(uncached.0, Some(1), "{uncached:?}");
    assert!(uncached.1.contains("bad.trail.yaml:7:"), "{uncached:?}");
    let cache = f.cache().join("check");
    assert!(!cache.exists(), "--no-cache writes no cache");
    let cold = shown(&run(&f, &["check", "demo"]));
    assert!(cache.is_dir(), "a check writes its cache");
    let warm = shown(&run(&f, &["check", "demo"]));
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold, "the cached check prints exactly what the first did");
    let json = |args: &[&str]| String::from_utf8_lossy(&run(&f, args).stdout).into_owned();
    assert_eq!(
        json(&["check", "demo", "--json"]),
        json(&["check", "demo", "--json", "--no-cache"])
    );
    // Fixed: the cache does not keep the old finding.
    std::fs::write(
        &bad,
        "config:\n  target: demo\ntrail:\n  - step: s\n    recording:\n      tools:\n        - inputText: { text: a }\n",
    )
    .expect("write");
    let fixed = shown(&run(&f, &["check", "demo"]));
    assert_eq!(fixed.0, Some(0), "{fixed:?}");
}

/// A secret value never reaches the terminal: not in a result, an error (a built-in echoing what it
/// was given), a step line, `--json`, nor in any escaped form; control characters arrive escaped.
#[test]
fn the_terminal_never_shows_a_secret_or_a_raw_control_character() {
    const SECRET: &str = "CANARY-it's-<b>-d41d8";
    let f = Fixture::new("t");
    f.file(
        "host/lookupCredential.host.yaml",
        "id: lookupCredential\nclass: lookupCredential\n",
    );
    f.tool(
        "leak",
        r#"import { trailblaze } from "@trailblaze/scripting";
/** Returns the password, throws it, and prints an escape sequence. */
export const leak = trailblaze.tool<{ mode: string }, { password: string; nested: Record<string, string> }>(async (input, ctx) => {
  const { password } = ctx.host.lookupCredential({ account: "demo" }) as { password: string };
  if (input.mode === "throw") throw new Error("bad password " + password + " \u001b[31mred");
  return { password, nested: { [password]: password } };
});"#,
    );
    let env = [
        ("TRAILBLAZE_SECRET_DEMO_USERNAME", "jane"),
        ("TRAILBLAZE_SECRET_DEMO_PASSWORD", SECRET),
    ];
    let run_with = |args: &[&str]| run_env(&f, args, &env);
    let forms = [
        SECRET.to_string(),
        SECRET.replace('\'', "&#39;"),
        SECRET.replace('<', "&lt;"),
        "d41d8".to_string(),
    ];
    let mut seen = Vec::new();
    for args in [
        vec!["tool", "leak", "mode=return"],
        vec!["tool", "--json", "leak", "mode=return"],
        vec!["tool", "leak", "mode=throw"],
        vec!["tool", "launchApp", "appId={{secret:DEMO_PASSWORD}}"],
        vec!["tool", "--json", "launchApp", "appId={{secret:DEMO_PASSWORD}}"],
    ] {
        let o = run_with(&args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        for form in &forms {
            assert!(!text.contains(form.as_str()), "{args:?} printed `{form}`:\n{text}");
        }
        assert!(!text.contains('\u{1b}'), "{args:?} printed a raw ESC:\n{text}");
        seen.push(text);
    }
    // Positive controls: the calls did what they say, so the absence above means something.
    assert!(seen[0].contains("\"password\": \"***\""), "{}", seen[0]);
    assert!(
        seen[2].contains("bad password ***") && seen[2].contains("\\u{1b}[31mred"),
        "{}",
        seen[2]
    );
    // launchApp takes no secrets: refused by name, before anything could echo the value.
    assert!(seen[3].contains("`appId` holds a secret"), "{}", seen[3]);
}
