//! One WebDriverAgent exchange: a blocking HTTP request bounded by the running call's deadline, and
//! its answer read as WDA's JSON (`{"value": ..., "sessionId": ...}`; errors `{"value": {"error",
//! "message"}}` with a 4xx/5xx status).

use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one request may take when the running call has no deadline (as android's `call_timeout`).
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes one answer may have: an iPad Pro's screenshot is ~15 MB in base64.
const MAX_BODY: u64 = 64 << 20;

/// How much of WDA's error message an error repeats (its messages may carry a long stack).
const MESSAGE_CHARS: usize = 200;

/// Why a request gave no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Fail {
    /// Not reached, not answered in time, or answered with something other than WDA's JSON.
    #[error("{0}")]
    Io(String),
    /// WebDriverAgent answered with an error of its own.
    #[error("WebDriverAgent says {}: {}", .0.error, .0.message)]
    Wda(Refusal),
}

/// WDA's error answer: the W3C error code and the first line of its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) error: String,
    pub(crate) message: String,
}

impl Refusal {
    /// The session is gone (WDA restarted, or another client replaced it).
    pub(crate) fn session_gone(&self) -> bool {
        self.error == "invalid session id"
    }
}

/// A WebDriverAgent endpoint.
#[derive(Debug)]
pub(crate) struct Wda {
    base: String,
    /// `host:port`, never the URL's credentials.
    pub(crate) endpoint: String,
    agent: ureq::Agent,
    call_timeout: Duration,
    /// The running call's wall-clock deadline: no request waits past it.
    pub(crate) until: Option<Instant>,
    /// A request went unanswered: the rest of the session fails at once instead of waiting again
    /// (a trail's screenshots and teardown would each wait out the timeout).
    pub(crate) silent: bool,
}

impl Wda {
    /// `base` is a checked `http(s)://` URL without its trailing `/` (`DeviceSpec`'s parser made it).
    pub(crate) fn new(base: &str, call_timeout: Duration) -> Wda {
        let endpoint = endpoint(base);
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(concat!("trailblaze/", env!("CARGO_PKG_VERSION")));
        // A local WDA (a simulator, or `iproxy` to a phone) is never behind the user's proxy.
        if is_loopback(&endpoint) {
            config = config.proxy(None);
        }
        Wda {
            base: base.trim_end_matches('/').to_string(),
            endpoint,
            agent: config.build().into(),
            call_timeout,
            until: None,
            silent: false,
        }
    }

    pub(crate) fn get(&mut self, path: &str) -> Result<Value, Fail> {
        self.exchange("GET", path, None, None)
    }

    pub(crate) fn post(&mut self, path: &str, body: &Value) -> Result<Value, Fail> {
        self.exchange("POST", path, Some(body.to_string()), None)
    }

    /// A `DELETE` given at most `within`, whatever the running call's deadline (for teardown).
    pub(crate) fn delete(&mut self, path: &str, within: Duration) -> Result<Value, Fail> {
        let until = self.until.take();
        let done = self.exchange("DELETE", path, None, Some(within));
        self.until = until;
        done
    }

    /// Sends one request and reads its answer. `path` may hold a session id; errors name only the
    /// method and the route with the id left out, and never a body (it may hold typed text).
    fn exchange(
        &mut self,
        method: &str,
        path: &str,
        body: Option<String>,
        cap: Option<Duration>,
    ) -> Result<Value, Fail> {
        let route = route(path);
        let _span = tracing::debug_span!("wda", %method, %route).entered();
        if self.silent {
            return Err(Fail::Io(format!(
                "{method} {route} not sent: WebDriverAgent stopped answering earlier in this session"
            )));
        }
        let left = self.until.map(|u| u.saturating_duration_since(Instant::now()));
        let (timeout, by_deadline) = match left {
            Some(l) if l < cap.unwrap_or(self.call_timeout) => (l, true),
            _ => (cap.unwrap_or(self.call_timeout), false),
        };
        if timeout.is_zero() {
            return Err(Fail::Io(format!(
                "{method} {route} not sent: the call's deadline has passed"
            )));
        }
        let sent = self.send(method, path, body, timeout);
        let unanswered = |e: ureq::Error| {
            let why = match e {
                ureq::Error::Timeout(_) if by_deadline => format!(
                    "no answer before the call's deadline ({:.1}s left): WebDriverAgent is gone or stuck",
                    timeout.as_secs_f32()
                ),
                ureq::Error::Timeout(_) => format!(
                    "no answer within {:.1}s: WebDriverAgent is gone or stuck",
                    timeout.as_secs_f32()
                ),
                other => describe(&other),
            };
            Fail::Io(format!("{method} {route}: {why}"))
        };
        let response = match sent {
            Ok(r) => r,
            Err(e) => {
                self.silent = true;
                tracing::debug!(endpoint = %self.endpoint, "WebDriverAgent request unanswered");
                return Err(unanswered(e));
            }
        };
        let status = response.status().as_u16();
        let content_type: String = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type")
            .chars()
            .take(60)
            .collect();
        let bytes = match response.into_body().into_with_config().limit(MAX_BODY).read_to_vec() {
            Ok(b) => b,
            Err(ureq::Error::BodyExceedsLimit(limit)) => {
                return Err(Fail::Io(format!("{method} {route}: the answer is over {limit} bytes")));
            }
            Err(e) => {
                self.silent = true;
                return Err(unanswered(e));
            }
        };
        read_answer(status, &bytes).map_err(|e| match e {
            Fail::Io(why) => Fail::Io(format!("{method} {route}: HTTP {status} ({content_type}): {why}")),
            wda => wda,
        })
    }
}

impl Wda {
    /// The request itself: a body is a `POST`'s, JSON; no request outlives `timeout`, its answer's
    /// body included.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        timeout: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let url = format!("{}{path}", self.base);
        match body {
            Some(body) => self
                .agent
                .post(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .content_type("application/json; charset=utf-8")
                .send(body),
            None if method == "DELETE" => self
                .agent
                .delete(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            None => self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
        }
    }
}

/// The value of WDA's answer, or its error.
fn read_answer(status: u16, bytes: &[u8]) -> Result<Value, Fail> {
    let not_wda = || Fail::Io("the answer is not WebDriverAgent's JSON (is this URL a WebDriverAgent?)".into());
    let mut answer: Value = serde_json::from_slice(bytes).map_err(|_| not_wda())?;
    let value = answer.get_mut("value").map(Value::take).ok_or_else(not_wda)?;
    if status < 400 {
        return Ok(value);
    }
    let error = value.get("error").and_then(Value::as_str).ok_or_else(not_wda)?;
    let message = value.get("message").and_then(Value::as_str).unwrap_or("");
    Err(Fail::Wda(Refusal {
        status,
        error: error.chars().take(60).collect(),
        message: first_line(message),
    }))
}

/// The first line of `text`, at most [`MESSAGE_CHARS`] characters.
pub(crate) fn first_line(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut short: String = line.chars().take(MESSAGE_CHARS).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// `path` with the session id left out (`/session/{id}/source`): what errors and traces name.
fn route(path: &str) -> String {
    match path.strip_prefix("/session/").and_then(|r| r.split_once('/')) {
        Some((_, rest)) => format!("/session/{{id}}/{rest}"),
        None if path.starts_with("/session/") => "/session/{id}".into(),
        None => path.to_string(),
    }
}

/// `host:port` of a URL, without its scheme, credentials and path.
pub(crate) fn endpoint(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit_once('@').map_or(authority, |(_, h)| h).to_string()
}

fn is_loopback(endpoint: &str) -> bool {
    let host = match endpoint.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => endpoint.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost") || host == "::1" || host.starts_with("127.")
}

/// A transport error in words that hold no URL or body.
fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                "the connection was refused (is WebDriverAgent running, and `iproxy` forwarding to a phone?)".into()
            }
            std::io::ErrorKind::ConnectionReset => "the connection was reset".into(),
            std::io::ErrorKind::UnexpectedEof => "WebDriverAgent closed the connection early".into(),
            kind => format!("a network error ({kind})"),
        },
        ureq::Error::HostNotFound => "the host name did not resolve".into(),
        ureq::Error::ConnectionFailed => "the connection failed".into(),
        ureq::Error::Protocol(_) => "the answer is not valid HTTP/1.1".into(),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "the TLS handshake failed".into(),
        _ => "the exchange failed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_endpoints_leave_out_ids_and_credentials() {
        assert_eq!(route("/session/AB-12/wda/keys"), "/session/{id}/wda/keys");
        assert_eq!(route("/session/AB-12"), "/session/{id}");
        assert_eq!(route("/status"), "/status");
        assert_eq!(endpoint("http://user:pw@10.0.0.5:8100/wd"), "10.0.0.5:8100");
        assert_eq!(endpoint("http://127.0.0.1:8100"), "127.0.0.1:8100");
        assert!(is_loopback("127.0.0.1:8100") && is_loopback("[::1]:8100") && is_loopback("LOCALHOST"));
        assert!(!is_loopback("10.0.0.5:8100") && !is_loopback("127x.example:1"));
    }

    #[test]
    fn answers_read_as_values_refusals_or_not_wda() {
        assert_eq!(
            read_answer(200, br#"{"value":{"ready":true},"sessionId":null}"#),
            Ok(serde_json::json!({"ready":true}))
        );
        let refused = read_answer(
            500,
            br#"{"value":{"error":"invalid element state","message":"no\nstack"}}"#,
        );
        let Err(Fail::Wda(r)) = refused else {
            panic!("{refused:?}")
        };
        assert_eq!((r.error.as_str(), r.message.as_str()), ("invalid element state", "no"));
        for garbage in [&b"<html>502</html>"[..], b"{}", b"[1]", b"{\"value\":1"] {
            assert!(matches!(read_answer(200, garbage), Err(Fail::Io(_))), "{garbage:?}");
        }
        // A 4xx that is not WDA's error shape is not WDA's answer either.
        assert!(matches!(read_answer(404, br#"{"value":"nope"}"#), Err(Fail::Io(_))));
        let long = "x".repeat(500);
        assert_eq!(first_line(&long).chars().count(), MESSAGE_CHARS + 1);
    }
}
