//! One request as the trace keeps it while it runs (fields read off the DevTools events, cheap to
//! fill on the reader thread), and as a HAR 1.2 `log.entries` item once the trace ends.

use serde_json::{Map, Value, json};
use trailblaze_core::device::trace::MAX_BODY_BYTES;

/// Headers whose values are credentials: a trace shows them as `***`.
const MASKED: &[&str] = &["authorization", "proxy-authorization", "cookie", "set-cookie"];

/// A request from its `Network.requestWillBeSent` on.
#[derive(Debug, Default)]
pub(super) struct Req {
    /// The DevTools session it came on (the page's, or an out-of-process frame's).
    pub session: String,
    pub id: String,
    pub start_unix_ms: f64,
    /// The protocol's monotonic clock (seconds) at the start: later events' times are offsets.
    pub start_mono: f64,
    pub method: String,
    pub url: String,
    pub headers: Value,
    /// The body the page sent, cut to [`MAX_BODY_BYTES`]; `None` when it sent none.
    pub post: Option<String>,
    pub response: Option<Resp>,
    pub end_mono: Option<f64>,
    /// Bytes of body received (decoded), from `Network.dataReceived`.
    pub received: u64,
    /// All bytes over the wire, headers included (`Network.loadingFinished`).
    pub encoded: Option<f64>,
    pub failure: Option<String>,
    /// Where a redirect sent it (its response was the redirect's).
    pub redirect_to: Option<String>,
    pub body: Option<Body>,
}

#[derive(Debug, Default)]
pub(super) struct Resp {
    pub status: i64,
    pub status_text: String,
    pub protocol: String,
    pub headers: Value,
    pub mime: String,
    /// The protocol's `ResourceTiming`, when the response had one (not for a cached one).
    pub timing: Option<Value>,
    pub at_mono: f64,
    /// Bytes received when the headers had arrived.
    pub header_bytes: Option<f64>,
}

/// A failed request's body as `Network.getResponseBody` gave it, already cut.
#[derive(Debug)]
pub(super) struct Body {
    pub text: String,
    pub base64: bool,
    /// Its whole size when it was cut.
    pub cut_from: Option<usize>,
}

impl Resp {
    pub fn from_cdp(r: &Value, at_mono: f64) -> Resp {
        Resp {
            status: r.get("status").and_then(Value::as_i64).unwrap_or(0),
            status_text: s(r, "statusText"),
            protocol: s(r, "protocol"),
            headers: r.get("headers").cloned().unwrap_or(Value::Null),
            mime: s(r, "mimeType"),
            timing: r.get("timing").cloned(),
            at_mono,
            header_bytes: r.get("encodedDataLength").and_then(Value::as_f64),
        }
    }
}

impl Body {
    /// A body from `Network.getResponseBody`'s answer, cut to [`MAX_BODY_BYTES`]; a base64 body
    /// that decodes to UTF-8 is kept as text.
    pub fn from_cdp(answer: &Value) -> Body {
        let raw = answer.get("body").and_then(Value::as_str).unwrap_or("");
        if answer.get("base64Encoded").and_then(Value::as_bool) == Some(true) {
            use base64::Engine;
            let engine = base64::engine::general_purpose::STANDARD;
            if let Some(text) = engine.decode(raw).ok().and_then(|b| String::from_utf8(b).ok()) {
                return Body::cut(text, false);
            }
            return Body::cut(raw.to_string(), true);
        }
        Body::cut(raw.to_string(), false)
    }

    fn cut(text: String, base64: bool) -> Body {
        let whole = text.len();
        let text = cut(text, MAX_BODY_BYTES);
        Body {
            cut_from: (text.len() < whole).then_some(whole),
            text,
            base64,
        }
    }
}

impl Req {
    /// The Unix time (ms) of a protocol monotonic time, by this request's start.
    fn unix_of(&self, mono: f64) -> f64 {
        self.start_unix_ms + (mono - self.start_mono) * 1000.0
    }

    /// The HAR 1.2 entry, with `_unix_ms` (its start) and `_failure` (why it failed) of our own.
    pub fn entry(&self) -> Value {
        let (timings, time) = self.timings();
        let version = http_version(self.response.as_ref().map_or("", |r| r.protocol.as_str()));
        let mut request = json!({
            "method": self.method,
            "url": self.url,
            "httpVersion": version,
            "cookies": [],
            "headers": headers(&self.headers),
            "queryString": query_string(&self.url),
            "headersSize": -1,
            "bodySize": self.post.as_ref().map_or(0, |p| p.len() as i64),
        });
        if let Some(p) = &self.post {
            let mime = header(&self.headers, "content-type").unwrap_or_default();
            request["postData"] = json!({ "mimeType": mime, "text": p });
        }
        let mut entry = json!({
            "startedDateTime": iso8601(self.start_unix_ms),
            "time": time,
            "request": request,
            "response": self.response_json(version),
            "cache": {},
            "timings": timings,
            "_unix_ms": self.start_unix_ms,
        });
        if let Some(f) = &self.failure {
            entry["_failure"] = json!(f);
        }
        entry
    }

    fn response_json(&self, version: &str) -> Value {
        let Some(r) = &self.response else {
            // No response (refused, blocked, still loading): status 0, as browsers' HARs have it.
            return json!({
                "status": 0, "statusText": "", "httpVersion": version, "cookies": [], "headers": [],
                "content": { "size": 0, "mimeType": "x-unknown" }, "redirectURL": "",
                "headersSize": -1, "bodySize": -1,
            });
        };
        let mut content = json!({ "size": self.received, "mimeType": r.mime });
        if let Some(b) = &self.body {
            content["text"] = json!(b.text);
            if b.base64 {
                content["encoding"] = json!("base64");
            }
            if let Some(n) = b.cut_from {
                content["comment"] = json!(format!("cut to {} of {n} bytes", b.text.len()));
            }
        }
        let redirect = self
            .redirect_to
            .clone()
            .or_else(|| header(&r.headers, "location"))
            .unwrap_or_default();
        let body_size = match (self.encoded, r.header_bytes) {
            (Some(all), Some(head)) if all >= head => (all - head) as i64,
            _ => -1,
        };
        json!({
            "status": r.status,
            "statusText": r.status_text,
            "httpVersion": version,
            "cookies": [],
            "headers": headers(&r.headers),
            "content": content,
            "redirectURL": redirect,
            "headersSize": -1,
            "bodySize": body_size,
        })
    }

    /// HAR `timings` from the response's `ResourceTiming` (ms offsets from its `requestTime`), and
    /// the entry's `time` (their sum). `-1` where a phase did not happen or is unknown; `send`,
    /// `wait` and `receive` are never negative (HAR 1.2 requires them).
    fn timings(&self) -> (Value, f64) {
        let end = self.end_mono.map(|m| self.unix_of(m));
        let Some(r) = &self.response else {
            let total = end.map_or(0.0, |e| (e - self.start_unix_ms).max(0.0));
            let t =
                json!({ "blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": total, "receive": 0 });
            return (t, total);
        };
        let headers_at = self.unix_of(r.at_mono);
        let receive_of = |from: f64| end.map_or(0.0, |e| (e - from).max(0.0));
        let Some(t) = r.timing.as_ref().filter(|t| t.get("requestTime").is_some()) else {
            let wait = (headers_at - self.start_unix_ms).max(0.0);
            let receive = receive_of(headers_at);
            let t = json!({ "blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": wait, "receive": receive });
            return (t, wait + receive);
        };
        let f = |k: &str| t.get(k).and_then(Value::as_f64).unwrap_or(-1.0);
        let span = |a: &str, b: &str| {
            let (a, b) = (f(a), f(b));
            if a >= 0.0 && b >= a { b - a } else { -1.0 }
        };
        let base = self.unix_of(f("requestTime"));
        // Queued and stalled: from the request's start until DNS, connecting or sending began.
        let first = ["dnsStart", "connectStart", "sendStart"]
            .iter()
            .map(|k| f(k))
            .find(|v| *v >= 0.0)
            .unwrap_or(0.0);
        let blocked = (base + first - self.start_unix_ms).max(0.0);
        let dns = span("dnsStart", "dnsEnd");
        let connect = span("connectStart", "connectEnd");
        let ssl = span("sslStart", "sslEnd");
        let send = span("sendStart", "sendEnd").max(0.0);
        let headers_end = f("receiveHeadersEnd");
        let wait = if headers_end >= 0.0 && f("sendEnd") >= 0.0 {
            (headers_end - f("sendEnd")).max(0.0)
        } else {
            0.0
        };
        let receive = receive_of(if headers_end >= 0.0 {
            base + headers_end
        } else {
            headers_at
        });
        let total = [blocked, dns, connect, send, wait, receive]
            .iter()
            .filter(|v| **v > 0.0)
            .sum::<f64>();
        let t = json!({
            "blocked": blocked, "dns": dns, "connect": connect, "ssl": ssl,
            "send": send, "wait": wait, "receive": receive,
        });
        (t, total)
    }
}

/// `http/1.1` -> `HTTP/1.1`, `h2` -> `HTTP/2`; empty when unknown.
fn http_version(protocol: &str) -> &'static str {
    match protocol.to_ascii_lowercase().as_str() {
        "http/1.0" => "HTTP/1.0",
        "http/1.1" => "HTTP/1.1",
        "h2" | "http/2" | "http/2.0" => "HTTP/2",
        "h3" | "http/3" => "HTTP/3",
        "" => "",
        _ => "unknown",
    }
}

/// The protocol's `Headers` object as HAR headers, credentials masked.
pub(super) fn headers(h: &Value) -> Value {
    let Some(map) = h.as_object() else {
        return json!([]);
    };
    Value::Array(map.iter().map(|(name, v)| header_json(name, v)).collect())
}

fn header_json(name: &str, v: &Value) -> Value {
    let value = if MASKED.contains(&name.to_ascii_lowercase().as_str()) {
        "***".to_string()
    } else {
        match v {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        }
    };
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert("value".into(), json!(value));
    Value::Object(m)
}

/// A header's value, its name in any case.
fn header(h: &Value, name: &str) -> Option<String> {
    h.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_str())
        .map(str::to_string)
}

/// The URL's query as HAR `queryString` pairs, percent-decoded.
fn query_string(url: &str) -> Value {
    let query = url
        .split('#')
        .next()
        .unwrap_or("")
        .split_once('?')
        .map_or("", |(_, q)| q);
    let pairs = query.split('&').filter(|p| !p.is_empty()).map(|p| {
        let (n, v) = p.split_once('=').unwrap_or((p, ""));
        json!({ "name": decode(n), "value": decode(v) })
    });
    Value::Array(pairs.collect())
}

/// `%XX` and `+` decoded; what does not decode to UTF-8 is kept lossily.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` cut to at most `max` bytes, on a character boundary.
pub(super) fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

fn s(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

pub(super) use trailblaze_core::device::trace::iso8601;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_reads_as_the_calendar_does() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123.0), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_765_000_000_000.0), "2025-12-06T05:46:40.000Z");
    }

    #[test]
    fn credentials_read_stars_and_other_headers_their_value() {
        let h = headers(
            &json!({ "Authorization": "Bearer tok", "cookie": "a=b", "Set-Cookie": "s=1\ns=2",
            "Proxy-Authorization": "Basic x", "X-Trace": "kept" }),
        );
        let value = |n: &str| h.as_array().unwrap().iter().find(|e| e["name"] == n).unwrap()["value"].clone();
        for n in ["Authorization", "cookie", "Set-Cookie", "Proxy-Authorization"] {
            assert_eq!(value(n), "***", "{n}");
        }
        // Control: a header that is no credential keeps its value.
        assert_eq!(value("X-Trace"), "kept");
    }

    #[test]
    fn the_query_string_is_decoded_pairs() {
        assert_eq!(
            query_string("http://h/p?a=1&b=x%20y+z&c&d=%E2%9C%93%zz#f=g"),
            json!([{ "name": "a", "value": "1" }, { "name": "b", "value": "x y z" },
                   { "name": "c", "value": "" }, { "name": "d", "value": "\u{2713}%zz" }])
        );
        assert_eq!(query_string("http://h/p"), json!([]));
    }

    #[test]
    fn a_body_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_BODY_BYTES);
        let b = Body::from_cdp(&json!({ "body": long, "base64Encoded": false }));
        assert!(b.text.len() <= MAX_BODY_BYTES && b.text.len() >= MAX_BODY_BYTES - 1);
        assert_eq!(b.cut_from, Some(2 * MAX_BODY_BYTES));
        // Control: a short body is kept whole, and base64 text decodes.
        let b = Body::from_cdp(&json!({ "body": "bm90IGZvdW5k", "base64Encoded": true }));
        assert_eq!((b.text.as_str(), b.base64, b.cut_from), ("not found", false, None));
    }

    #[test]
    fn timings_follow_the_resource_timing_and_never_go_negative_where_har_forbids() {
        let mut r = Req {
            start_unix_ms: 1000.0,
            start_mono: 10.0,
            end_mono: Some(10.5),
            ..Req::default()
        };
        r.response = Some(Resp {
            at_mono: 10.3,
            timing: Some(
                json!({ "requestTime": 10.1, "dnsStart": -1, "dnsEnd": -1, "connectStart": 5,
                "connectEnd": 25, "sslStart": -1, "sslEnd": -1, "sendStart": 30, "sendEnd": 31,
                "receiveHeadersEnd": 200 }),
            ),
            ..Resp::default()
        });
        let (t, total) = r.timings();
        let g = |k: &str| t[k].as_f64().unwrap();
        assert!((g("blocked") - 105.0).abs() < 1e-6, "{t}");
        assert_eq!((g("dns"), g("ssl")), (-1.0, -1.0));
        assert!(
            (g("connect") - 20.0).abs() < 1e-6 && (g("send") - 1.0).abs() < 1e-6,
            "{t}"
        );
        assert!(
            (g("wait") - 169.0).abs() < 1e-6 && (g("receive") - 200.0).abs() < 1e-6,
            "{t}"
        );
        assert!((total - 495.0).abs() < 1e-6, "{total}");
        // Control: a request that got no response still has HAR's required, non-negative phases.
        r.response = None;
        let (t, total) = r.timings();
        assert_eq!((t["send"].as_f64(), t["receive"].as_f64()), (Some(0.0), Some(0.0)));
        assert!((total - 500.0).abs() < 1e-6);
    }
}
