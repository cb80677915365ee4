//! The one HTTP exchange the providers need: POST a JSON body, read a JSON reply. Blocking (a run is
//! synchronous), with connect and read timeouts, and retries of 429 and 5xx answers and of refused
//! connections with exponential backoff, honouring `Retry-After`, for a bounded number of tries.
//!
//! Errors never hold a header (the API key travels in one) nor the request body; a provider's
//! error text is kept short and scrubbed of the key and the secrets.

use std::time::Duration;

use trailblaze_core::secret::Redaction;

/// The longest `Retry-After` honoured; a provider asking for more is an error at once.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// A reply larger than this is refused (a chat reply is a few KB).
const MAX_REPLY_BYTES: u64 = 16 << 20;
/// The most of a provider's error text an error message keeps.
const MAX_ERROR_CHARS: usize = 300;

/// Timeouts and retries.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    /// How long to wait for the reply (headers, then body) once the request is sent.
    pub read_timeout: Duration,
    /// Tries in all, the first included (at least 1).
    pub max_tries: u32,
    /// The wait before the second try; doubled for each further one, up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            max_tries: 4,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HttpError {
    #[error("no reply from {host} within {secs:.0} s (raise --llm-timeout)", secs = .after.as_secs_f64())]
    Timeout { host: String, after: Duration },
    #[error("cannot reach {host}: {why}{}", tries_note(*.tries))]
    Connect { host: String, why: String, tries: u32 },
    #[error("{host} answered HTTP {status}{}{}", .message.as_ref().map(|m| format!(": {m}")).unwrap_or_default(), tries_note(*.tries))]
    Status {
        host: String,
        status: u16,
        message: Option<String>,
        tries: u32,
    },
    #[error("{host} asked to wait {secs} s before trying again (more than {max} s)", max = MAX_RETRY_AFTER.as_secs())]
    WaitTooLong { host: String, secs: u64 },
    #[error("the exchange with {host} failed: {why}")]
    Other { host: String, why: String },
}

impl HttpError {
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

fn tries_note(tries: u32) -> String {
    if tries > 1 {
        format!(" (after {tries} tries)")
    } else {
        String::new()
    }
}

/// A blocking JSON-over-HTTP client for one provider.
pub struct HttpClient {
    agent: ureq::Agent,
    settings: HttpSettings,
    /// The API key and the secrets: scrubbed from any text a provider sends back.
    redact: Redaction,
}

impl HttpClient {
    pub fn new(settings: HttpSettings, loopback: bool, redact: Redaction) -> HttpClient {
        let mut config = ureq::Agent::config_builder()
            .timeout_connect(Some(settings.connect_timeout))
            .timeout_recv_response(Some(settings.read_timeout))
            .timeout_recv_body(Some(settings.read_timeout))
            .timeout_send_body(Some(settings.read_timeout))
            // Status codes are answers to read (and retry), not transport errors.
            .http_status_as_error(false)
            // A redirect could carry the key's header elsewhere; an API does not redirect a POST.
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(concat!("trailblaze/", env!("CARGO_PKG_VERSION")));
        if loopback {
            // A local server is never behind the user's proxy.
            config = config.proxy(None);
        }
        HttpClient {
            agent: config.build().into(),
            settings,
            redact,
        }
    }

    /// POSTs `body` (JSON) to `url` with `headers`; the reply's text on a 2xx answer.
    pub fn post_json(&self, url: &str, headers: &[(&str, &str)], body: &str) -> Result<String, HttpError> {
        let host = host_of(url);
        let tries = self.settings.max_tries.max(1);
        let mut attempt = 1;
        loop {
            let delay = match self.once(url, &host, headers, body) {
                Ok(Answer { status, text, .. }) if (200..300).contains(&status) => return Ok(text),
                Ok(a) if retryable(a.status) && attempt < tries => match a.retry_after {
                    Some(wait) if wait > MAX_RETRY_AFTER => {
                        return Err(HttpError::WaitTooLong {
                            host,
                            secs: wait.as_secs(),
                        });
                    }
                    Some(wait) => wait,
                    None => self.backoff(attempt),
                },
                Ok(a) => {
                    return Err(HttpError::Status {
                        host,
                        status: a.status,
                        message: self.error_text(&a.text),
                        tries: attempt,
                    });
                }
                Err(HttpError::Connect { why, .. }) if attempt < tries => {
                    tracing::debug!(attempt, %why, "cannot connect; trying again");
                    self.backoff(attempt)
                }
                Err(HttpError::Connect { host, why, .. }) => {
                    return Err(HttpError::Connect {
                        host,
                        why,
                        tries: attempt,
                    });
                }
                Err(e) => return Err(e),
            };
            tracing::debug!(
                attempt,
                wait_ms = delay.as_millis() as u64,
                "the provider is busy; trying again"
            );
            std::thread::sleep(delay);
            attempt += 1;
        }
    }

    fn once(&self, url: &str, host: &str, headers: &[(&str, &str)], body: &str) -> Result<Answer, HttpError> {
        let mut req = self.agent.post(url).header("content-type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).map_err(|e| self.transport(host, e))?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(|e| self.transport(host, e))?;
        Ok(Answer {
            status,
            retry_after,
            text,
        })
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.settings
            .backoff
            .saturating_mul(factor)
            .min(self.settings.max_backoff)
    }

    /// A transport error in words: its kind, never a header nor the URL's query.
    fn transport(&self, host: &str, e: ureq::Error) -> HttpError {
        let host = host.to_string();
        match e {
            ureq::Error::Timeout(_) => HttpError::Timeout {
                host,
                after: self.settings.read_timeout,
            },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => HttpError::Timeout {
                host,
                after: self.settings.read_timeout,
            },
            ureq::Error::Io(io) => HttpError::Connect {
                host,
                why: io.kind().to_string(),
                tries: 1,
            },
            ureq::Error::HostNotFound => HttpError::Connect {
                host,
                why: "host not found".into(),
                tries: 1,
            },
            ureq::Error::ConnectionFailed => HttpError::Connect {
                host,
                why: "connection failed".into(),
                tries: 1,
            },
            ureq::Error::BodyExceedsLimit(n) => HttpError::Other {
                host,
                why: format!("the reply is larger than {n} bytes"),
            },
            ureq::Error::Tls(why) => HttpError::Other {
                host,
                why: format!("TLS: {why}"),
            },
            ureq::Error::Rustls(e) => HttpError::Other {
                host,
                why: format!("TLS: {e}"),
            },
            ureq::Error::BadUri(_) => HttpError::Other {
                host,
                why: "the base URL is not a valid URL".into(),
            },
            // The rest name no value of ours; their kind is enough.
            other => HttpError::Other {
                host,
                why: self.redact.text(&other.to_string()).into_owned(),
            },
        }
    }

    /// The provider's error message (`{"error": {"message": ...}}` in both APIs), short and scrubbed.
    fn error_text(&self, body: &str) -> Option<String> {
        let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
        let message = parsed
            .as_ref()
            .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| body.to_string());
        let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.is_empty() {
            return None;
        }
        let scrubbed = self.redact.text(&one_line).into_owned();
        Some(match scrubbed.char_indices().nth(MAX_ERROR_CHARS) {
            Some((at, _)) => format!("{}…", &scrubbed[..at]),
            None => scrubbed,
        })
    }
}

struct Answer {
    status: u16,
    retry_after: Option<Duration>,
    text: String,
}

/// Too many requests, or the server's trouble: worth another try.
fn retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// `Retry-After` in seconds (OpenAI also sends `retry-after-ms`); an HTTP date is not read (the
/// backoff applies instead).
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let get = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_secs(ms / 1000.0);
    }
    duration_secs(get("retry-after")?.parse::<f64>().ok()?)
}

fn duration_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// `https://api.example.com/v1` → `api.example.com` (no scheme, path or query: a key may sit there).
pub fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // `user:password@host`: the user part is a credential too.
    authority.rsplit('@').next().unwrap_or_default().to_string()
}

/// Whether `url` points at this machine (no proxy, and no key needed).
pub fn is_loopback(url: &str) -> bool {
    let host = host_of(url);
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_never_carry_credentials_paths_or_queries() {
        assert_eq!(host_of("https://api.openai.com/v1"), "api.openai.com");
        assert_eq!(
            host_of("http://user:sk-123@127.0.0.1:8080/v1?key=sk-9"),
            "127.0.0.1:8080"
        );
        assert_eq!(host_of("localhost:1234"), "localhost:1234");
        assert!(is_loopback("http://127.0.0.1:9/v1") && is_loopback("http://localhost/v1"));
        assert!(is_loopback("http://[::1]:80/v1"));
        assert!(!is_loopback("https://api.anthropic.com/v1"));
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let c = HttpClient::new(
            HttpSettings {
                backoff: Duration::from_millis(100),
                max_backoff: Duration::from_millis(350),
                ..HttpSettings::default()
            },
            true,
            Redaction::default(),
        );
        let waits: Vec<u128> = (1..=4).map(|a| c.backoff(a).as_millis()).collect();
        assert_eq!(waits, [100, 200, 350, 350]);
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut h = ureq::http::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().expect("value"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().expect("value"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = ureq::http::HeaderMap::new();
        h.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("value"));
        assert_eq!(retry_after(&h), None, "a date falls back to the backoff");
    }

    #[test]
    fn a_providers_error_text_is_short_and_scrubbed() {
        let c = HttpClient::new(
            HttpSettings::default(),
            true,
            Redaction::new(&["sk-live-KEY".to_string()]),
        );
        let body = r#"{"error": {"message": "Incorrect API key provided: sk-live-KEY.\nSee docs."}}"#;
        assert_eq!(
            c.error_text(body).as_deref(),
            Some("Incorrect API key provided: ***. See docs.")
        );
        let long = "x".repeat(1000);
        assert_eq!(
            c.error_text(&long).map(|t| t.chars().count()),
            Some(MAX_ERROR_CHARS + 1)
        );
        assert_eq!(c.error_text(" "), None);
    }
}
