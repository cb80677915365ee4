//! Toolsets and shortcuts over MCP, on the alarm fixture (tests/fixtures/waypoints): a client's
//! `tools/list` is what the session offers; `setActiveToolSets`, and a move that brings another
//! shortcut into reach, change it and send `notifications/tools/list_changed` — to the official
//! TypeScript SDK client and to rmcp's own.

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use trailblaze_e2e::alarms_fixture::Alarms;
use trailblaze_e2e::trailblaze_bin;

fn names(r: &Value) -> Vec<String> {
    r["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn call(tool: &str, args: Value) -> Value {
    json!({ "op": "call", "tool": tool, "args": args })
}

#[test]
fn the_sdk_client_sees_toolsets_change_its_tool_list_with_a_notification() {
    let a = Alarms::new();
    let mut env = Command::new("true");
    env.env("TRAILBLAZE_OUT", a.f.out())
        .env("TRAILBLAZE_CACHE_DIR", a.f.cache())
        .env("NO_COLOR", "1");
    let bin = trailblaze_bin();
    let maps = a.home.join("trails/config/trailmaps");
    let args = [
        "stdio",
        bin.to_str().expect("utf-8"),
        "--trailmaps",
        maps.to_str().expect("utf-8"),
        "mcp",
    ];
    let ops = json!([
        { "op": "list" },
        { "op": "notifications" },
        call("assertVisible", json!({ "ref": "x" })),
        call("snapshot", json!({})),
        { "op": "notifications" },
        call("setActiveToolSets", json!({ "toolSetIds": ["verification"] })),
        { "op": "notifications" },
        { "op": "list" },
        call("alarms_homeToList", json!({})),
        { "op": "notifications" },
        { "op": "list" },
    ]);
    let (r, stderr) = super::mcp::drive(&args, &ops, &env);
    let first = names(&r[0]);
    assert!(
        first.contains(&"tap".to_string()) && first.contains(&"saveTrail".to_string()),
        "{first:?}"
    );
    assert!(
        !first.contains(&"assertVisible".to_string()),
        "verification is not declared: {first:?}"
    );
    assert!(
        first.contains(&"alarms_homeToList".to_string()),
        "the home screen's shortcut: {first:?}"
    );
    assert_eq!(r[1], json!({ "toolListChanged": 0, "capability": true }), "{stderr}");
    // A tool of an inactive toolset is refused, saying which toolset to enable.
    assert_eq!(r[2]["isError"], true);
    let refusal = r[2]["text"].as_str().unwrap_or_default();
    assert!(
        refusal.contains("`verification`") && refusal.contains("setActiveToolSets"),
        "{refusal}"
    );
    // A read-only call changes nothing: no notification.
    assert_eq!(r[4]["toolListChanged"], 0, "{r:?}");
    assert_eq!(r[5]["isError"], false, "{}", r[5]["text"]);
    assert_eq!(r[6]["toolListChanged"], 1, "{r:?}");
    let after = names(&r[7]);
    assert!(
        after.contains(&"assertVisible".to_string()) && !after.contains(&"pressBack".to_string()),
        "{after:?}"
    );
    // Moving to the alarm list brings its shortcut into reach, and takes the home one away.
    assert_eq!(r[8]["isError"], false, "{}", r[8]["text"]);
    assert_eq!(r[9]["toolListChanged"], 2, "{r:?}");
    let moved = names(&r[10]);
    assert!(
        moved.contains(&"alarms_listToPicker".to_string()) && !moved.contains(&"alarms_homeToList".to_string()),
        "{moved:?}"
    );
}

/// rmcp's client: the notification reaches its handler, and the next `tools/list` shows the change.
#[test]
fn rmcp_client_gets_the_list_changed_notification() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::{NotificationContext, RoleClient};
    use rmcp::transport::TokioChildProcess;

    #[derive(Clone, Default)]
    struct Counting(Arc<AtomicUsize>);
    impl rmcp::ClientHandler for Counting {
        async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    let a = Alarms::new();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(trailblaze_bin());
        cmd.arg("--trailmaps")
            .arg(a.home.join("trails/config/trailmaps"))
            .arg("mcp")
            .env("TRAILBLAZE_OUT", a.f.out())
            .env("TRAILBLAZE_CACHE_DIR", a.f.cache())
            .stderr(Stdio::null());
        let seen = Counting::default();
        let client = seen
            .clone()
            .serve(TokioChildProcess::new(cmd).expect("spawn"))
            .await
            .expect("handshake");
        let listed = |tools: &[rmcp::model::Tool]| tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
        let before = listed(&client.list_all_tools().await.expect("tools/list"));
        assert!(!before.contains(&"rememberText".to_string()), "{before:?}");
        let mut set = CallToolRequestParams::new("setActiveToolSets");
        set.arguments = json!({ "toolSetIds": ["memory"] }).as_object().cloned();
        let r = client.call_tool(set).await.expect("called");
        assert_ne!(r.is_error, Some(true));
        // The notification was sent before the reply; give the handler its turn.
        for _ in 0..50 {
            if seen.0.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(seen.0.load(Ordering::SeqCst), 1);
        let after = listed(&client.list_all_tools().await.expect("tools/list"));
        assert!(after.contains(&"rememberText".to_string()), "{after:?}");
        client.cancel().await.expect("closed");
    });
}
