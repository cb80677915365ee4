//! A secret is a secret in every encoding the page gives it back. Random secrets drawn from the
//! characters encodings change are typed with `web_fillSecret {{secret:NAME}}` into an ordinary
//! `<form method=get>` on real Chromium; the next page (tests/fixtures/web/echo.html) echoes each in
//! its URL (the form's query, the path, the fragment), cookies (percent-encoded, base64 at three
//! offsets), local and session storage (raw, JSON, ASCII-only JSON, HTML entities), the title, an
//! `Authorization: Basic` header (logged by the page) and two failed requests. Every output of the
//! run (`log.jsonl`, `report.json`, `report.html`, `junit.xml`, what the CLI printed, storage state
//! and evaluated results within them) is scanned for each secret by decoding (percent, form, JSON,
//! HTML entities, and each stacked on another) and by its base64 at each offset. Control: trails of
//! the same run typing a plain value show it in each of those encodings, so the scan can see them.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use trailblaze_e2e::web_site::{Site, require_chromium};
use trailblaze_e2e::{Rng, trailblaze_bin};

/// The characters encodings change, and a few letters (a secret starts and ends with one).
const ALPHABET: &[char] = &[
    'a', 'b', 'X', 'Y', '&', '/', '+', '=', '?', '#', '%', ' ', '"', '\'', '<', '>', 'é', 'ü', '中', '😀',
];

/// A secret of 10 to 24 characters; no two spaces in a row (a page's text and title fold them).
fn secret(rng: &mut Rng) -> String {
    let len = 10 + rng.below(15);
    let mut s = String::from("Q");
    while s.chars().count() < len - 1 {
        let c = ALPHABET[rng.below(ALPHABET.len())];
        if !(c == ' ' && s.ends_with(' ')) {
            s.push(c);
        }
    }
    s.push('k');
    s
}

/// What the control trails type, in plain sight: every character the secrets draw from (in lower
/// case, as a failed verify quotes the page).
const PLAIN: &str = "pl4in &/+=?#% \"'<>éü中😀 value";

/// A trail that signs in on the echo form with `typed` (a `web_fillSecret` or a `web_type` call),
/// reads what the page kept, then fails on purpose (the failure quotes the page's text).
fn trail(port: u16, id: usize, typed: &str) -> String {
    let script = "JSON.stringify([document.title, location.href, document.cookie, \
                  Object.assign({}, localStorage), Object.assign({}, sessionStorage)])";
    r#"config:
  id: web/echo-ID
  devices: { web: chromium }
trail:
  - step: Sign in
    recording:
      web:
        - web_navigate: { url: "http://127.0.0.1:PORT/echo-form.html" }
        - web_type: { ref: "css=#user", text: jane }
        - TYPED
        - web_click: { ref: "css=#go" }
        - web_verifyTextVisible: { text: Echoed }
  - step: Read what the page kept
    recording:
      web:
        - web_currentUrl: {}
        - web_getStorageState: {}
        - web_evaluate: { script: SCRIPT }
        - web_snapshot: { screenName: echoed }
  - step: Fail on purpose
    recording:
      web:
        - web_verifyTextVisible: { text: Not on this page }
"#
    .replace("ID", &id.to_string())
    .replace("PORT", &port.to_string())
    .replace("TYPED", typed)
    .replace("SCRIPT", &serde_json::to_string(script).expect("JSON"))
}

/// `%XX` decoded (either hex case), and `+` as a space first when `plus`; other bytes kept.
fn percent_decoded(text: &str, plus: bool) -> String {
    let b = text.as_bytes();
    let hex = |c: u8| char::from(c).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' && plus { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// JSON string escapes decoded (`\"`, `\\`, `\/`, `\n`..., `\uXXXX` and surrogate pairs).
fn json_decoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut units: Vec<u16> = Vec::new();
    let mut chars = text.chars().peekable();
    let flush = |units: &mut Vec<u16>, out: &mut String| {
        out.extend(char::decode_utf16(units.drain(..)).map(|r| r.unwrap_or('\u{FFFD}')));
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut units, &mut out);
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u16::from_str_radix(&hex, 16) {
                    Ok(u) if hex.len() == 4 => units.push(u),
                    _ => {
                        flush(&mut units, &mut out);
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(e) => {
                flush(&mut units, &mut out);
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    other => other,
                });
            }
            None => out.push('\\'),
        }
    }
    flush(&mut units, &mut out);
    out
}

/// HTML character references decoded: the five named ones, decimal and hex.
fn html_decoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest
            .char_indices()
            .take_while(|(i, _)| *i < 12)
            .find(|(_, c)| *c == ';')
            .map(|(i, _)| i);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                n if n.starts_with("#x") || n.starts_with("#X") => {
                    u32::from_str_radix(&n[2..], 16).ok().and_then(char::from_u32)
                }
                n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The base64 runs that encode `value`'s bytes alone wherever it sits in a larger buffer (each of
/// the three offsets mod 3), in both alphabets, cut to the characters no neighbour changes.
fn base64_middles(value: &str) -> Vec<String> {
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let mut out = Vec::new();
    for engine in engines {
        for before in 0..3usize {
            let mut buf = vec![0u8; before];
            buf.extend_from_slice(value.as_bytes());
            let encoded = engine.encode(&buf);
            // Whole groups of three bytes of the value only: from the first group after `before`,
            // to the last whole group.
            let start = before.div_ceil(3) * 4;
            let end = buf.len() / 3 * 4;
            if end >= start + 8 {
                out.push(encoded[start..end].to_string());
            }
        }
    }
    out
}

/// Where `value` shows in `text` and how: `raw`, and each decoding that reveals more of it than the
/// text holds raw; `base64` for a run of its base64.
fn sightings(value: &str, text: &str) -> BTreeSet<&'static str> {
    let raw = text.matches(value).count();
    let mut seen = BTreeSet::new();
    if raw > 0 {
        seen.insert("raw");
    }
    let json = json_decoded(text);
    let html = html_decoded(text);
    let views = [
        ("percent", percent_decoded(text, false)),
        ("form", percent_decoded(text, true)),
        ("json", json.clone()),
        ("json twice", json_decoded(&json)),
        ("html", html.clone()),
        ("html twice", html_decoded(&html)),
        ("json then percent", percent_decoded(&json, false)),
        ("json then form", percent_decoded(&json, true)),
        ("json then html", html_decoded(&json)),
        ("json twice then html", html_decoded(&json_decoded(&json))),
        ("html then percent", percent_decoded(&html, false)),
    ];
    for (name, view) in views {
        if view.matches(value).count() > raw {
            seen.insert(name);
        }
    }
    if base64_middles(value).iter().any(|m| text.contains(m.as_str())) {
        seen.insert("base64");
    }
    seen
}

/// Every file under `dir` but the trails (which hold the control's value and placeholders), each
/// as (name, text).
fn outputs(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).expect("a folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            outputs(&p, out);
        } else if !p.to_string_lossy().ends_with(".trail.yaml") {
            let bytes = std::fs::read(&p).expect("a file");
            out.push((p.display().to_string(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
}

#[test]
fn random_secrets_typed_into_a_page_leave_no_encoding_of_themselves_in_any_output() {
    require_chromium();
    let seed = std::env::var("TRAILBLAZE_SECRET_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EC2_E7E5_0DED_u64);
    let mut rng = Rng(seed);
    let secrets: Vec<String> = (0..6).map(|_| secret(&mut rng)).collect();
    let site = Site::start();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("trailmaps")).expect("trailmaps");
    let mut cmd = Command::new(trailblaze_bin());
    for (i, s) in secrets.iter().enumerate() {
        let typed = format!("web_fillSecret: {{ ref: \"css=#pw\", value: \"{{{{secret:PW{i}}}}}\" }}");
        std::fs::write(dir.path().join(format!("s{i}.trail.yaml")), trail(site.port, i, &typed)).expect("trail");
        cmd.env(format!("TRAILBLAZE_SECRET_PW{i}"), s);
    }
    let typed = format!(
        "web_type: {{ ref: \"css=#pw\", text: {} }}",
        serde_json::to_string(PLAIN).expect("JSON")
    );
    std::fs::write(dir.path().join("plain.trail.yaml"), trail(site.port, 99, &typed)).expect("trail");
    let out = cmd
        .current_dir(dir.path())
        .args([
            "run",
            "--json",
            "--out",
            "out",
            "--report-dir",
            "report",
            "--junit",
            "junit.xml",
            ".",
        ])
        .env("TRAILBLAZE_CACHE_DIR", dir.path().join("cache"))
        .env("TRAILBLAZE_WEB_TIMEOUT", "4")
        .env("NO_COLOR", "1")
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env_remove("TRAILBLAZE_OUT")
        .env_remove("TRAILBLAZE_DEVICE")
        .output()
        .expect("trailblaze runs");
    let mut files = vec![
        ("stdout".to_string(), String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr".to_string(), String::from_utf8_lossy(&out.stderr).into_owned()),
    ];
    outputs(dir.path(), &mut files);
    let all: String = files.iter().map(|(n, t)| format!("== {n}\n{t}\n")).collect();
    // The run did what it meant: every trail signed in and read the page, then failed on purpose.
    let report = std::fs::read_to_string(dir.path().join("report/report.json"))
        .unwrap_or_else(|e| panic!("no report.json ({e}):\n{}", files[1].1));
    let report: serde_json::Value = serde_json::from_str(&report).expect("JSON");
    let trails = report["trails"].as_array().expect("trails");
    assert_eq!(trails.len(), secrets.len() + 1, "{all}");
    for t in trails {
        assert!(
            t["steps"][1]["error"].is_null() && !t["steps"][2]["error"].is_null(),
            "signed in and read the page, then failed: {t}"
        );
    }
    // Control: the plain value shows in each encoding, in each kind of output (never raw: every
    // output escapes its quotes or its `<>`).
    let everywhere = sightings(PLAIN, &all);
    for kind in ["percent", "form", "json", "json twice", "html", "base64"] {
        assert!(
            everywhere.contains(kind),
            "control: the plain value is not seen as {kind}: {everywhere:?}"
        );
    }
    for name in [
        "report.json",
        "report.html",
        "junit.xml",
        "log.jsonl",
        "stdout",
        "stderr",
    ] {
        let text: String = files
            .iter()
            .filter(|(n, _)| n.ends_with(name))
            .map(|(_, t)| t.as_str())
            .collect();
        assert!(
            !sightings(PLAIN, &text).is_empty(),
            "control: the plain value is not in {name}"
        );
    }
    // No secret, in any encoding, in any output.
    for (name, text) in &files {
        for s in &secrets {
            // A failed verify quotes the page in lower case.
            for form in [s.clone(), s.to_lowercase()] {
                let seen = sightings(&form, text);
                assert!(seen.is_empty(), "secret {form:?} leaked into {name} as {seen:?}");
            }
        }
    }
}

#[test]
fn the_scan_sees_each_encoding_a_page_makes() {
    let v = "Q&/+ =?#%\"'<>é中😀k";
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("jane:{v}"));
    for (planted, kind) in [
        (v, "raw"),
        (
            "Q%26%2F%2B%20%3D%3F%23%25%22'%3C%3E%C3%A9%E4%B8%AD%F0%9F%98%80k",
            "percent",
        ),
        (
            "Q%26%2F%2B+%3D%3F%23%25%22%27%3C%3E%C3%A9%E4%B8%AD%F0%9F%98%80k",
            "form",
        ),
        ("Q&/+ =?#%\\\"'<>\\u00e9\\u4e2d\\ud83d\\ude00k", "json"),
        ("Q&amp;/+ =?#%&quot;&#39;&lt;&gt;&#xe9;&#x4e2d;&#x1f600;k", "html"),
        (b64.as_str(), "base64"),
    ] {
        let seen = sightings(v, &format!("x {planted} y"));
        assert!(seen.contains(kind), "{kind}: {seen:?}");
    }
    // Control: the value with one character changed, and nothing at all, are not seen.
    assert!(sightings(v, "Q%26%2F%2B%20%3D%3F%23%25%22'%3C%3E%C3%A9%E4%B8%AD%F0%9F%98%81k").is_empty());
    assert!(sightings(v, "Q*** ***k").is_empty());
}
