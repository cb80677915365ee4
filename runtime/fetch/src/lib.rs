//! `ctx.fetch`'s HTTP exchange, on ureq (the crate the agent's providers use): the core checks and
//! prepares a request (the trailmap's `network.allow`, secrets, caps); this crate sends it. It runs
//! on a thread of its own so the session's thread can stop waiting the moment the call is cancelled or its deadline
//! passes; the exchange then ends by its own time cap.

use std::sync::{Arc, OnceLock, mpsc};
use std::time::Duration;

use ureq::http;

use trailblaze_core::budget::Deadline;
use trailblaze_core::network::{FetchError, FetchResponse, Prepared};

/// The HTTP client behind `ctx.fetch`.
pub struct Client;

impl trailblaze_core::parts::Fetch for Client {
    fn exchange(&self, prepared: Prepared, deadline: &Arc<Deadline>) -> Result<FetchResponse, FetchError> {
        exchange(prepared, deadline)
    }
}

/// What this crate adds to a project: `ctx.fetch` reaches the network.
pub fn parts() -> trailblaze_core::parts::Parts {
    trailblaze_core::parts::Parts::default().fetch(Client)
}

/// How often the waiting session thread looks at the deadline.
const POLL: Duration = Duration::from_millis(20);

/// Two agents: one honouring the environment's proxy, one for loopback origins (a local server is
/// never behind the user's proxy). Redirects are handed back, not followed: one could lead to an
/// origin the list does not hold, and would carry the request's headers there.
fn agent(loopback: bool) -> &'static ureq::Agent {
    static DIRECT: OnceLock<ureq::Agent> = OnceLock::new();
    static PROXIED: OnceLock<ureq::Agent> = OnceLock::new();
    let make = move || {
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(concat!("trailblaze/", env!("CARGO_PKG_VERSION")));
        if loopback {
            config = config.proxy(None);
        }
        config.build().into()
    };
    if loopback {
        DIRECT.get_or_init(make)
    } else {
        PROXIED.get_or_init(make)
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host == "[::1]" || host.starts_with("127.")
}

/// Sends `p` and reads the response, within `p.timeout`; gives up waiting when `deadline` expires.
fn exchange(p: Prepared, deadline: &Arc<Deadline>) -> Result<FetchResponse, FetchError> {
    let (method, origin) = (p.method.clone(), p.origin.to_string());
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("trailblaze-fetch".into())
        .spawn(move || {
            let _ = tx.send(send(p));
        });
    if let Err(e) = spawned {
        return Err(FetchError::Transport {
            method,
            origin,
            why: format!("no thread for the exchange: {e}"),
        });
    }
    loop {
        match rx.recv_timeout(POLL) {
            Ok(result) => return result,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(FetchError::Transport {
                    method,
                    origin,
                    why: "the exchange ended without an answer".into(),
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) if deadline.expired() => {
                return Err(FetchError::Stopped { method, origin });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

fn send(p: Prepared) -> Result<FetchResponse, FetchError> {
    let method = p.method.clone();
    let origin = p.origin.to_string();
    let transport = |why: String| FetchError::Transport {
        method: method.clone(),
        origin: origin.clone(),
        why,
    };
    let mut builder = http::Request::builder().method(p.method.as_str()).uri(p.url.as_str());
    for (name, value) in &p.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let timeout = |_| FetchError::Timeout {
        method: method.clone(),
        origin: origin.clone(),
        ms: p.timeout.as_millis(),
        why: if p.by_deadline {
            " (the call's deadline)"
        } else {
            " (`network.timeout_ms`)"
        },
    };
    // No body is `()`, not an empty one: a HEAD request may not carry a body at all.
    let sent = match p.body {
        Some(body) => run(builder.body(body), &p.origin, p.timeout),
        None => run(builder.body(()), &p.origin, p.timeout),
    };
    let response = sent.map_err(|e| match e {
        Sent::Malformed(why) => transport(why.into()),
        Sent::Failed(ureq::Error::Timeout(t)) => timeout(t),
        Sent::Failed(other) => transport(describe(&other)),
    })?;
    let status = response.status();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = response
        .into_body()
        .into_with_config()
        .limit(p.max_bytes)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(limit) => FetchError::TooLarge {
                method: method.clone(),
                origin: origin.clone(),
                limit,
            },
            ureq::Error::Timeout(t) => timeout(t),
            other => transport(format!("reading the response: {}", describe(&other))),
        })?;
    Ok(FetchResponse {
        status: status.as_u16(),
        status_text: status.canonical_reason().unwrap_or("").to_string(),
        url: p.url,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

enum Sent {
    Malformed(&'static str),
    Failed(ureq::Error),
}

/// Sends one request, after checking that the HTTP client reads the same origin from it as the
/// allowlist was checked against.
fn run<S: ureq::AsSendBody>(
    request: Result<http::Request<S>, http::Error>,
    origin: &trailblaze_core::network::Origin,
    timeout: Duration,
) -> Result<http::Response<ureq::Body>, Sent> {
    // The http crate's errors name no value, but a header's would be a secret: say which part.
    let request =
        request.map_err(|_| Sent::Malformed("the request could not be built (a header or the URL is malformed)"))?;
    let uri = request.uri();
    let default_port = if origin.scheme.as_str() == "https" { 443 } else { 80 };
    let same = uri.scheme_str() == Some(origin.scheme.as_str())
        && uri.host().map(str::to_ascii_lowercase).as_deref() == Some(origin.host.as_str())
        && uri.port_u16().unwrap_or(default_port) == origin.port;
    if !same {
        return Err(Sent::Malformed("the URL reads differently to the HTTP client; refused"));
    }
    let agent = agent(is_loopback(&origin.host));
    let request = agent.configure_request(request).timeout_global(Some(timeout)).build();
    agent.run(request).map_err(Sent::Failed)
}

/// A transport error in words that hold no URL, header or body.
fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => "the connection was refused".into(),
            std::io::ErrorKind::ConnectionReset => "the connection was reset".into(),
            std::io::ErrorKind::UnexpectedEof => "the server closed the connection early".into(),
            kind => format!("a network error ({kind})"),
        },
        ureq::Error::HostNotFound => "the host name did not resolve".into(),
        ureq::Error::ConnectionFailed => "the connection failed".into(),
        ureq::Error::Protocol(_) => "the server's answer is not valid HTTP/1.1".into(),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "the TLS handshake failed".into(),
        _ => "the exchange failed".into(),
    }
}
