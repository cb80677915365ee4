//! `trailblaze mcp` driven by the official MCP TypeScript SDK client (tests/mcp-client, from npm),
//! over stdio and streamable HTTP: the tool catalog, calls on one live session, tool errors, secrets
//! that never come back, cancellation, two clients at once, and the session saved as a trail that
//! passes `check` and replays green on a fresh device.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};
use trailblaze_e2e::{CANARY, Fixture, repo_root, trailblaze_bin};

// Connections that never send a request: the header timeout and the cap on waiting connections.
mod slow_clients;
// The tools over the workspace's trails and devices, and the resources.
mod workspace;

/// The npm project holding the SDK client; installed once if the suite's script did not.
fn client_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = repo_root().join("tests/mcp-client");
        if !dir.join("node_modules/@modelcontextprotocol/sdk").exists() {
            let ok = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .status()
                .expect("npm runs");
            assert!(ok.success(), "npm ci in tests/mcp-client failed");
        }
        dir
    })
    .clone()
}

/// The demo trailmap, its app taking the canary as the password (so signing in proves the real
/// value reached the device), and a scripted tool that spins until cancelled.
pub(crate) fn demo() -> Fixture {
    let f = Fixture::demo();
    let app = std::fs::read_to_string(f.map_dir().join("app.yaml")).expect("app.yaml");
    let app = app.replace("password: hunter2", &format!("password: {CANARY}"));
    assert!(
        app.contains(CANARY),
        "the demo app's password is where this test expects it"
    );
    f.file("app.yaml", &app);
    let map = std::fs::read_to_string(f.map_dir().join("trailmap.yaml")).expect("trailmap.yaml");
    f.file(
        "trailmap.yaml",
        &map.replace("tools: [signIn,", "tools: [spin, signIn,"),
    );
    f.tool(
        "spin",
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         /** Never returns (until cancelled). */\n\
         export const spin = trailblaze.tool<Record<string, never>, { done: boolean }>(async () => {\n\
           for (;;) {}\n\
         });\n",
    );
    f
}

pub(crate) fn cli(f: &Fixture) -> Command {
    let mut cmd = Command::new(trailblaze_bin());
    cmd.arg("--trailmaps")
        .arg(f.root())
        .env("TRAILBLAZE_OUT", f.out())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", CANARY)
        // `mcp --http`'s bearer token, which the SDK driver sends too.
        .env("TRAILBLAZE_MCP_TOKEN", MCP_TOKEN)
        .env("NO_COLOR", "1");
    cmd
}

/// The token the HTTP tests' server is given.
pub(crate) const MCP_TOKEN: &str = "test-token-7d2f0b";

/// Runs the SDK driver with `ops`; returns its results and everything written to stderr (the
/// server's too, over stdio).
pub(crate) fn drive(args: &[&str], ops: &Value, env_from: &Command) -> (Vec<Value>, String) {
    let mut cmd = Command::new("node");
    cmd.arg(client_dir().join("drive.mjs")).args(args);
    for (k, v) in env_from.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(ops.to_string().as_bytes())
        .expect("ops written");
    let out = child.wait_with_output().expect("driver ends");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the SDK driver failed:\n{stderr}");
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("the driver prints JSON");
    (results, stderr)
}

/// `trailblaze mcp` over stdio, spawned by the SDK's stdio transport.
pub(crate) fn drive_stdio(f: &Fixture, ops: &Value) -> (Vec<Value>, String) {
    drive_stdio_env(f, ops, &cli(f))
}

/// [`drive_stdio`] with the environment of `base` (a `cli(f)` with more variables).
pub(crate) fn drive_stdio_env(f: &Fixture, ops: &Value, base: &Command) -> (Vec<Value>, String) {
    let bin = trailblaze_bin();
    let root = f.root();
    let args = [
        "stdio",
        bin.to_str().expect("utf-8 path"),
        "--trailmaps",
        root.to_str().expect("utf-8 path"),
        "mcp",
    ];
    drive(&args, ops, base)
}

/// `trailblaze mcp --http 0`, killed when dropped.
pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) url: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpServer {
    fn start(f: &Fixture) -> HttpServer {
        HttpServer::start_with(cli(f).args(["mcp", "--http", "0"]))
    }

    /// The server `cmd` starts (an `mcp --http` command line).
    pub(crate) fn start_with(cmd: &mut Command) -> HttpServer {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("trailblaze mcp starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut seen = String::new();
        let url = loop {
            let line = lines
                .next()
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("no address printed:\n{seen}"));
            seen.push_str(&line);
            seen.push('\n');
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.trim().to_string();
            }
        };
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(seen));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        HttpServer { child, url, stderr }
    }
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ref shown before the line of the snapshot that contains `needle`: `[y778] EditText ...`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in the snapshot:\n{snapshot}"));
    let start = line.find('[').expect("a ref") + 1;
    let end = line[start..].find(']').expect("a ref") + start;
    line[start..end].to_string()
}

pub(crate) fn call(tool: &str, args: Value) -> Value {
    json!({ "op": "call", "tool": tool, "args": args })
}

pub(crate) fn text(r: &Value) -> &str {
    r["text"].as_str().unwrap_or_default()
}

pub(crate) fn assert_ok(r: &Value, what: &str) {
    assert_eq!(r["isError"], json!(false), "{what} failed: {}", text(r));
}

/// Snapshot, learn the sign-in form's refs; the next run types into them by ref.
pub(crate) fn refs(f: &Fixture) -> (String, String, String) {
    let (r, _) = drive_stdio(f, &json!([call("snapshot", json!({}))]));
    let snap = text(&r[0]);
    (
        ref_of(snap, "hint=\"Email\""),
        ref_of(snap, "hint=\"Password\""),
        ref_of(snap, "Button \"Sign in\""),
    )
}

/// One whole session: sign in by ref (the password as a placeholder), a scripted tool, bad calls,
/// then `saveTrail`.
fn session_ops(email: &str, password: &str, submit: &str, save: Value) -> Value {
    json!([
        { "op": "list" },
        call("snapshot", json!({})),
        call("type", json!({ "text": "jane@example.com", "ref": email })),
        call("type", json!({ "text": "{{secret:DEMO_PASSWORD}}", "ref": password })),
        call("tap", json!({ "ref": submit })),
        call("snapshot", json!({})),
        call("setDarkMode", json!({ "enabled": true })),
        call("tap", json!({ "ref": submit, "color": "red" })),
        call("tapp", json!({ "ref": submit })),
        call("inputText", json!({ "text": "x" })),
        call("saveTrail", save),
    ])
}

#[test]
fn stdio_session_with_the_sdk_client_saves_a_trail_that_checks_and_replays_green() {
    let f = demo();
    let (email, password, submit) = refs(&f);
    let save = json!({ "name": "mcp-session", "title": "Signed in over MCP" });
    let (r, stderr) = drive_stdio(&f, &session_ops(&email, &password, &submit, save.clone()));

    // The catalog: the same definitions as `tools --json`, plus the session tools.
    let listed: Vec<&str> = r[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let tools_json = cli(&f).args(["tools", "--json"]).output().expect("tools runs");
    let defs: Vec<Value> = serde_json::from_slice(&tools_json.stdout).expect("tools --json");
    let mut want: Vec<&str> = defs.iter().filter_map(|d| d["name"].as_str()).collect();
    want.extend([
        "saveTrail",
        "resetSession",
        "listTrails",
        "readTrail",
        "runTrail",
        "switchDevice",
    ]);
    assert_eq!(listed, want);
    assert!(listed.contains(&"spin") && !listed.contains(&"inputText"), "{listed:?}");
    let tap = r[0]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "tap"))
        .expect("tap");
    let tap_def = defs.iter().find(|d| d["name"] == "tap").expect("tap def");
    assert_eq!(tap["inputSchema"], tap_def["inputSchema"]);

    // The snapshot comes as the compact text, not the JSON tree.
    assert_ok(&r[1], "snapshot");
    assert!(text(&r[1]).contains(&format!("[{email}]")) && !text(&r[1]).trim_start().starts_with('{'));
    for (i, what) in [
        (2, "type email"),
        (3, "type password"),
        (4, "tap"),
        (5, "snapshot"),
        (6, "setDarkMode"),
    ] {
        assert_ok(&r[i], what);
    }
    // The device kept its state across calls: signed in, with the real password.
    assert!(text(&r[5]).contains("Inbox"), "signed in:\n{}", text(&r[5]));
    assert!(text(&r[6]).contains("changed"), "{}", text(&r[6]));
    // Bad calls are tool errors with the CLI's messages.
    assert_eq!(r[7]["isError"], json!(true));
    assert!(text(&r[7]).contains("color"), "names the unknown key: {}", text(&r[7]));
    assert_eq!(r[8]["isError"], json!(true));
    assert!(
        text(&r[8]).contains("unknown tool `tapp`") && text(&r[8]).contains("`tap`"),
        "{}",
        text(&r[8])
    );
    assert_eq!(r[9]["isError"], json!(true));
    assert!(text(&r[9]).contains("use `type` instead"), "{}", text(&r[9]));
    assert_ok(&r[10], "saveTrail");

    // The saved trail: placeholders, recordable calls only, a digit-free plain style that reads back.
    let path = f.map_dir().join("trails/mcp-session.trail.yaml");
    let saved = std::fs::read_to_string(&path).expect("the trail was saved");
    assert!(
        saved.contains("{{secret:DEMO_PASSWORD}}") && saved.contains("inputText") && saved.contains("setDarkMode"),
        "{saved}"
    );
    assert!(
        !saved.contains("- tap:") && !saved.contains("- type:"),
        "tap/type are never recorded:\n{saved}"
    );
    assert!(saved.contains("title: Signed in over MCP"), "{saved}");

    // Secrets: in no reply, no saved trail, no log, no stderr (the control: signing in worked).
    let replies = serde_json::to_string(&r).expect("json");
    for (what, hay) in [
        ("replies", replies),
        ("trail", saved.clone()),
        ("logs", f.all_output()),
        ("stderr", stderr),
    ] {
        assert!(!hay.contains(CANARY), "the secret value leaked into the {what}");
    }
    // The session's trace (docs/trace.md), written when it ended: every call, no secret in any form.
    let traces: Vec<PathBuf> = std::fs::read_dir(f.out())
        .expect("out")
        .flatten()
        .map(|e| e.path().join("trace.json"))
        .filter(|p| p.is_file())
        .collect();
    // This session's (an earlier one read the refs): the one that switched dark mode.
    let read =
        |p: &PathBuf| -> Value { serde_json::from_str(&std::fs::read_to_string(p).expect("trace")).expect("JSON") };
    let traces: Vec<PathBuf> = traces
        .into_iter()
        .filter(|p| read(p).to_string().contains("setDarkMode"))
        .collect();
    assert_eq!(traces.len(), 1, "this session wrote its trace");
    let trace = read(&traces[0]);
    let tools: Vec<&str> = trace["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert!(
        tools.contains(&"tapOnElementBySelector") && tools.contains(&"snapshot"),
        "{tools:?}"
    );
    // Each call the client made is a step.
    let top = trace["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["depth"] == 0)
        .count();
    assert_eq!(trace["steps"].as_array().map(Vec::len), Some(top));
    let dir = traces[0].parent().expect("session folder");
    assert_eq!(super::trace::files_holding(dir, CANARY), Vec::<PathBuf>::new());

    // Both gates, then a replay on a fresh device.
    let check = cli(&f).arg("check").arg(&path).output().expect("check runs");
    assert!(
        check.status.success(),
        "check:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let run = cli(&f).arg("run").arg(&path).output().expect("run runs");
    assert!(
        run.status.success(),
        "run:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );

    // The same session again: refused without overwrite; with it, the same bytes.
    let (again, _) = drive_stdio(&f, &session_ops(&email, &password, &submit, save.clone()));
    assert_eq!(again[10]["isError"], json!(true));
    assert!(text(&again[10]).contains("overwrite: true"), "{}", text(&again[10]));
    let mut save_over = save;
    save_over["overwrite"] = json!(true);
    let (third, _) = drive_stdio(&f, &session_ops(&email, &password, &submit, save_over));
    assert_ok(&third[10], "saveTrail with overwrite");
    assert_eq!(
        std::fs::read_to_string(&path).expect("trail"),
        saved,
        "the repeated session saves the same bytes"
    );
}

#[test]
fn two_http_clients_get_separate_sessions() {
    let f = demo();
    let server = HttpServer::start(&f);
    let (email, ..) = refs(&f);
    let ops = json!([
        { "op": "call", "client": "a", "tool": "type", "args": { "text": "alice@example.com", "ref": email } },
        { "op": "call", "client": "b", "tool": "snapshot", "args": {} },
        { "op": "call", "client": "a", "tool": "snapshot", "args": {} },
        { "op": "call", "client": "b", "tool": "type", "args": { "text": "bob@example.com", "ref": email } },
        { "op": "call", "client": "a", "tool": "saveTrail", "args": { "name": "alice" } },
        { "op": "call", "client": "b", "tool": "saveTrail", "args": { "name": "bob" } },
        { "op": "call", "client": "a", "tool": "resetSession", "args": {} },
        { "op": "call", "client": "a", "tool": "snapshot", "args": {} },
        { "op": "call", "client": "a", "tool": "saveTrail", "args": { "name": "empty" } },
    ]);
    let (r, _) = drive(&["http", &server.url], &ops, &cli(&f));
    for (i, res) in r.iter().enumerate().take(7) {
        assert_ok(res, &format!("op {i}"));
    }
    // The control: client a sees its own text; b, on its own device, does not.
    assert!(text(&r[2]).contains("alice@example.com"), "{}", text(&r[2]));
    assert!(
        !text(&r[1]).contains("alice@example.com"),
        "client b saw client a's device:\n{}",
        text(&r[1])
    );
    let alice = std::fs::read_to_string(f.map_dir().join("trails/alice.trail.yaml")).expect("alice");
    let bob = std::fs::read_to_string(f.map_dir().join("trails/bob.trail.yaml")).expect("bob");
    assert!(alice.contains("alice@") && !alice.contains("bob@"), "{alice}");
    assert!(bob.contains("bob@") && !bob.contains("alice@"), "{bob}");
    // resetSession: a fresh device and an empty recording.
    assert!(!text(&r[7]).contains("alice@example.com"), "{}", text(&r[7]));
    assert_eq!(r[8]["isError"], json!(true));
    assert!(text(&r[8]).contains("nothing recorded"), "{}", text(&r[8]));
    assert!(!server.stderr().contains(CANARY));
}

#[test]
fn http_session_with_the_sdk_client_signs_in_and_hides_the_secret() {
    let f = demo();
    let server = HttpServer::start(&f);
    let (email, password, submit) = refs(&f);
    let save = json!({ "name": "over-http" });
    let (r, _) = drive(
        &["http", &server.url],
        &session_ops(&email, &password, &submit, save),
        &cli(&f),
    );
    for (i, res) in r.iter().enumerate().take(7).skip(1) {
        assert_ok(res, &format!("op {i}"));
    }
    assert!(text(&r[5]).contains("Inbox"));
    assert!(r[7]["isError"] == json!(true) && r[8]["isError"] == json!(true) && r[9]["isError"] == json!(true));
    assert_ok(&r[10], "saveTrail");
    let saved = std::fs::read_to_string(f.map_dir().join("trails/over-http.trail.yaml")).expect("saved");
    let replies = serde_json::to_string(&r).expect("json");
    for (what, hay) in [
        ("replies", replies),
        ("trail", saved),
        ("logs", f.all_output()),
        ("stderr", server.stderr()),
    ] {
        assert!(!hay.contains(CANARY), "the secret value leaked into the {what}");
    }
}

#[test]
fn a_cancelled_call_is_interrupted_and_the_session_goes_on() {
    let f = demo();
    let ops = json!([
        { "op": "call", "tool": "spin", "args": {}, "abortAfterMs": 500 },
        call("snapshot", json!({})),
    ]);
    let (r, _) = drive_stdio(&f, &ops);
    assert_eq!(r[0], json!({ "aborted": true }));
    assert_ok(&r[1], "snapshot after the cancel");
    // The server stopped the script (not only the client): its step ended as cancelled.
    let events = trailblaze_e2e::log_events(&f.out());
    let spin = events
        .iter()
        .find(|e| e["tool"] == "spin" && e.get("ok").is_some())
        .unwrap_or_else(|| panic!("the spin step finished: {events:?}"));
    assert_eq!(spin["ok"], json!(false));
    assert!(spin.to_string().contains("cancel"), "{spin}");
}

#[test]
fn control_an_uncancelled_call_runs_to_its_end() {
    let f = demo();
    let (r, _) = drive_stdio(&f, &json!([call("inboxSubjects", json!({}))]));
    assert_ok(&r[0], "inboxSubjects");
    let events = trailblaze_e2e::log_events(&f.out());
    assert!(
        events
            .iter()
            .any(|e| e["tool"] == "inboxSubjects" && e["ok"] == json!(true)),
        "{events:?}"
    );
}

#[test]
fn unknown_device_is_a_usage_error() {
    let f = demo();
    let out = cli(&f)
        .args(["mcp", "--device", "pixel"])
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown device `pixel`"));
}

/// rmcp's own client (Rust) over stdio: the same tools as `tools --json` plus the session tools,
/// a snapshot as compact text, a tap that changes the screen, an invalid call as a tool error.
#[test]
fn rmcp_client_drives_a_stdio_session() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    let f = demo();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(trailblaze_bin());
        cmd.arg("--trailmaps")
            .arg(f.root())
            .arg("mcp")
            .env("TRAILBLAZE_OUT", f.out())
            .env("TRAILBLAZE_CACHE_DIR", f.cache())
            .env("TRAILBLAZE_SECRET_DEMO_PASSWORD", CANARY)
            .stderr(Stdio::null());
        let client = ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("handshake");
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert!(names.contains(&"tap") && names.contains(&"saveTrail"), "{names:?}");
        assert!(!names.contains(&"inputText"), "hidden tools stay hidden: {names:?}");
        let text_of = |r: &rmcp::model::CallToolResult| -> String {
            r.content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let snap = client
            .call_tool(CallToolRequestParams::new("snapshot"))
            .await
            .expect("snapshot");
        let snap_text = text_of(&snap);
        assert!(snap_text.contains("hint=\"Email\""), "{snap_text}");
        let mut bad = CallToolRequestParams::new("tap");
        bad.arguments = Some(
            serde_json::json!({ "ref": "nope", "extra": CANARY })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let r = client.call_tool(bad).await.expect("a tool error is a result");
        assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
        assert!(
            text_of(&r).contains("extra") && !text_of(&r).contains(CANARY),
            "{}",
            text_of(&r)
        );
        client.cancel().await.expect("closed");
    });
}
