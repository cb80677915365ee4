//! The rmcp handler: lists the catalog's tool definitions plus the session tools, and runs each call
//! on a blocking thread against the client's [`Live`] session, cancelling it when the client asks.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use trailblaze::CancelHandle;

use crate::cli::live::{Live, Shared, session_tool_definitions};

#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    live: Arc<Mutex<Live>>,
    cancel: Arc<Mutex<Option<CancelHandle>>>,
}

impl Server {
    pub fn new(shared: Arc<Shared>) -> Server {
        let cancel = Arc::new(Mutex::new(None));
        let live = Arc::new(Mutex::new(Live::new(shared.clone(), cancel.clone())));
        Server { shared, live, cancel }
    }

    fn tools(&self) -> Vec<Tool> {
        // Every device `mcp` drives (the sim, an adb phone) is an Android one.
        let defs = self
            .shared
            .catalog
            .tool_definitions_on(trailblaze::device::Platform::Android);
        let catalog = defs.into_iter().map(|d| tool(d.name, d.description, d.input_schema));
        let session = session_tool_definitions()
            .into_iter()
            .map(|(n, d, s)| tool(n.to_string(), d.to_string(), s));
        catalog.chain(session).collect()
    }
}

fn tool(name: String, description: String, schema: Value) -> Tool {
    let schema = match schema {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    Tool::new(name, description, Arc::new(schema))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("trailblaze", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Drive the app on a live device: `snapshot` shows the screen with refs like [y778]; act \
                 with `tap`/`type` by ref. The session keeps its state across calls and is recorded; \
                 `saveTrail` writes it as a replayable trail. Pass secrets as {{secret:NAME}}.",
            )
    }

    /// Up to 2025-11-25: from 2026-07-28 on streamable HTTP has no sessions, and each client needs
    /// one long-lived session (its device keeps its state across calls).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        let live = self.live.clone();
        // Calls block (the session runs on its own thread); one client's calls run one at a time.
        let mut job = tokio::task::spawn_blocking(move || match live.lock() {
            Ok(mut l) => l.call(&name, args),
            Err(p) => p.into_inner().call(&name, args),
        });
        let reply = tokio::select! {
            r = &mut job => r,
            _ = context.ct.cancelled() => loop {
                // A cancel is a no-op until the call has begun (the session may still be starting),
                // so it is repeated until the call ends.
                if let Some(c) = self.cancel.lock().ok().and_then(|c| c.clone()) {
                    c.cancel();
                }
                if let Ok(r) = tokio::time::timeout(std::time::Duration::from_millis(50), &mut job).await {
                    break r;
                }
            }
        };
        let reply = reply.map_err(|_| ErrorData::internal_error("the tool call's thread failed", None))?;
        let content = vec![ContentBlock::text(reply.text)];
        Ok(if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}
