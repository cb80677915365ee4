//! The device's own file server, through a real page: it serves the folder of the page a trail
//! opened and nothing else (no secrets file, no dotfile, no other workspace file), only to its own
//! `Host` and token; and a navigation opens no browser-internal page. Each refusal sits beside a
//! page of the same site that loads.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze::device::spec::WebOptions;
use trailblaze::web::device::WebDevice;
use trailblaze::{Session, SessionOptions};
use trailblaze_e2e::Fixture;
use trailblaze_e2e::web_site::shared_browser;

/// A workspace: `trailmaps/` (its anchor), `trails/` (the trail's folder), `site/` (the pages, a
/// `.env`, a secrets file, a dot-folder) and, beside the site, a secrets file and notes.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let w = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("dirs");
        std::fs::write(p, text).expect("file");
    };
    w("trailmaps/.keep", "");
    w("trails/.keep", "");
    w(
        "site/index.html",
        "<!doctype html><title>Site home</title><h1>Site home</h1>",
    );
    w("site/about.html", "<!doctype html><title>About</title><h1>About</h1>");
    w("site/.env", "API_TOKEN=env-CANARY");
    w("site/.git/config", "[core] git-CANARY");
    w("site/site.secrets", "PW=site-CANARY");
    w("ws.secrets", "PW=ws-CANARY");
    w("notes.txt", "notes-CANARY");
    dir
}

/// A session on a fresh page whose trail lies in `ws/trails`.
fn session(ws: &std::path::Path, fixture: &Fixture) -> Session {
    let opts = WebOptions {
        timeout: Duration::from_secs(5),
        base_dir: Some(ws.join("trails")),
        workspace: Some(ws.to_path_buf()),
        ..WebOptions::default()
    };
    let device = WebDevice::open(shared_browser(), opts).expect("a page opens");
    fixture
        .project()
        .open_session(
            &fixture.id,
            SessionOptions {
                device: Some(Box::new(device)),
                out_dir: Some(fixture.out()),
                ..SessionOptions::default()
            },
        )
        .expect("session")
}

fn text(v: Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}

#[track_caller]
fn ok(s: &Session, tool: &str, args: Value) -> String {
    text(
        s.call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}")),
    )
}

#[track_caller]
fn fails(s: &Session, tool: &str, args: Value) -> String {
    match s.call(tool, args.clone()) {
        Ok(v) => panic!("{tool} {args} passed ({v}) but should have failed"),
        Err(e) => e.to_string(),
    }
}

/// One GET over TCP with `host`: the status line and the body.
fn get(port: u16, path: &str, host: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").expect("write");
    let mut all = String::new();
    s.read_to_string(&mut all).expect("read");
    let status = all.lines().next().unwrap_or_default().to_string();
    (
        status,
        all.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default(),
    )
}

#[test]
fn the_device_serves_the_opened_pages_folder_to_its_own_host_and_token_only() {
    let ws = workspace();
    let fixture = Fixture::new("served");
    let s = session(ws.path(), &fixture);
    ok(&s, "web_navigate", json!({ "url": "../site/index.html" }));
    let url = ok(&s, "web_currentUrl", json!({}));
    // http://127.0.0.1:PORT/TOKEN/site/index.html
    let rest = url.strip_prefix("http://127.0.0.1:").expect(&url);
    let (port, path) = rest.split_once('/').expect(&url);
    let port: u16 = port.parse().expect("port");
    let token = path.split('/').next().expect("token").to_string();
    assert_eq!(token.len(), 32, "{url}");
    assert_eq!(path, format!("{token}/site/index.html"));
    let host = format!("127.0.0.1:{port}");
    let at = |p: &str| format!("/{token}/{p}");
    // Controls: the site's pages, by address and by `localhost`.
    assert_eq!(get(port, &at("site/index.html"), &host).0, "HTTP/1.1 200 OK");
    assert_eq!(
        get(port, &at("site/about.html"), &format!("localhost:{port}")).0,
        "HTTP/1.1 200 OK"
    );
    // Private files in the site, and workspace files outside it.
    for p in [
        "site/.env",
        "site/.git/config",
        "site/site.secrets",
        "ws.secrets",
        "notes.txt",
        "site/../notes.txt",
    ] {
        let (status, body) = get(port, &at(p), &host);
        assert_eq!(status, "HTTP/1.1 404 Not Found", "{p}");
        assert!(!body.contains("CANARY"), "{p}: {body}");
    }
    // Another Host (a DNS-rebinding page sends its own name), no token, a wrong one.
    let (status, body) = get(port, &at("site/index.html"), &format!("rebound.example:{port}"));
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    assert!(!body.contains("Site home"));
    assert_eq!(get(port, "/site/index.html", &host).0, "HTTP/1.1 404 Not Found");
    let wrong: String = token.chars().rev().collect();
    assert_eq!(
        get(port, &format!("/{wrong}/site/index.html"), &host).0,
        "HTTP/1.1 404 Not Found"
    );
    // The page itself can load its site's files and none of the rest.
    let status = |p: &str| {
        ok(
            &s,
            "web_evaluate",
            json!({ "script": format!("fetch('{p}').then(r => r.status)") }),
        )
    };
    assert_eq!(status("about.html"), "200");
    for p in [".env", "site.secrets", "../ws.secrets", "../notes.txt"] {
        assert_eq!(status(p), "404", "{p}");
    }
    // Navigating to them is refused before the browser is asked; a page of the site still opens.
    for p in [
        "../site/.env",
        "../ws.secrets",
        "../site/site.secrets",
        "../site/.git/config",
    ] {
        let e = fails(&s, "web_navigate", json!({ "url": p }));
        assert!(e.contains("never served"), "{p}: {e}");
        assert!(!e.contains("CANARY"), "{e}");
    }
    ok(&s, "web_navigate", json!({ "url": "../site/about.html" }));
    ok(&s, "web_verifyTextVisible", json!({ "text": "About" }));
}

#[test]
fn navigations_open_no_browser_internal_page() {
    let ws = workspace();
    let fixture = Fixture::new("schemes");
    let s = session(ws.path(), &fixture);
    ok(&s, "web_navigate", json!({ "url": "../site/index.html" }));
    for url in [
        "chrome://version",
        "CHROME://version",
        " chrome://settings",
        "devtools://devtools/bundled/inspector.html",
        "chrome-extension://abcdefghijklmnop/page.html",
        "view-source:https://example.com",
        "javascript:document.title='x'",
        "data:text/html,<h1>x</h1>",
        "about:version",
    ] {
        for (tool, args) in [
            ("web_navigate", json!({ "url": url })),
            ("openUrl", json!({ "url": url })),
            ("launchApp", json!({ "appId": url })),
        ] {
            let e = fails(&s, tool, args);
            assert!(e.contains("URLs are not opened"), "{tool} {url}: {e}");
        }
        // The page stayed where it was.
        assert!(
            ok(&s, "web_currentUrl", json!({})).ends_with("/site/index.html"),
            "{url}"
        );
    }
    // Controls: about:blank and a web page open; the trail's pages too.
    ok(&s, "web_navigate", json!({ "url": "about:blank" }));
    assert_eq!(ok(&s, "web_currentUrl", json!({})), "about:blank");
    ok(&s, "openUrl", json!({ "url": "../site/about.html" }));
    ok(&s, "web_verifyTextVisible", json!({ "text": "About" }));
}

/// Through the CLI: the run's `--secrets` file, named like any file and lying in the site folder, is
/// refused as a page; a file of the same kind beside it opens (the control).
#[test]
fn the_runs_secrets_file_is_not_served_whatever_its_name() {
    trailblaze_e2e::web_site::require_chromium();
    let open = |file: &str| {
        let dir = super::lifecycle::with_steps(
            "",
            &format!(
                "  - step: Open a text file\n    recording:\n      web:\n        - web_navigate: {{ url: site/{file} }}\n"
            ),
        );
        std::fs::write(dir.path().join("site/creds.txt"), "SITE_PW=creds-CANARY\n").expect("secrets");
        std::fs::write(dir.path().join("site/plain.txt"), "plain\n").expect("file");
        let m = super::lifecycle::mark("secrets-file");
        let out = super::lifecycle::trailblaze(
            dir.path(),
            &m,
            &["run", "--secrets", "site/creds.txt", "web.trail.yaml"],
        )
        .output()
        .expect("trailblaze runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (ok, text) = open("plain.txt");
    assert!(ok, "{text}");
    let (ok, text) = open("creds.txt");
    assert!(!ok, "{text}");
    assert!(text.contains("`--secrets` file"), "{text}");
    assert!(!text.contains("creds-CANARY"), "{text}");
}
