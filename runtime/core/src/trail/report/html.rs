//! `report.html`: for a person, self-contained but for the run's own files (inline CSS and script;
//! screens from `screens/`, logs from each trail's folder, by relative path; no network). Works without
//! script too: trails and screens open with `<details>`, "failures only" is a CSS checkbox.

use std::fmt::Write as _;

use super::timeline::{took, write_took};
use super::{
    AgentReport, CallReport, Outcome, RunReport, StepReport, TrailReport, step_name, utc, write_step_name, xml_escape,
};

const CSS: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#202124;background:#fff}
h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin:0;display:inline}
.meta,.file,.where{color:#5f6368;font-size:13px}.where{margin-left:8px;font-family:ui-monospace,monospace}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600;color:#fff;vertical-align:middle}
.badge.passed{background:#188038}.badge.failed{background:#c5221f}.badge.skipped{background:#80868b}
.badge.not-recorded{background:#b06000}.badge.error{background:#7b1fa2}.badge.agent{background:#1a73e8}
div.agent{border-left:3px solid #1a73e8;background:#e8f0fe;padding:6px 10px;margin:6px 0;font-size:13px}
div.agent ol.turns{margin:4px 0;padding-left:20px}div.agent q{font-style:italic}
table{border-collapse:collapse}td,th{text-align:left;padding:3px 10px 3px 0;vertical-align:top}
.overview td{border-top:1px solid #e8eaed}
details.trail{border:1px solid #dadce0;border-radius:8px;padding:12px 16px;margin:18px 0}
details.trail>summary{cursor:pointer}
#failures-only:checked~table tr.passed,#failures-only:checked~table tr.skipped,
#failures-only:checked~details.trail.passed,#failures-only:checked~details.trail.skipped{display:none}
ol.steps{list-style:none;padding:0;margin:8px 0 0}
li.step{display:flex;gap:16px;border-left:5px solid #dadce0;padding:8px 12px;margin:8px 0;background:#f8f9fa}
li.step.passed{border-color:#188038}li.step.failed,li.step.error{border-color:#c5221f;background:#fce8e6}
li.step.skipped{border-color:#80868b}li.step.not-recorded{border-color:#b06000;background:#fef7e0}
.step-body{flex:1;min-width:0}.num{font-weight:700;margin-right:6px}.kind{color:#5f6368;font-size:12px;margin-right:6px}
.attempts{color:#b06000;font-size:12px;font-weight:600;margin-left:8px}
ol.calls{list-style:none;font-size:13px;margin:6px 0 0;padding:0}ol.calls ol.calls{margin:2px 0 2px 6px;padding-left:12px;border-left:2px solid #dadce0}
li.call>.head{display:flex;gap:10px;align-items:baseline}li.call .ko{color:#c5221f;font-weight:600}li.call .ok{color:#188038}
li.call .ok,li.call .ko,li.call .t{white-space:nowrap}
pre{margin:2px 0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace}
pre.error{color:#a50e0e;background:#fff;border:1px solid #f4c7c3;border-radius:4px;padding:6px}
details.screen{flex:none}details.screen>summary{list-style:none;cursor:zoom-in}details.screen>summary::-webkit-details-marker{display:none}
.shot{position:relative;display:inline-block;line-height:0}
.shot img{width:120px;border:1px solid #dadce0;border-radius:6px;background:#fafafa}
.tap{position:absolute;width:14px;height:14px;margin:-9px 0 0 -9px;border:2px solid #fff;border-radius:50%;background:#e8710a;box-shadow:0 0 0 2px #e8710a}
details.screen[open]>summary{position:fixed;inset:0;z-index:10;display:flex;align-items:center;justify-content:center;background:rgba(32,33,36,.8);cursor:zoom-out}
details.screen[open] .shot img{width:auto;height:auto;max-width:92vw;max-height:92vh}
.storyboard{display:flex;gap:12px;align-items:flex-start;margin:10px 0}
.storyboard img.animation{width:150px;flex:none;border:1px solid #dadce0;border-radius:6px}
ol.strip{display:flex;gap:8px;overflow-x:auto;list-style:none;margin:0;padding:0 0 6px}
ol.strip li{flex:none;text-align:center;font-size:12px}ol.strip a{color:#5f6368;text-decoration:none}
ol.strip img{display:block;width:72px;border:1px solid #dadce0;border-radius:4px;background:#fafafa;margin-bottom:2px}
details.timeline{margin:6px 0}details.timeline>summary{cursor:pointer;color:#5f6368;font-size:13px}
ol.timeline{list-style:none;margin:4px 0;padding:0;font-size:12px}
li.tl{display:flex;gap:8px;align-items:center;line-height:18px}li.tl-step{font-weight:600;border-top:1px solid #f1f3f4}
.tl-name{flex:0 0 260px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tl-track{flex:1;height:10px;background:#f1f3f4;border-radius:3px;display:flex}
.tl-bar{height:10px;border-radius:3px;background:#1a73e8}li.tl-call .tl-bar{background:#8ab4f8}
li.tl.failed .tl-bar{background:#c5221f}li.tl .t{flex:0 0 64px;text-align:right;color:#5f6368}
";

/// Closes an enlarged screen on Escape, and marks the page as scripted (the browser test reads it).
/// XML-safe: no `<` nor `&`.
const SCRIPT: &str = "
document.addEventListener('keydown', function (e) {
  if (e.key === 'Escape') document.querySelectorAll('details.screen[open]').forEach(function (d) { d.open = false; });
});
document.documentElement.setAttribute('data-script', 'ran');
";

/// `report.html`: a summary, an overview table, then each trail with its steps. XHTML-compatible
/// (every element closed, every attribute quoted), so it parses as HTML and as XML alike.
#[cfg(test)]
pub(crate) fn render_html(report: &RunReport) -> String {
    let mut page = String::new();
    let mut out = String::new();
    let _ = render_html_into(&mut out, report, &mut |part| {
        page.push_str(part);
        Ok(())
    });
    page + &out
}

/// What takes the page a part at a time: a file, for a long run's page.
pub(crate) type Spill<'a> = dyn FnMut(&str) -> std::io::Result<()> + 'a;

/// The page onto `out`, handed to `spill` (and `out` emptied) whenever it holds
/// [`crate::files::CHUNK`] bytes or more after a step; what is left at the end stays in `out`.
pub(crate) fn render_html_into(out: &mut String, report: &RunReport, spill: &mut Spill<'_>) -> std::io::Result<()> {
    let e = xml_escape;
    let s = report.summary();
    out.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n");
    out.push_str(
        "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n",
    );
    let traces = super::viewer::wanted(report);
    let _ = writeln!(
        out,
        "<title>trailblaze: {} of {} passed</title>\n<style>{CSS}{}</style>\n</head>\n<body>",
        s.passed,
        s.total,
        if traces { super::viewer::CSS } else { "" }
    );
    out.push_str("<h1>Trailblaze run</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"meta\">device {} · started {} UTC · {}</p>",
        e(&report.device),
        utc(report.started_unix_ms, ' '),
        took(report.duration_ms)
    );
    if let Some(c) = &report.llm {
        let _ = writeln!(out, "<p class=\"meta llm\">the run: {}</p>", e(&c.describe()));
    }
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
        "</p>\n<input type=\"checkbox\" id=\"failures-only\"/> <label for=\"failures-only\">failures only</label>\n",
    );
    out.push_str("<table class=\"overview\">\n<tr><th>outcome</th><th>trail</th><th>file</th><th>time</th></tr>\n");
    for (i, t) in report.trails.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td>{}</td><td><a href=\"#trail-{}\">{}</a></td><td class=\"file\">{}</td><td>{}</td></tr>",
            t.outcome.class(),
            badge(&t.outcome),
            i + 1,
            e(trail_name(t)),
            e(&t.file),
            took(t.duration_ms)
        );
    }
    out.push_str("</table>\n");
    for (i, t) in report.trails.iter().enumerate() {
        trail_html(out, t, i + 1, spill)?;
    }
    let _ = writeln!(out, "<script>{SCRIPT}</script>");
    if traces {
        super::viewer::section(out);
    }
    out.push_str("</body>\n</html>\n");
    Ok(())
}

fn trail_name(t: &TrailReport) -> &str {
    t.title.as_deref().or(t.id.as_deref()).unwrap_or(&t.file)
}

fn badge(o: &Outcome) -> String {
    format!("<span class=\"badge {}\">{}</span>", o.class(), o.word())
}

fn trail_html(out: &mut String, t: &TrailReport, index: usize, spill: &mut Spill<'_>) -> std::io::Result<()> {
    let e = xml_escape;
    // Passed and skipped trails start folded: a person opens the report for what went wrong.
    let open = match t.outcome {
        Outcome::Passed | Outcome::Skipped { .. } => "",
        _ => " open=\"open\"",
    };
    let _ = writeln!(
        out,
        "<details class=\"trail {}\" id=\"trail-{index}\"{open}>",
        t.outcome.class()
    );
    let _ = writeln!(
        out,
        "<summary><h2>{} {}</h2></summary>",
        badge(&t.outcome),
        e(trail_name(t))
    );
    let id = t.id.as_deref().map(|id| format!(" · id {}", e(id))).unwrap_or_default();
    let log = t
        .log
        .as_deref()
        .map(|l| format!(" · <a href=\"{}\">log.jsonl</a>", e(l)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"file\">{}{id} · {}{log}</p>",
        e(&t.file),
        took(t.duration_ms)
    );
    super::viewer::button(out, t);
    if let Some(d) = &t.device {
        let _ = writeln!(out, "<p class=\"meta\">device <code>{}</code></p>", e(d));
    }
    for lost in &t.lost_devices {
        let _ = writeln!(
            out,
            "<p class=\"meta\">device <code>{}</code> was lost while running it: it ran again on another device</p>",
            e(lost)
        );
    }
    if let Outcome::Skipped { reason } = &t.outcome {
        let _ = writeln!(out, "<p>Skipped: {}</p>", e(reason));
    }
    if let Some(c) = &t.llm {
        let _ = writeln!(out, "<p class=\"meta llm\">this trail: {}</p>", e(&c.describe()));
    }
    if let Some(w) = &t.written {
        let _ = writeln!(
            out,
            "<p class=\"meta\"><span class=\"badge agent\">agent</span> its recordings were written to <code>{}</code></p>",
            e(w)
        );
    }
    if let Some(err) = &t.error {
        let _ = writeln!(out, "<pre class=\"error\">{}</pre>", e(err));
    }
    super::storyboard::section(out, t, index);
    super::timeline::section(out, t);
    if !t.steps.is_empty() {
        out.push_str("<ol class=\"steps\">\n");
        for s in &t.steps {
            step_html(out, &t.file, s, index);
            if out.len() >= crate::files::CHUNK {
                spill(out)?;
                out.clear();
            }
        }
        out.push_str("</ol>\n");
    }
    out.push_str("</details>\n");
    Ok(())
}

/// `s` escaped onto `out`: the steps' and calls' texts are written in place, not each made a
/// string first (a long run's page has tens of thousands of them).
fn esc(out: &mut String, s: &str) {
    crate::markup::escape_into(out, s, crate::markup::Dialect::XmlAndHtml);
}

/// Step `s` of trail number `index`, whose file is `file`.
fn step_html(out: &mut String, file: &str, s: &StepReport, index: usize) {
    let e = xml_escape;
    let _ = writeln!(
        out,
        "<li class=\"step {}\" id=\"trail-{index}-step-{}\">\n<div class=\"step-body\">",
        s.outcome.class(),
        s.number
    );
    step_heading(out, file, s);
    if let Outcome::Skipped { reason } = &s.outcome {
        let _ = writeln!(out, "<div class=\"meta\">{}</div>", e(reason));
    }
    for (i, err) in s.retried.iter().enumerate() {
        let _ = writeln!(
            out,
            "<div class=\"meta\">attempt {} failed:</div><pre class=\"error retried\">{}</pre>",
            i + 1,
            e(err)
        );
    }
    if let Some(a) = &s.agent {
        agent_html(out, a);
    } else if let Some(c) = &s.llm {
        let _ = writeln!(out, "<div class=\"meta llm\">{}</div>", e(&c.describe()));
    }
    calls_html(out, &s.calls, None);
    if let Some(p) = &s.page {
        page_html(out, p);
    }
    // Shown once: the failing call already shows the error the step failed with.
    if let Some(err) = &s.error
        && !s.calls.iter().any(|c| c.error.as_ref() == Some(err))
    {
        let _ = writeln!(out, "<pre class=\"error\">{}</pre>", e(err));
    }
    out.push_str("</div>\n");
    if let Some(src) = &s.screen {
        screen_html(out, s, src);
    }
    out.push_str("</li>\n");
}

/// The step's first line: its name, kind, text, outcome, attempts and where it is in `file`.
fn step_heading(out: &mut String, file: &str, s: &StepReport) {
    out.push_str("<div><span class=\"num\">");
    write_step_name(out, s, true);
    out.push_str("</span><span class=\"kind\">");
    esc(out, &s.kind);
    out.push_str("</span>");
    esc(out, &s.text);
    let _ = write!(
        out,
        " <span class=\"badge {}\">{}</span>",
        s.outcome.class(),
        s.outcome.word()
    );
    if s.attempts > 1 {
        let _ = write!(out, "<span class=\"attempts\">{} attempts</span>", s.attempts);
    }
    if s.line > 0 {
        out.push_str("<span class=\"where\">");
        esc(out, file);
        let _ = write!(out, ":{}</span>", s.line);
    }
    out.push_str("</div>\n");
}

/// The screen after step `s` (the image at `src`), with a mark where its last tap landed.
fn screen_html(out: &mut String, s: &StepReport, src: &str) {
    let e = xml_escape;
    // As an image, not inline: whatever the SVG holds, it cannot break this page's markup.
    let _ = write!(
        out,
        "<details class=\"screen\"><summary title=\"enlarge\"><span class=\"shot\"><img loading=\"lazy\" alt=\"the screen after {}\" src=\"{}\"/>",
        e(&step_name(s)),
        e(src)
    );
    let tap = s.calls.iter().rev().find_map(|c| c.tap);
    if let (Some(p), Some(size)) = (tap, s.screen_size)
        && size.x > 0
        && size.y > 0
    {
        let pct = |v: i64, of: i64| (v as f64 / of as f64 * 100.0).clamp(0.0, 100.0);
        let _ = write!(
            out,
            "<span class=\"tap\" title=\"tapped at ({}, {})\" style=\"left:{:.2}%;top:{:.2}%\"></span>",
            p.x,
            p.y,
            pct(p.x, size.x),
            pct(p.y, size.y)
        );
    }
    out.push_str("</span></summary></details>\n");
}

/// An agent step: who ran it and at what cost, what the model said each turn, how it concluded,
/// what a heal replaced, and what was written back. The model's calls follow as any step's do.
fn agent_html(out: &mut String, a: &AgentReport) {
    let e = xml_escape;
    let _ = writeln!(
        out,
        "<div class=\"agent\"><div><span class=\"badge agent\">agent</span> <span class=\"meta\">{} · {} · {} · {} turn{} · {} tokens in, {} out</span></div>",
        e(&a.reason),
        e(&a.provider),
        e(&a.model),
        a.turns.len(),
        if a.turns.len() == 1 { "" } else { "s" },
        a.input_tokens,
        a.output_tokens
    );
    if let Some(err) = &a.recorded_error {
        let _ = writeln!(
            out,
            "<div class=\"meta\">the recording failed:</div><pre class=\"error\">{}</pre>",
            e(err)
        );
    }
    if !a.recorded_calls.is_empty() {
        out.push_str("<details><summary>the recorded calls</summary>\n");
        calls_html(out, &a.recorded_calls, None);
        out.push_str("</details>\n");
    }
    let said: Vec<(usize, &super::AgentTurn)> = a
        .turns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.reasoning.is_some())
        .collect();
    if !said.is_empty() {
        out.push_str("<ol class=\"turns\">\n");
        for (i, t) in said {
            let _ = writeln!(
                out,
                "<li value=\"{}\"><q>{}</q> <span class=\"meta\">({} call{})</span></li>",
                i + 1,
                e(t.reasoning.as_deref().unwrap_or_default()),
                t.calls,
                if t.calls == 1 { "" } else { "s" }
            );
        }
        out.push_str("</ol>\n");
    }
    if let Some(c) = &a.conclusion {
        let _ = writeln!(out, "<div>concluded: <q>{}</q></div>", e(c));
    }
    if !a.recording.is_empty() {
        out.push_str("<details><summary>recorded as</summary>\n");
        calls_html(out, &a.recording, None);
        out.push_str("</details>\n");
    }
    out.push_str("</div>\n");
}

/// The calls as a nested list: each with its arguments, outcome and time, its own calls inside it. A
/// nested error equal to its parent's is shown once, at the parent.
fn calls_html(out: &mut String, calls: &[CallReport], parent_error: Option<&str>) {
    let e = xml_escape;
    if calls.is_empty() {
        return;
    }
    out.push_str("<ol class=\"calls\">\n");
    let mut args = Vec::new();
    for c in calls {
        args.clear();
        let _ = serde_json::to_writer(&mut args, &c.args);
        let (class, word) = if c.ok { ("ok", "ok") } else { ("ko", "failed") };
        let _ = write!(out, "<li class=\"call {class}\"><div class=\"head\"><code>");
        esc(out, &c.tool);
        out.push_str("</code><pre>");
        esc(out, std::str::from_utf8(&args).unwrap_or_default());
        let _ = write!(out, "</pre><span class=\"{class}\">{word}</span><span class=\"t\">");
        write_took(out, c.duration_ms);
        out.push_str("</span>");
        if let Some(l) = c.line {
            let _ = write!(out, "<span class=\"where\">line {l}</span>");
        }
        out.push_str("</div>\n");
        if let Some(err) = &c.error
            && parent_error != Some(err.as_str())
        {
            let _ = writeln!(out, "<pre class=\"error\">{}</pre>", e(err));
        }
        calls_html(out, &c.calls, c.error.as_deref().or(parent_error));
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n");
}

/// A web step's page: its URL, and what it logged (console errors, failed requests, dialogs).
fn page_html(out: &mut String, p: &super::PageNotes) {
    let e = xml_escape;
    let _ = write!(out, "<div class=\"page\">page: <code>{}</code>", e(&p.url));
    for (what, lines) in [
        ("console error", &p.console_errors),
        ("failed request", &p.failed_requests),
        ("dialog", &p.dialogs),
    ] {
        for l in lines {
            let _ = write!(out, "<div class=\"note\">{what}: <code>{}</code></div>", e(l));
        }
    }
    out.push_str("</div>\n");
}
