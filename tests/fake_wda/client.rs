//! A tiny WebDriver client for tests of the fake WDA (or anything speaking WDA's HTTP API): a
//! pooled connection, statuses read rather than raised, the page source parsed, taps and swipes as
//! W3C pointer actions, typing through `/wda/keys`. It panics with the request on a transport error.

use std::time::Duration;

use serde_json::{Value, json};

use super::FakeWda;

/// A tiny WebDriver client: one pooled connection, statuses read rather than raised.
pub struct Client {
    pub agent: ureq::Agent,
    pub base: String,
    pub sid: String,
}

/// An element of the page source: its type (short) and WDA's attributes.
#[derive(Debug)]
pub struct El {
    pub kind: String,
    pub name: Option<String>,
    pub label: Option<String>,
    pub value: Option<String>,
    pub placeholder: Option<String>,
    pub enabled: bool,
    pub center: (f64, f64),
}

impl El {
    pub fn says(&self, text: &str) -> bool {
        [&self.name, &self.label, &self.value, &self.placeholder]
            .iter()
            .any(|a| a.as_deref() == Some(text))
    }
}

pub fn parse(xml: &str) -> Vec<El> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("the page source is XML: {e}\n{xml}"));
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    doc.descendants()
        .filter(|n| n.is_element())
        .map(|n| {
            let s = |a: &str| n.attribute(a).map(str::to_owned);
            El {
                kind: n.tag_name().name().trim_start_matches("XCUIElementType").to_owned(),
                name: s("name"),
                label: s("label"),
                value: s("value"),
                placeholder: s("placeholderValue"),
                enabled: n.attribute("enabled") == Some("true"),
                center: (
                    num(&n, "x") + num(&n, "width") / 2.0,
                    num(&n, "y") + num(&n, "height") / 2.0,
                ),
            }
        })
        .collect()
}

impl Client {
    pub fn new(fake: &FakeWda) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        Client {
            agent,
            base: fake.url(),
            sid: String::new(),
        }
    }

    /// A client with a session on `bundle`.
    pub fn open(fake: &FakeWda, bundle: &str) -> Client {
        let mut c = Client::new(fake);
        let caps = json!({"capabilities": {"alwaysMatch": {"platformName": "iOS", "appium:bundleId": bundle}, "firstMatch": [{}]}});
        let v = c.ok("POST", "/session", Some(caps));
        c.sid = v["sessionId"].as_str().expect("a session id").to_owned();
        c
    }

    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let resp = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, body) => self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.unwrap_or(json!({})).to_string()),
        };
        let mut resp = resp.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let text = resp.body_mut().read_to_string().expect("a body");
        let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} answers JSON ({e}): {text}"));
        (resp.status().as_u16(), json)
    }

    /// The `value` of a 200 answer.
    pub fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, body);
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    /// A session route.
    pub fn s(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.sid)
    }

    pub fn source(&self) -> String {
        self.ok("GET", &self.s("/source"), None)
            .as_str()
            .expect("text")
            .to_owned()
    }

    pub fn screen(&self) -> Vec<El> {
        parse(&self.source())
    }

    pub fn has(&self, kind: &str, text: &str) -> bool {
        self.screen().iter().any(|e| e.kind == kind && e.says(text))
    }

    pub fn pointer(&self, steps: Value) {
        let body = json!({"actions": [{"type": "pointer", "id": "finger1", "parameters": {"pointerType": "touch"}, "actions": steps}]});
        self.ok("POST", &self.s("/actions"), Some(body));
    }

    /// Taps the first `kind` element whose name, label, value or placeholder is `text`.
    pub fn tap(&self, kind: &str, text: &str) {
        let screen = self.screen();
        let e = screen
            .iter()
            .find(|e| e.kind == kind && e.says(text))
            .unwrap_or_else(|| panic!("no {kind} `{text}` on the screen: {screen:#?}"));
        let (x, y) = e.center;
        self.pointer(json!([{"type": "pointerMove", "duration": 0, "x": x, "y": y}, {"type": "pointerDown", "button": 0}, {"type": "pause", "duration": 100}, {"type": "pointerUp", "button": 0}]));
    }

    pub fn swipe(&self, from: (f64, f64), to: (f64, f64)) {
        self.pointer(json!([
            {"type": "pointerMove", "duration": 0, "x": from.0, "y": from.1},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerMove", "duration": 300, "x": to.0, "y": to.1},
            {"type": "pointerUp", "button": 0},
        ]));
    }

    pub fn keys(&self, text: &str) -> (u16, Value) {
        self.call(
            "POST",
            &self.s("/wda/keys"),
            Some(json!({"value": [text], "frequency": 60})),
        )
    }

    pub fn type_text(&self, text: &str) {
        let (status, v) = self.keys(text);
        assert_eq!(status, 200, "typing {text:?}: {v}");
    }

    /// The labels of every cell, top to bottom (a list's rows).
    pub fn rows(&self) -> Vec<String> {
        self.screen()
            .into_iter()
            .filter(|e| e.kind == "Cell")
            .filter_map(|e| e.label)
            .collect()
    }
}
