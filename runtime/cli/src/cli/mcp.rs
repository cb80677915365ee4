//! `trailblaze mcp`: the LLM-visible tools over MCP (rmcp), on stdio or streamable HTTP on loopback.
//! Each client gets one long-lived session ([`super::live::Live`]); the server only translates MCP to
//! [`trailblaze::Session::call`] and back.

mod server;

use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::live::{Shared, open_shared};
use super::output::err;
use super::{Cli, Failure, MapArg, SessionArgs};
use server::Server;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze mcp                          serve over stdio (what an IDE's MCP client starts)\n  trailblaze mcp --device android         each client's session drives the phone\n  trailblaze mcp --http 8765              streamable HTTP on http://127.0.0.1:8765/mcp"
)]
pub struct McpArgs {
    /// Serve streamable HTTP on 127.0.0.1:PORT (path `/mcp`; 0 picks a free port) instead of stdio.
    #[arg(long, value_name = "PORT")]
    pub http: Option<u16>,
    #[command(flatten)]
    pub map: MapArg,
    /// The device each client's session drives, its secrets, where logs go and the per-call budgets.
    #[command(flatten)]
    pub session: SessionArgs,
}

pub fn mcp(cli: &Cli, a: &McpArgs) -> Result<(), Failure> {
    let shared = open_shared(cli, &a.map, &a.session)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = match a.http {
        None => rt.block_on(stdio(shared)),
        Some(port) => rt.block_on(http(shared, port)),
    };
    // Sessions end with their handles; a blocked stdin read must not keep the process alive.
    rt.shutdown_background();
    served.map_err(Failure::Usage)
}

async fn stdio(shared: Arc<Shared>) -> anyhow::Result<()> {
    let running = Server::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP handshake on stdio failed")?;
    running.waiting().await.context("the MCP service stopped")?;
    Ok(())
}

async fn http(shared: Arc<Shared>, port: u16) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let addr = listener.local_addr()?;
    // One handler per MCP session: each client gets its own device and recording.
    let service = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    err!("trailblaze mcp: listening on http://{addr}/mcp");
    axum::serve(listener, router).await.context("the HTTP server stopped")?;
    Ok(())
}
