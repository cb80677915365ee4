//! `--device web` against real Chromium and the project's own fixture site (tests/fixtures/web/,
//! served on 127.0.0.1 by the test). Each test opens its own browser context in one shared browser,
//! as parallel runs will. Without Chromium these tests fail: `./test.sh` installs it.

mod attach;
mod leftovers;
mod lifecycle;
mod open_url;
mod original;
mod pages;
mod secret_encodings;
mod served;
mod step_notes;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze::device::spec::WebOptions;
use trailblaze::web::device::WebDevice;
use trailblaze::{CallError, Session, SessionOptions};
use trailblaze_e2e::Fixture;
use trailblaze_e2e::web_site::{Site, shared_browser, site_dir};
use trailblaze_host_functions::SecretStore;

/// The secret the tests type; it must never show up anywhere but in the page.
pub const PASSWORD: &str = "pw-CANARY-7f3a";

/// A session on a fresh page of the shared browser, with its own site, and `timeout` for waits.
pub struct Web {
    pub site: Site,
    pub session: Session,
    pub fixture: Fixture,
}

impl Web {
    pub fn new(timeout: Duration) -> Web {
        let site = Site::start();
        let fixture = Fixture::new("webtest");
        let project = fixture.project();
        let opts = WebOptions {
            timeout,
            base_dir: Some(site_dir()),
            workspace: Some(site_dir()),
            ..WebOptions::default()
        };
        let device = WebDevice::open(shared_browser(), opts).expect("a page opens");
        let secrets = SecretStore::from_pairs([("PW".to_string(), PASSWORD.to_string())]);
        let session = project
            .open_session(
                &fixture.id,
                SessionOptions {
                    device: Some(Box::new(device)),
                    out_dir: Some(fixture.out()),
                    secrets: Some(Arc::new(secrets)),
                    ..SessionOptions::default()
                },
            )
            .expect("session");
        Web { site, session, fixture }
    }

    /// A page at `path` of the site, waits of 3 s.
    pub fn at(path: &str) -> Web {
        let w = Web::new(Duration::from_secs(3));
        w.ok("web_navigate", json!({ "url": w.site.url(path) }));
        w
    }

    pub fn call(&self, tool: &str, args: Value) -> Result<Value, CallError> {
        self.session.call(tool, args)
    }

    /// Calls a tool that must pass; its text result.
    #[track_caller]
    pub fn ok(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args.clone()) {
            Ok(v) => v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()),
            Err(e) => panic!("{tool} {args} failed: {e}"),
        }
    }

    /// Calls a tool that must fail; its error.
    #[track_caller]
    pub fn fails(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args.clone()) {
            Ok(v) => panic!("{tool} {args} passed ({v}) but should have failed"),
            Err(e) => e.to_string(),
        }
    }

    /// The snapshot's text as the LLM reads it.
    pub fn snapshot_text(&self) -> String {
        let v = self.ok_value("snapshot", json!({}));
        v["text"].as_str().unwrap_or_default().to_string()
    }

    #[track_caller]
    pub fn ok_value(&self, tool: &str, args: Value) -> Value {
        self.call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args} failed: {e}"))
    }

    /// The ref of the first snapshot line that contains `needle`.
    #[track_caller]
    pub fn ref_of(&self, needle: &str) -> String {
        let text = self.snapshot_text();
        let line = text
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle} in:\n{text}"));
        let start = line.find('[').expect("a ref") + 1;
        let end = line.find(']').expect("a ref");
        line[start..end].to_string()
    }

    /// What `web_evaluate` returns for `script`.
    pub fn eval(&self, script: &str) -> String {
        self.ok("web_evaluate", json!({ "script": script }))
    }
}
