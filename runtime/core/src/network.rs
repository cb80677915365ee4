//! Network from scripts: `ctx.fetch(url, init)` (and `fetch` in QuickJS) is one HTTP exchange the
//! host makes for the script. Only origins the trailmap lists (`network: { allow: [...] }` in
//! `trailmap.yaml`) are reached, checked before any connection; `{{secret:NAME}}` in headers and
//! body is resolved here, at the last moment, never in the script; the response is capped in size
//! and in time (within the call's deadline); redirects are handed back, not followed (one could
//! lead off the list). The dispatcher logs each exchange (method, origin, status, time), never a
//! header or a body.

mod origin;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use trailblaze_host_functions::decode::DecodeError;
use trailblaze_host_functions::secrets::SecretStore;

pub use origin::Origin;

/// The response size cap when `network.max_response_bytes` says none: 10 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 10 << 20;
/// The time cap of one exchange when `network.timeout_ms` says none (the call's deadline may be
/// sooner, and then it is the cap).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest `network.max_response_bytes`: scripts hold a body in memory as a string.
pub const MAX_RESPONSE_BYTES: u64 = 256 << 20;

/// What a trailmap's scripts may reach: its `network:` block, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkPolicy {
    pub allow: Vec<Origin>,
    pub max_response_bytes: u64,
    pub timeout: Duration,
}

/// `network:` of a trailmap: the origins `ctx.fetch` may reach and its caps.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Origins, each exactly `scheme://host[:port]` (`http` or `https`, no path), e.g.
    /// `http://127.0.0.1:8080`. Nothing else is reached.
    #[serde(default)]
    pub allow: Vec<String>,
    /// The largest response body a script gets, in bytes (default 10 MiB).
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
    /// The longest one exchange may take, in milliseconds (default 30000); the call's own deadline
    /// is the cap when it is sooner.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Default for NetworkPolicy {
    /// Nothing is allowed.
    fn default() -> Self {
        NetworkPolicy {
            allow: Vec::new(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl NetworkPolicy {
    /// The policy `network:` declares; an error names the key (`allow[1]`, relative to `network`)
    /// and what is wrong, never the value.
    pub fn from_spec(spec: Option<&NetworkSpec>) -> Result<NetworkPolicy, Vec<(String, String)>> {
        let mut policy = NetworkPolicy::default();
        let Some(spec) = spec else {
            return Ok(policy);
        };
        let mut errors = Vec::new();
        for (i, entry) in spec.allow.iter().enumerate() {
            match Origin::parse(entry) {
                Ok(o) if !policy.allow.contains(&o) => policy.allow.push(o),
                Ok(_) => {}
                Err(e) => errors.push((format!("allow[{i}]"), e)),
            }
        }
        match spec.max_response_bytes {
            Some(n) if n == 0 || n > MAX_RESPONSE_BYTES => errors.push((
                "max_response_bytes".into(),
                format!("must be between 1 and {MAX_RESPONSE_BYTES} (bytes)"),
            )),
            Some(n) => policy.max_response_bytes = n,
            None => {}
        }
        match spec.timeout_ms {
            Some(ms) if ms == 0 || ms > 600_000 => errors.push((
                "timeout_ms".into(),
                "must be between 1 and 600000 (milliseconds)".into(),
            )),
            Some(ms) => policy.timeout = Duration::from_millis(ms),
            None => {}
        }
        if errors.is_empty() { Ok(policy) } else { Err(errors) }
    }

    pub fn allows(&self, origin: &Origin) -> bool {
        self.allow.contains(origin)
    }
}

/// What a script asks for: `ctx.fetch(url, init)` as the SDK hands it to the host.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchRequest {
    pub url: String,
    /// `GET` unless given.
    #[serde(default)]
    pub method: Option<String>,
    /// Name and value pairs, in order; values may hold `{{secret:NAME}}`.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Text; may hold `{{secret:NAME}}`.
    #[serde(default)]
    pub body: Option<String>,
}

/// What the script gets back (the SDK makes a `Response`-like object of it).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchResponse {
    pub status: u16,
    pub status_text: String,
    pub url: String,
    /// Lower-case names, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as text (UTF-8; invalid bytes become U+FFFD).
    pub body: String,
}

/// Why an exchange did not happen or did not finish. Messages name the origin, never a header
/// value, a body or the URL's path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Args(DecodeError),
    #[error("`url`: {0}")]
    Url(String),
    #[error(
        "{origin} is not in this trailmap's `network.allow` (allowed: {}); refused before connecting",
        if .allowed.is_empty() { "none".to_string() } else { .allowed.join(", ") }
    )]
    NotAllowed { origin: String, allowed: Vec<String> },
    #[error("{0}")]
    Request(String),
    #[error("{method} {origin}: no complete response within {ms} ms{why}")]
    Timeout {
        method: String,
        origin: String,
        ms: u128,
        why: &'static str,
    },
    #[error("{method} {origin}: the response body exceeds {limit} bytes (`network.max_response_bytes`)")]
    TooLarge { method: String, origin: String, limit: u64 },
    #[error("{method} {origin}: {why}")]
    Transport {
        method: String,
        origin: String,
        why: String,
    },
    /// The call's deadline passed or it was cancelled while the exchange ran.
    #[error("{method} {origin}: stopped (the call's deadline passed or it was cancelled)")]
    Stopped { method: String, origin: String },
    #[error(
        "this trailblaze was built without the `fetch` feature, so scripts cannot reach the network (the CLI has it by default)"
    )]
    NotBuilt,
}

/// `ctx.fetch`'s HTTP client (a part: `trailblaze-fetch`): makes the exchange the dispatcher
/// checked and prepared, within the call's deadline.
pub trait Fetch: Send + Sync {
    fn exchange(
        &self,
        prepared: Prepared,
        deadline: &std::sync::Arc<crate::budget::Deadline>,
    ) -> Result<FetchResponse, FetchError>;
}

/// A request checked and ready to send: secrets resolved, nothing about it left to refuse.
pub struct Prepared {
    pub method: String,
    pub url: String,
    pub origin: Origin,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub max_bytes: u64,
    pub timeout: Duration,
    /// Whether the time cap is the call's deadline (worded so in a timeout).
    pub by_deadline: bool,
}

/// The methods a script may use.
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// Whether `method` (upper case) is one a script may use.
pub fn is_method(method: &str) -> bool {
    METHODS.contains(&method)
}

/// Headers the HTTP client sets itself.
const RESERVED_HEADERS: [&str; 5] = ["host", "content-length", "transfer-encoding", "connection", "upgrade"];

/// Decodes `args` strictly (path and expected type on error, never a value).
pub fn decode_request(args: &serde_json::Value) -> Result<FetchRequest, FetchError> {
    trailblaze_host_functions::decode::decode::<FetchRequest>(args).map_err(FetchError::Args)
}

/// Checks `req` against `policy` (the origin before anything else) and resolves its secrets.
/// `remaining` is the call's time left.
pub(crate) fn prepare(
    policy: &NetworkPolicy,
    req: FetchRequest,
    secrets: &SecretStore,
    remaining: Duration,
) -> Result<Prepared, FetchError> {
    let origin = Origin::of_url(&req.url).map_err(FetchError::Url)?;
    if !policy.allows(&origin) {
        return Err(FetchError::NotAllowed {
            origin: origin.to_string(),
            allowed: policy.allow.iter().map(Origin::to_string).collect(),
        });
    }
    if crate::secret::has_placeholder(&req.url) {
        return Err(FetchError::Url(
            "`{{secret:...}}` is resolved in headers and the body only; put the secret in a header".into(),
        ));
    }
    let method = req.method.as_deref().unwrap_or("GET").to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(FetchError::Request(format!(
            "`method` must be one of {}",
            METHODS.join(", ")
        )));
    }
    let memory = crate::memory::Memory::default();
    let resolve = |text: &str, what: &str| {
        if !crate::secret::has_placeholder(text) {
            return Ok(text.to_string());
        }
        crate::placeholder::expand_str(text, &memory, secrets).map_err(|e| FetchError::Request(format!("{what}: {e}")))
    };
    let mut headers = Vec::with_capacity(req.headers.len());
    for (i, (name, value)) in req.headers.iter().enumerate() {
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(FetchError::Request(format!(
                "`headers[{i}]`: a header name is letters, digits and `!#$%&'*+-.^_`|~`"
            )));
        }
        let lower = name.to_ascii_lowercase();
        if RESERVED_HEADERS.contains(&lower.as_str()) {
            return Err(FetchError::Request(format!(
                "`headers[{i}]`: `{lower}` is set by the host's HTTP client"
            )));
        }
        let value = resolve(value, &format!("header `{lower}`"))?;
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(FetchError::Request(format!(
                "header `{lower}`: its value holds a line break or a control character"
            )));
        }
        headers.push((lower, value));
    }
    let body = match req.body {
        Some(_) if method == "GET" || method == "HEAD" => {
            return Err(FetchError::Request(format!("a {method} request cannot have a body")));
        }
        Some(b) => Some(resolve(&b, "body")?.into_bytes()),
        None => None,
    };
    let by_deadline = remaining < policy.timeout;
    Ok(Prepared {
        method,
        url: req.url,
        origin,
        headers,
        body,
        max_bytes: policy.max_response_bytes,
        timeout: remaining.min(policy.timeout),
        by_deadline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str]) -> NetworkPolicy {
        NetworkPolicy {
            allow: allow.iter().map(|o| Origin::parse(o).expect("origin")).collect(),
            ..NetworkPolicy::default()
        }
    }

    fn request(url: &str, headers: &[(&str, &str)], body: Option<&str>, method: &str) -> FetchRequest {
        FetchRequest {
            url: url.into(),
            method: Some(method.into()),
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            body: body.map(str::to_string),
        }
    }

    #[test]
    fn the_origin_is_checked_first_then_secrets_resolve_in_headers_and_body() {
        let secrets = SecretStore::from_pairs([("TOKEN".to_string(), "s3cr3t-value".to_string())]);
        let p = policy(&["http://127.0.0.1:8080"]);
        let second = Duration::from_secs(1);
        // Off the list: refused even though its header names an unknown secret (nothing resolved).
        let r = request("http://127.0.0.1:8081/x", &[("a", "{{secret:NOPE}}")], None, "GET");
        let e = prepare(&p, r, &secrets, second).err().expect("refused");
        assert!(matches!(e, FetchError::NotAllowed { .. }), "{e}");
        assert!(e.to_string().contains("http://127.0.0.1:8081 is not in"), "{e}");
        // Listed: placeholders become the value, at the host.
        let r = request(
            "http://127.0.0.1:8080/x",
            &[("Authorization", "Bearer {{secret:TOKEN}}")],
            Some("{\"t\":\"{{secret:TOKEN}}\"}"),
            "post",
        );
        // No `expect`: a prepared request holds resolved secrets and is deliberately not `Debug`.
        let Ok(ok) = prepare(&p, r, &secrets, second) else {
            panic!("prepared")
        };
        assert_eq!(ok.method, "POST");
        assert_eq!(
            ok.headers,
            vec![("authorization".to_string(), "Bearer s3cr3t-value".to_string())]
        );
        assert_eq!(ok.body.as_deref(), Some(&b"{\"t\":\"s3cr3t-value\"}"[..]));
        // The time cap is the call's deadline when that is sooner.
        assert!(ok.by_deadline && ok.timeout == second);
        for (r, want) in [
            (
                request("http://127.0.0.1:8080/", &[("Host", "x")], None, "GET"),
                "`host` is set by the host",
            ),
            (
                request("http://127.0.0.1:8080/", &[], Some("x"), "GET"),
                "a GET request cannot have a body",
            ),
            (
                request("http://127.0.0.1:8080/", &[("a b", "x")], None, "GET"),
                "`headers[0]`: a header name",
            ),
            (
                request("http://127.0.0.1:8080/", &[("a", "{{secret:NOPE}}")], None, "GET"),
                "unknown secret `NOPE`",
            ),
            (
                request("http://127.0.0.1:8080/{{secret:TOKEN}}", &[], None, "GET"),
                "headers and the body only",
            ),
            (
                request("http://127.0.0.1:8080/", &[], None, "CONNECT"),
                "`method` must be one of",
            ),
        ] {
            let e = prepare(&p, r, &secrets, second).err().expect("refused").to_string();
            assert!(e.contains(want), "{e} lacks {want}");
            assert!(!e.contains("s3cr3t-value"), "{e}");
        }
    }

    #[test]
    fn a_policy_reads_its_caps_and_names_each_bad_key() {
        let spec = NetworkSpec {
            allow: vec![
                "http://a.example.com".into(),
                "http://a.example.com/".into(),
                "http://a.example.com:80".into(),
            ],
            max_response_bytes: Some(0),
            timeout_ms: Some(700_000),
        };
        let errors = NetworkPolicy::from_spec(Some(&spec)).expect_err("refused");
        let keys: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["allow[1]", "max_response_bytes", "timeout_ms"]);
        let good = NetworkSpec {
            allow: vec!["http://a.example.com".into(), "http://a.example.com:80".into()],
            max_response_bytes: Some(10),
            timeout_ms: Some(50),
        };
        let p = NetworkPolicy::from_spec(Some(&good)).expect("valid");
        assert_eq!(p.allow.len(), 1, "the same origin twice is one");
        assert_eq!((p.max_response_bytes, p.timeout), (10, Duration::from_millis(50)));
        assert_eq!(NetworkPolicy::from_spec(None), Ok(NetworkPolicy::default()));
        assert!(NetworkPolicy::default().allow.is_empty(), "nothing by default");
    }
}
