//! `report.html`: for a person, self-contained (inline CSS, screens as data URLs, no network).

use std::fmt::Write as _;

use super::{Outcome, RunReport, TrailReport, step_name, utc, xml_escape};

/// Standard base64 with padding, for the screens' data URLs (a dependency is not worth 15 lines).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ABC[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

const CSS: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#202124;background:#fff}
h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin:0 0 6px}
.meta,.file{color:#5f6368;font-size:13px}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600;color:#fff;vertical-align:middle}
.badge.passed{background:#188038}.badge.failed{background:#c5221f}.badge.skipped{background:#80868b}
.badge.not-recorded{background:#b06000}
table{border-collapse:collapse}td,th{text-align:left;padding:3px 10px 3px 0;vertical-align:top}
.overview td{border-top:1px solid #e8eaed}
section.trail{border:1px solid #dadce0;border-radius:8px;padding:12px 16px;margin:18px 0}
ol.steps{list-style:none;padding:0;margin:8px 0 0}
li.step{display:flex;gap:16px;border-left:5px solid #dadce0;padding:8px 12px;margin:8px 0;background:#f8f9fa}
li.step.passed{border-color:#188038}li.step.failed{border-color:#c5221f;background:#fce8e6}
li.step.skipped{border-color:#80868b}li.step.not-recorded{border-color:#b06000;background:#fef7e0}
.step-body{flex:1;min-width:0}.num{font-weight:700;margin-right:6px}.kind{color:#5f6368;font-size:12px;margin-right:6px}
.calls{font-size:13px;margin-top:6px}.calls .ko{color:#c5221f;font-weight:600}.calls .ok{color:#188038}
.calls .ok,.calls .ko,.calls .t{white-space:nowrap}
pre{margin:2px 0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace}
pre.error{color:#a50e0e;background:#fff;border:1px solid #f4c7c3;border-radius:4px;padding:6px}
img.screen{width:120px;border:1px solid #dadce0;border-radius:6px;background:#fafafa;flex:none}
";

/// `report.html`: a summary, an overview table, then each trail with its steps. XHTML-compatible
/// (every element closed, every attribute quoted), so it parses as HTML and as XML alike.
pub fn render_html(report: &RunReport) -> String {
    let e = xml_escape;
    let s = report.summary();
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n");
    out.push_str(
        "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n",
    );
    let _ = writeln!(
        out,
        "<title>trailblaze: {} of {} passed</title>\n<style>{CSS}</style>\n</head>\n<body>",
        s.passed, s.total
    );
    let _ = writeln!(out, "<h1>Trailblaze run</h1>");
    let _ = writeln!(
        out,
        "<p class=\"meta\">device {} · started {} UTC · {}</p>",
        e(&report.device),
        utc(report.started_unix_ms, ' '),
        took(report.duration_ms)
    );
    out.push_str("<p class=\"summary\">");
    let _ = write!(out, "{} trail{} ", s.total, if s.total == 1 { "" } else { "s" });
    for (n, outcome) in [
        (s.passed, Outcome::Passed),
        (s.failed, Outcome::Failed),
        (s.not_recorded, Outcome::NotRecorded),
        (s.errors, Outcome::Error),
        (s.skipped, Outcome::Skipped { reason: String::new() }),
    ] {
        if n > 0 {
            let _ = write!(
                out,
                " <span class=\"badge {}\">{n} {}</span>",
                outcome.class(),
                outcome.word()
            );
        }
    }
    out.push_str(
        "</p>\n<table class=\"overview\">\n<tr><th>outcome</th><th>trail</th><th>file</th><th>time</th></tr>\n",
    );
    for (i, t) in report.trails.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><a href=\"#trail-{}\">{}</a></td><td class=\"file\">{}</td><td>{}</td></tr>",
            badge(&t.outcome),
            i + 1,
            e(trail_name(t)),
            e(&t.file),
            took(t.duration_ms)
        );
    }
    out.push_str("</table>\n");
    for (i, t) in report.trails.iter().enumerate() {
        trail_html(&mut out, t, i + 1);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn trail_name(t: &TrailReport) -> &str {
    t.title.as_deref().or(t.id.as_deref()).unwrap_or(&t.file)
}

fn badge(o: &Outcome) -> String {
    format!("<span class=\"badge {}\">{}</span>", o.class(), o.word())
}

fn trail_html(out: &mut String, t: &TrailReport, index: usize) {
    let e = xml_escape;
    let _ = writeln!(out, "<section class=\"trail\" id=\"trail-{index}\">");
    let _ = writeln!(out, "<h2>{} {}</h2>", badge(&t.outcome), e(trail_name(t)));
    let id = t.id.as_deref().map(|id| format!(" · id {}", e(id))).unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"file\">{}{id} · {}</p>",
        e(&t.file),
        took(t.duration_ms)
    );
    if let Outcome::Skipped { reason } = &t.outcome {
        let _ = writeln!(out, "<p>Skipped: {}</p>", e(reason));
    }
    if let Some(err) = &t.error {
        let _ = writeln!(out, "<pre class=\"error\">{}</pre>", e(err));
    }
    if t.steps.is_empty() {
        out.push_str("</section>\n");
        return;
    }
    out.push_str("<ol class=\"steps\">\n");
    for s in &t.steps {
        let _ = writeln!(
            out,
            "<li class=\"step {}\">\n<div class=\"step-body\">",
            s.outcome.class()
        );
        let _ = writeln!(
            out,
            "<div><span class=\"num\">{}</span><span class=\"kind\">{}</span>{} {}</div>",
            e(&capitalised(&step_name(s))),
            e(&s.kind),
            e(&s.text),
            badge(&s.outcome)
        );
        if let Outcome::Skipped { reason } = &s.outcome {
            let _ = writeln!(out, "<div class=\"meta\">{}</div>", e(reason));
        }
        if !s.calls.is_empty() {
            out.push_str("<table class=\"calls\">\n");
            for c in &s.calls {
                let args = serde_json::to_string(&c.args).unwrap_or_default();
                let (class, word) = if c.ok { ("ok", "ok") } else { ("ko", "failed") };
                let _ = writeln!(
                    out,
                    "<tr><td><code>{}</code></td><td><pre>{}</pre></td><td class=\"{class}\">{word}</td><td class=\"t\">{}</td></tr>",
                    e(&c.tool),
                    e(&args),
                    took(c.duration_ms)
                );
                if let Some(err) = &c.error {
                    let _ = writeln!(
                        out,
                        "<tr><td></td><td colspan=\"3\"><pre class=\"error\">{}</pre></td></tr>",
                        e(err)
                    );
                }
            }
            out.push_str("</table>\n");
        }
        if let Some(err) = &s.error {
            let _ = writeln!(out, "<pre class=\"error\">{}</pre>", e(err));
        }
        out.push_str("</div>\n");
        if let Some(svg) = &s.screen_svg {
            // As an image, not inline: whatever the SVG holds, it cannot break this page's markup.
            let _ = writeln!(
                out,
                "<img class=\"screen\" alt=\"the screen after {}\" src=\"data:image/svg+xml;base64,{}\"/>",
                e(&step_name(s)),
                base64(svg.as_bytes())
            );
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n</section>\n");
}

/// A duration a person reads: `850 ms`, `12.3 s`.
fn took(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
