//! A web device's trace (`Device::trace_begin`/`trace_end`) of a real Chromium page on a site of
//! this test's own (127.0.0.1): its requests as HAR 1.2 (checked by npm's har-validator, in
//! tests/har-validator), its console and uncaught errors, failed requests' bodies and failures,
//! credentials masked, secrets typed into the page scrubbed, and its screencast when asked.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze::device::Device;
use trailblaze::device::spec::WebOptions;
use trailblaze::device::trace::{DeviceTrace, MAX_BODY_BYTES, TraceOptions, Video, unix_ms_now};
use trailblaze::web::device::WebDevice;
use trailblaze_e2e::repo_root;
use trailblaze_e2e::web_site::{Site, read_request, shared_browser};

/// What the page types into its secret field and then leaks (to its console and a request).
const TYPED: &str = "typed-CANARY-91c2";

const PAGE: &str = r#"<!doctype html><html><head><meta charset="utf-8"><title>trace</title></head><body>
<input id="pw" type="password"> <input id="name">
<script>
  console.log('hello', 42, { a: 1 });
  console.warn('careful');
  setTimeout(() => { throw new Error('boom-uncaught'); }, 0);
  async function run(refused) {
    await (await fetch('/missing')).text();
    await fetch(refused).catch(() => {});
    await (await fetch('/api?q=1&r=two%20words', { headers: { Authorization: 'Bearer tok-9f1e', 'X-Trace': 'visible' } })).text();
    await (await fetch('/api', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"hello":"world"}' })).text();
    await (await fetch('/old')).text();
    return 'done';
  }
</script></body></html>"#;

/// A page that changes every animation frame for a second and a half.
const ANIM: &str = r#"<!doctype html><html><body><div id="n" style="font-size:80px">0</div><script>
  const start = performance.now();
  function tick(t) { document.getElementById('n').textContent = Math.round(t);
    document.body.style.background = `hsl(${Math.round(t) % 360}, 60%, 70%)`;
    if (t - start < 1500) requestAnimationFrame(tick); }
  requestAnimationFrame(tick);
</script></body></html>"#;

/// A site on 127.0.0.1 that stops when dropped: `/page.html`, `/anim.html`, `/api` (JSON), `/old`
/// (a redirect to `/api`) and `/missing` (a 404 whose body, longer than a trace keeps, starts
/// with the request's query).
fn trace_site() -> Site {
    Site::answering(answer)
}

fn answer(stream: TcpStream) {
    let Some((target, _)) = read_request(&stream) else {
        return;
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let (status, kind, extra, body) = match path {
        "/page.html" => ("200 OK", "text/html; charset=utf-8", "", PAGE.to_string()),
        "/anim.html" => ("200 OK", "text/html; charset=utf-8", "", ANIM.to_string()),
        "/api" => ("200 OK", "application/json", "", r#"{"ok":true}"#.to_string()),
        "/old" => ("302 Found", "text/plain", "Location: /api\r\n", String::new()),
        "/missing" => (
            "404 Not Found",
            "text/plain",
            "",
            format!("not found: {query} {}", "x".repeat(100_000)),
        ),
        _ => ("404 Not Found", "text/plain", "", String::new()),
    };
    let mut out = stream;
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A port nothing listens on: connecting to it is refused.
fn refused_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("address").port()
}

fn device() -> WebDevice {
    let opts = WebOptions {
        timeout: Duration::from_secs(10),
        ..WebOptions::default()
    };
    WebDevice::open(shared_browser(), opts).expect("a page opens")
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(15)
}

/// Runs the page's requests; the trace of them, and the Unix-ms window it was kept in.
fn traced_page(d: &mut WebDevice, site: &Site, opts: TraceOptions) -> (DeviceTrace, (f64, f64)) {
    let begun = unix_ms_now();
    d.trace_begin(&opts);
    d.navigate(&site.url("page.html"), deadline()).expect("navigates");
    let refused = format!("http://127.0.0.1:{}/x", refused_port());
    let r = d
        .evaluate(&format!("run({})", json!(refused)), deadline())
        .expect("the page's requests run");
    assert_eq!(r, json!("done"));
    // The last events may trail the script's answer by a moment.
    std::thread::sleep(Duration::from_millis(300));
    let trace = d.trace_end();
    (trace, (begun, unix_ms_now()))
}

fn entry(t: &DeviceTrace, pick: impl Fn(&Value) -> bool) -> &Value {
    t.network
        .iter()
        .find(|e| pick(e))
        .unwrap_or_else(|| panic!("no such entry in {:#?}", t.network))
}

fn url_ends(e: &Value, tail: &str) -> bool {
    e["request"]["url"].as_str().is_some_and(|u| u.ends_with(tail))
}

fn header<'a>(headers: &'a Value, name: &str) -> Option<&'a str> {
    headers
        .as_array()?
        .iter()
        .find(|h| h["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))?["value"]
        .as_str()
}

#[test]
fn a_page_trace_keeps_its_console_errors_requests_and_failures_with_their_times() {
    let site = trace_site();
    let mut d = device();
    let (t, (from, to)) = traced_page(&mut d, &site, TraceOptions::default());
    let within = |ms: f64| ms >= from - 1.0 && ms <= to + 1.0;

    let hello = t
        .console
        .iter()
        .find(|l| l.text.starts_with("hello 42"))
        .unwrap_or_else(|| panic!("{:#?}", t.console));
    assert_eq!((hello.level.as_str(), hello.source.as_str()), ("log", "page"));
    let warn = t.console.iter().find(|l| l.text == "careful").expect("the warning");
    assert_eq!(warn.level, "warn");
    let boom = t
        .console
        .iter()
        .find(|l| l.source == "exception")
        .unwrap_or_else(|| panic!("no uncaught error in {:#?}", t.console));
    assert!(boom.text.contains("boom-uncaught") && boom.level == "error", "{boom:?}");
    assert!(
        t.console.iter().all(|l| within(l.unix_ms)),
        "{:#?} not in {from}..{to}",
        t.console
    );

    // The 404 has its body, cut; the refused request its failure and no response.
    let missing = entry(&t, |e| url_ends(e, "/missing"));
    assert_eq!(missing["response"]["status"], 404);
    let text = missing["response"]["content"]["text"].as_str().expect("the 404's body");
    assert!(
        text.starts_with("not found: ") && text.len() == MAX_BODY_BYTES,
        "{}",
        text.len()
    );
    assert!(missing.get("_failure").is_none(), "{missing}");
    let refused = entry(&t, |e| url_ends(e, "/x"));
    assert_eq!(refused["response"]["status"], 0);
    assert!(
        refused["_failure"]
            .as_str()
            .is_some_and(|f| f.contains("ERR_CONNECTION_REFUSED")),
        "{refused}"
    );
    // Control: a request that did not fail keeps no body.
    let api = entry(&t, |e| url_ends(e, "/api?q=1&r=two%20words"));
    assert_eq!(api["response"]["status"], 200);
    assert!(api["response"]["content"].get("text").is_none(), "{api}");
    assert_eq!(api["response"]["content"]["mimeType"], "application/json");
    assert_eq!(
        api["request"]["queryString"][1],
        json!({ "name": "r", "value": "two words" })
    );
    // Credentials read `***`; control: another header the page set keeps its value.
    assert_eq!(header(&api["request"]["headers"], "Authorization"), Some("***"));
    assert_eq!(header(&api["request"]["headers"], "X-Trace"), Some("visible"));
    assert!(
        !serde_json::to_string(&t.network)
            .unwrap_or_default()
            .contains("tok-9f1e")
    );
    let post = entry(&t, |e| e["request"]["method"] == "POST");
    assert_eq!(post["request"]["postData"]["text"], r#"{"hello":"world"}"#);
    // A redirect is an entry of its own, then the request it led to.
    let old = t.network.iter().position(|e| url_ends(e, "/old")).expect("/old");
    assert_eq!(t.network[old]["response"]["status"], 302);
    assert!(
        t.network[old]["response"]["redirectURL"]
            .as_str()
            .is_some_and(|u| u.ends_with("/api"))
    );
    assert!(
        t.network.get(old + 1).is_some_and(|e| url_ends(e, "/api")),
        "{:#?}",
        t.network
    );
    for e in &t.network {
        let at = e["_unix_ms"].as_f64().unwrap_or(0.0);
        assert!(within(at), "{e} not in {from}..{to}");
    }
    // Control: without video no frames, and no note says one is missing.
    assert!(t.video.is_none() && t.notes.is_empty(), "{:?}", t.notes);
}

/// Runs npm's har-validator on `har`; its verdict and what it said.
pub(crate) fn har_validator(har: &Value) -> (bool, String) {
    let dir = repo_root().join("tests/har-validator");
    assert!(
        dir.join("node_modules/har-validator").is_dir(),
        "needs `npm ci --prefix tests/har-validator` (test.sh runs it)"
    );
    let file = tempfile::NamedTempFile::new().expect("a temp file");
    std::fs::write(file.path(), har.to_string()).expect("write the HAR");
    let out = std::process::Command::new("node")
        .arg(dir.join("validate.js"))
        .arg(file.path())
        .output()
        .expect("node runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn the_trace_s_requests_make_a_valid_har_1_2_file() {
    let site = trace_site();
    let mut d = device();
    let (t, _) = traced_page(&mut d, &site, TraceOptions::default());
    assert!(t.network.len() >= 6, "{:#?}", t.network);
    let har = |entries: Vec<Value>| json!({ "log": { "version": "1.2", "creator": { "name": "trailblaze", "version": "test" }, "entries": entries } });
    let (valid, said) = har_validator(&har(t.network.clone()));
    assert!(valid, "{said}\n{:#?}", t.network);
    // Control: the validator refuses an entry missing a required field, or with a bad date.
    let mut broken = t.network.clone();
    if let Some(r) = broken[0]["request"].as_object_mut() {
        r.remove("method");
    }
    let (valid, said) = har_validator(&har(broken));
    assert!(!valid && said.contains("method"), "{said}");
    let mut broken = t.network.clone();
    broken[0]["startedDateTime"] = json!("yesterday");
    let (valid, said) = har_validator(&har(broken));
    assert!(!valid, "{said}");
}

#[test]
fn with_video_the_screencast_s_frames_arrive_thinned_and_timed() {
    let site = trace_site();
    let mut d = device();
    let begun = unix_ms_now();
    d.trace_begin(&TraceOptions { video: true });
    d.navigate(&site.url("anim.html"), deadline()).expect("navigates");
    std::thread::sleep(Duration::from_millis(2000));
    let t = d.trace_end();
    let ended = unix_ms_now();
    let Some(Video::Frames(frames)) = &t.video else {
        panic!("no frames: {:?}", t.notes)
    };
    // 1.5 s of animation at up to 60 frames a second, thinned to about one each 100 ms.
    assert!((5..=30).contains(&frames.len()), "{} frames", frames.len());
    assert!(
        frames
            .iter()
            .all(|f| f.mime == "image/jpeg" && f.bytes.starts_with(&[0xFF, 0xD8]))
    );
    assert!(frames.windows(2).all(|w| w[0].unix_ms < w[1].unix_ms));
    assert!(
        frames
            .iter()
            .all(|f| f.unix_ms >= begun - 1.0 && f.unix_ms <= ended + 1.0),
        "{:?} not in {begun}..{ended}",
        frames.iter().map(|f| f.unix_ms).collect::<Vec<_>>()
    );
    // Control: the same page traced without video keeps no frame.
    d.trace_begin(&TraceOptions { video: false });
    d.navigate(&site.url("anim.html"), deadline()).expect("navigates");
    std::thread::sleep(Duration::from_millis(500));
    let t = d.trace_end();
    assert!(t.video.is_none(), "{:?}", t.notes);
    assert!(t.network.iter().any(|e| url_ends(e, "/anim.html")));
}

#[test]
fn a_trace_begun_and_ended_twice_keeps_each_window_alone() {
    let site = trace_site();
    let mut d = device();
    let (first, _) = traced_page(&mut d, &site, TraceOptions::default());
    // Between traces nothing is kept.
    d.evaluate(
        "console.log('between'); fetch('/between').then(r => r.text())",
        deadline(),
    )
    .expect("evaluates");
    std::thread::sleep(Duration::from_millis(200));
    let (second, _) = traced_page(&mut d, &site, TraceOptions::default());
    for t in [&first, &second] {
        assert_eq!(t.network.iter().filter(|e| url_ends(e, "/missing")).count(), 1);
        assert_eq!(t.console.iter().filter(|l| l.text == "careful").count(), 1);
        assert!(!t.network.iter().any(|e| url_ends(e, "/between")));
        assert!(!t.console.iter().any(|l| l.text == "between"));
    }
    // Control: an end without a begin hands over nothing.
    assert!(d.trace_end().is_empty());
}

#[test]
fn what_was_typed_into_a_secret_field_is_scrubbed_from_the_console_and_bodies() {
    let site = trace_site();
    let mut d = device();
    d.navigate(&site.url("page.html"), deadline()).expect("navigates");
    d.snapshot().expect("a capture");
    d.trace_begin(&TraceOptions::default());
    d.evaluate("document.getElementById('pw').focus()", deadline())
        .expect("focus");
    d.input_text(TYPED).expect("types");
    d.secret_typed().expect("marks the field secret");
    let open = "not-a-secret-55d0";
    d.evaluate(&format!("document.getElementById('name').value = '{open}'"), deadline())
        .expect("fills the other field");
    // The page leaks both fields to its console and, in a query, to a 404's body.
    let leak = "const v = document.getElementById('pw').value + ' ' + document.getElementById('name').value; \
                console.log('typed', v); fetch('/missing?v=' + encodeURIComponent(v)).then(r => r.text())";
    d.evaluate(leak, deadline()).expect("the page leaks");
    std::thread::sleep(Duration::from_millis(300));
    let t = d.trace_end();
    let all = format!(
        "{} {}",
        serde_json::to_string(&t.network).unwrap_or_default(),
        t.console.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n")
    );
    let line = t
        .console
        .iter()
        .find(|l| l.text.starts_with("typed"))
        .unwrap_or_else(|| panic!("{:#?}", t.console));
    // Control: the field that holds no secret shows as typed, in the console and the body.
    assert_eq!(line.text, format!("typed *** {open}"));
    let body = entry(&t, |e| {
        e["request"]["url"].as_str().is_some_and(|u| u.contains("/missing?v="))
    });
    let text = body["response"]["content"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(open) && text.contains("***"),
        "{}",
        &text[..80.min(text.len())]
    );
    assert!(!all.contains(TYPED), "the typed secret is in the trace");
}

#[test]
fn a_popup_the_device_follows_is_traced_and_screencast_too() {
    let site = trace_site();
    let mut d = device();
    d.trace_begin(&TraceOptions { video: true });
    d.navigate(&site.url("page.html"), deadline()).expect("navigates");
    d.evaluate("window.open('/anim.html?popup=1'); 1", deadline())
        .expect("opens a popup");
    // Chromium announces a popup when it is ready: on a loaded machine that can take seconds.
    let until = Instant::now() + Duration::from_secs(30);
    while !d.url().ends_with("/anim.html?popup=1") {
        assert!(Instant::now() < until, "still at {}", d.url());
        std::thread::sleep(Duration::from_millis(100));
        d.snapshot().expect("a capture");
    }
    let followed = unix_ms_now();
    d.evaluate(
        "console.log('in the popup'); fetch('/missing?from=popup').then(r => r.text())",
        deadline(),
    )
    .expect("evaluates in the popup");
    std::thread::sleep(Duration::from_millis(800));
    let t = d.trace_end();
    assert!(t.console.iter().any(|l| l.text == "in the popup"), "{:#?}", t.console);
    let missing = entry(&t, |e| url_ends(e, "/missing?from=popup"));
    assert!(
        missing["response"]["content"]["text"]
            .as_str()
            .is_some_and(|b| b.starts_with("not found: from=popup"))
    );
    // The opener's own requests were kept before it opened the popup.
    assert!(t.network.iter().any(|e| url_ends(e, "/page.html")));
    let Some(Video::Frames(frames)) = &t.video else {
        panic!("no frames: {:?}", t.notes)
    };
    // The popup animates: the screencast followed it.
    assert!(frames.iter().any(|f| f.unix_ms > followed), "no frame after {followed}");
}

/// A traced page with video where `field` gets a secret typed after 1.5 s, then the page repaints;
/// the trace and when the typing began.
fn secret_on_video(field: &str) -> (DeviceTrace, f64) {
    let site = trace_site();
    let mut d = device();
    d.trace_begin(&TraceOptions { video: true });
    d.navigate(&site.url("page.html"), deadline()).expect("navigates");
    d.snapshot().expect("a capture");
    std::thread::sleep(Duration::from_millis(1500));
    let typed_at = unix_ms_now();
    d.evaluate(&format!("document.getElementById('{field}').focus()"), deadline())
        .expect("focus");
    d.input_text(TYPED).expect("types");
    d.secret_typed().expect("marks the field secret");
    d.evaluate("document.body.style.background = '#c8e'; 1", deadline())
        .expect("repaints");
    std::thread::sleep(Duration::from_millis(500));
    (d.trace_end(), typed_at)
}

#[test]
fn frames_that_may_show_a_secret_typed_into_a_text_field_are_dropped() {
    let (t, typed_at) = secret_on_video("name");
    let frames = match &t.video {
        Some(Video::Frames(f)) => f.clone(),
        _ => Vec::new(),
    };
    assert!(
        frames.iter().all(|f| f.unix_ms < typed_at),
        "{:?} after {typed_at}",
        frames.iter().map(|f| f.unix_ms).collect::<Vec<_>>()
    );
    assert!(t.notes.iter().any(|n| n.contains("shows it as text")), "{:?}", t.notes);
    // Control: a password field shows dots, and the frames after the typing are kept.
    let (t, typed_at) = secret_on_video("pw");
    let Some(Video::Frames(frames)) = &t.video else {
        panic!("no frames: {:?}", t.notes)
    };
    assert!(frames.iter().any(|f| f.unix_ms > typed_at), "no frame after the typing");
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}
