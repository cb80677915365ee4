//! The rmcp handler: lists the catalog's tool definitions plus the session tools, and runs each call
//! on a blocking thread against the client's [`Live`] session, cancelling it when the client asks.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use crate::cli::live::{Backend, Live, Shared};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

#[derive(Clone)]
pub struct Server {
    live: Arc<Mutex<Box<dyn Backend>>>,
    /// What the resources read: the server's, never waiting for a running call's lock on `live`;
    /// none when the calls go to a running session (`mcp --session`).
    shared: Option<Arc<Shared>>,
    /// Cancels the client's running call (a no-op until it has begun).
    cancel: Arc<dyn Fn() + Send + Sync>,
    /// The tool names the client was last told of: a call that changes them (`setActiveToolSets`, a
    /// move to another waypoint) is followed by `notifications/tools/list_changed`.
    listed: Arc<Mutex<Vec<String>>>,
    /// Over HTTP, its place under the session cap, given back when the last clone is dropped.
    _slot: Option<Arc<super::gate::Slot>>,
}

impl Server {
    pub fn new(shared: Arc<Shared>) -> Server {
        Server {
            shared: Some(shared.clone()),
            ..Server::over(Box::new(Live::new(shared, Arc::new(Mutex::new(None)))))
        }
    }

    /// A server whose calls go to `backend`: a session of its own, or a running one joined.
    pub fn over(backend: Box<dyn Backend>) -> Server {
        let cancel: Arc<dyn Fn() + Send + Sync> = Arc::from(backend.canceller());
        Server {
            live: Arc::new(Mutex::new(backend)),
            shared: None,
            cancel,
            listed: Arc::default(),
            _slot: None,
        }
    }

    /// This server, holding `slot` for as long as it lives.
    pub fn holding(self, slot: super::gate::Slot) -> Server {
        Server {
            _slot: Some(Arc::new(slot)),
            ..self
        }
    }
}

/// The client's session's offered tools, then the session tools.
fn tools_of(live: &mut dyn Backend) -> Vec<Tool> {
    live.tools().into_iter().map(|(n, d, s)| tool(n, d, s)).collect()
}

fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
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
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("trailblaze", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Drive the app on a live device: `snapshot` shows the screen with refs like [y778]; act \
                 with `tap`/`type` by ref. The session keeps its state across calls and is recorded; \
                 `saveTrail` writes it as a replayable trail. Pass secrets as {{secret:NAME}}. \
                 `listTrails`, `readTrail` and `runTrail` work with the workspace's trails; the resources \
                 trailblaze://devices and trailblaze://trailmaps describe the devices and trailmaps.",
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
        let live = self.live.clone();
        // Blocking: a started session answers on its own thread.
        let tools = tokio::task::spawn_blocking(move || match live.lock() {
            Ok(mut l) => tools_of(&mut **l),
            Err(p) => tools_of(&mut **p.into_inner()),
        })
        .await
        .map_err(|_| ErrorData::internal_error("listing the tools failed", None))?;
        if let Ok(mut listed) = self.listed.lock() {
            *listed = names(&tools);
        }
        Ok(ListToolsResult::with_all_items(tools))
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
        let mut job = tokio::task::spawn_blocking(move || {
            let mut l = match live.lock() {
                Ok(l) => l,
                Err(p) => p.into_inner(),
            };
            let reply = l.call(&name, args);
            // Most calls cannot change the list: only those are followed by a fresh one.
            let now = l.offer_may_change(&name).then(|| names(&tools_of(&mut **l)));
            (reply, now)
        });
        let reply = tokio::select! {
            r = &mut job => r,
            _ = context.ct.cancelled() => loop {
                // A cancel is a no-op until the call has begun (the session may still be starting),
                // so it is repeated until the call ends.
                (self.cancel)();
                if let Ok(r) = tokio::time::timeout(std::time::Duration::from_millis(50), &mut job).await {
                    break r;
                }
            }
        };
        let (reply, now) = reply.map_err(|_| ErrorData::internal_error("the tool call's thread failed", None))?;
        let changed = now.is_some_and(|now| {
            self.listed.lock().is_ok_and(|mut listed| {
                let changed = *listed != now;
                *listed = now;
                changed
            })
        });
        if changed {
            // Best effort: a client that cannot take it still gets the reply.
            let _ = context.peer.notify_tool_list_changed().await;
        }
        let content = vec![ContentBlock::text(reply.text)];
        Ok(if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .shared
            .as_ref()
            .map(|s| s.resources())
            .unwrap_or_default()
            .into_iter()
            .map(|(uri, name, description)| {
                Resource::new(uri, name)
                    .with_description(description)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("trailblaze://trailmaps/{id}", "trailmap")
            .with_description("One trailmap: its folder, platforms, app, tools and trails (JSON).")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let shared = self.shared.clone();
        let uri = request.uri;
        // Blocking: listing devices asks the adb server, and a trailmap's tools may be built now.
        let read = {
            let uri = uri.clone();
            tokio::task::spawn_blocking(move || shared.and_then(|s| s.read_resource(&uri)))
        }
        .await
        .map_err(|_| ErrorData::internal_error("reading the resource failed", None))?;
        match read {
            Some(Ok(text)) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, uri).with_mime_type("application/json"),
            ])
            .into()),
            Some(Err(e)) => Err(ErrorData::internal_error(e, None)),
            // The URI is the client's own text: not repeated (the tools' rule for arguments).
            None => Err(ErrorData::resource_not_found(
                "no such resource (resources/list lists them: trailblaze://devices, trailblaze://trailmaps, \
                 trailblaze://trailmaps/{id})",
                None,
            )),
        }
    }
}
