//! `trailblaze mcp`: the LLM-visible tools over MCP (rmcp), on stdio or streamable HTTP on loopback.
//! Each client gets one long-lived session ([`super::live::Live`]); the server only translates MCP to
//! [`trailblaze::Session::call`] and back.

mod conns;
mod gate;
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
    /// With --http: the bearer token clients must send (`Authorization: Bearer TOKEN`); without it
    /// one is made and printed on stderr
    #[arg(long, env = "TRAILBLAZE_MCP_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// With --http: the most live sessions (clients) at once; a new one past it is refused
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_sessions: usize,
    /// With --http: a session idle this long (seconds) is closed, its device session ended
    #[arg(long, default_value_t = 1800, value_name = "SECS")]
    pub idle_timeout: u64,
    /// With --http: a connection must send a request's headers within this many seconds of its
    /// start (or of its last response), else it is closed
    #[arg(long, default_value_t = 10.0, value_name = "SECS", value_parser = super::seconds)]
    pub header_timeout: f64,
    /// With --http: the most connections waiting at once without having sent a request with the
    /// token; one more closes the oldest of them
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_pending: u32,
    /// Over stdio: serve a running session's device and recording.
    #[command(flatten)]
    pub join: super::session::JoinArg,
    #[command(flatten)]
    pub map: MapArg,
    /// The device each client's session drives, its secrets, where logs go and the per-call budgets.
    #[command(flatten)]
    pub session: SessionArgs,
    /// With a model: the tools `blaze`, `ask` and `verify`, and `assertWithAi` in the sessions.
    #[command(flatten)]
    pub llm: super::llm::LlmArgs,
    #[command(flatten)]
    pub trace: super::live::TraceArg,
}

pub fn mcp(cli: &Cli, a: &McpArgs) -> Result<(), Failure> {
    // Over HTTP each client has a session of its own: a running one is joined over stdio only.
    if a.http.is_some() && a.join.name.as_deref().is_some_and(|n| n != "none") {
        return Err(super::usage_help(
            "--session joins a running session over stdio only",
            "drop --http, or drop --session (each HTTP client gets a session of its own)",
        ));
    }
    let joined = match a.http {
        None => super::session::join(&a.join, !a.session.device.device.is_empty())?,
        Some(_) => None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = match (a.http, joined) {
        (None, Some(j)) => rt.block_on(stdio(Server::over(Box::new(super::session::client::Remote::new(j))))),
        (None, None) => {
            let shared = open_shared(cli, &a.map, &a.session, Some(&a.llm), &a.trace)?;
            rt.block_on(stdio(Server::new(shared)))
        }
        (Some(port), _) => {
            let shared = open_shared(cli, &a.map, &a.session, Some(&a.llm), &a.trace)?;
            rt.block_on(http(shared, port, a))
        }
    };
    // Sessions end with their handles; a blocked stdin read must not keep the process alive.
    rt.shutdown_background();
    served.map_err(Failure::Usage)
}

async fn stdio(server: Server) -> anyhow::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP handshake on stdio failed")?;
    running.waiting().await.context("the MCP service stopped")?;
    Ok(())
}

async fn http(shared: Arc<Shared>, port: u16, a: &McpArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let addr = listener.local_addr()?;
    let token = match a.token.as_deref().filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None => {
            let t = gate::new_token().context("cannot make a bearer token (no /dev/urandom): pass --token")?;
            err!("trailblaze mcp: bearer token {t} (clients send `Authorization: Bearer {t}`)");
            t
        }
    };
    let gate = Arc::new(gate::Gate::new(token, a.max_sessions, a.idle_timeout));
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(std::time::Duration::from_secs(a.idle_timeout.max(1)));
    // Browsers send `Origin`: only pages served from this machine's loopback may call (with the
    // token); clients that are not browsers send none. `Host` stays rmcp's loopback default.
    let config = StreamableHttpServerConfig::default().with_allowed_origins([
        "http://127.0.0.1:*",
        "http://localhost:*",
        "http://[::1]:*",
    ]);
    // One handler per MCP session: each client gets its own device and recording, and a place
    // under the cap for as long as its handler lives.
    let slots = gate.clone();
    let service = StreamableHttpService::new(
        move || {
            let slot = slots
                .take_slot()
                .ok_or_else(|| std::io::Error::other("too many live sessions (--max-sessions)"))?;
            Ok(Server::new(shared.clone()).holding(slot))
        },
        Arc::new(sessions),
        config,
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(gate, gate::check));
    err!("trailblaze mcp: listening on http://{addr}/mcp");
    let limits = conns::Limits {
        header_timeout: std::time::Duration::from_secs_f64(a.header_timeout),
        max_pending: a.max_pending as usize,
    };
    conns::serve(listener, router, limits)
        .await
        .context("the HTTP server stopped")?;
    Ok(())
}
