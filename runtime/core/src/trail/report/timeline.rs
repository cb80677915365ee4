//! A trail's timeline in `report.html`: each step, then its calls nested under it, as a bar placed
//! on the trail's time (where it started, how long it took) with its duration. Steps start where the
//! replay measured them; a step's calls are laid one after another from its start (the log times
//! each call, not when it began). A long trail shows its first [`MAX_ROWS`] rows.

use std::fmt::Write as _;

use super::{CallReport, TrailReport};

/// The most rows one trail's timeline shows.
pub const MAX_ROWS: usize = 300;

struct Row<'t> {
    label: Label<'t>,
    class: &'static str,
    depth: usize,
    start: f64,
    took: f64,
    ok: bool,
}

/// What a row is named by: written only for the rows shown (a long trail has thousands).
enum Label<'t> {
    Step(&'t super::StepReport),
    Call(&'t str),
}

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Step(s) => write!(f, "{} {}", super::step_name(s), s.text),
            Label::Call(tool) => f.write_str(tool),
        }
    }
}

fn rows(t: &TrailReport) -> (Vec<Row<'_>>, f64) {
    let mut out = Vec::new();
    let mut end: f64 = 0.0;
    for s in &t.steps {
        // A report from before steps were timed: one after another.
        let start = if s.started_ms > 0.0 || s.number == 0 {
            s.started_ms
        } else {
            end
        };
        let took = s.duration_ms.max(0.0);
        out.push(Row {
            label: Label::Step(s),
            class: s.outcome.class(),
            depth: 0,
            start,
            took,
            ok: !matches!(s.outcome, super::Outcome::Failed | super::Outcome::Error),
        });
        end = end.max(start + took);
        calls(&s.calls, start, 1, &mut out, &mut end);
    }
    (out, end.max(t.duration_ms).max(1.0))
}

fn calls<'t>(list: &'t [CallReport], mut at: f64, depth: usize, out: &mut Vec<Row<'t>>, end: &mut f64) {
    for c in list {
        let took = c.duration_ms.max(0.0);
        out.push(Row {
            label: Label::Call(&c.tool),
            class: if c.ok { "ok" } else { "ko" },
            depth,
            start: at,
            took,
            ok: c.ok,
        });
        calls(&c.calls, at, depth + 1, out, end);
        at += took;
        *end = end.max(at);
    }
}

/// The timeline, folded under its summary.
pub(super) fn section(out: &mut String, t: &TrailReport) {
    if t.steps.is_empty() {
        return;
    }
    let e = super::xml_escape;
    let (rows, total) = rows(t);
    let _ = writeln!(
        out,
        "<details class=\"timeline\"><summary>timeline: {} step{}, {}</summary>\n<ol class=\"timeline\">",
        t.steps.len(),
        if t.steps.len() == 1 { "" } else { "s" },
        took(total)
    );
    let pct = |v: f64| (v / total * 100.0).clamp(0.0, 100.0);
    for r in rows.iter().take(MAX_ROWS) {
        let left = pct(r.start);
        // A bar is at least a sliver, so an instant call still shows where it happened.
        let width = pct(r.took).max(0.3).min(100.0 - left).max(0.0);
        let kind = if r.depth == 0 { "tl-step" } else { "tl-call" };
        let _ = writeln!(
            out,
            "<li class=\"tl {kind} {}{}\"><span class=\"tl-name\" style=\"padding-left:{}px\">{}</span><span class=\"tl-track\"><span class=\"tl-bar\" style=\"margin-left:{left:.2}%;width:{width:.2}%\"></span></span><span class=\"t\">{}</span></li>",
            r.class,
            if r.ok { "" } else { " failed" },
            r.depth * 12,
            e(&r.label.to_string()),
            took(r.took)
        );
    }
    if rows.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "<li class=\"tl more\">… {} more rows (report.json has them all)</li>",
            rows.len() - MAX_ROWS
        );
    }
    out.push_str("</ol>\n</details>\n");
}

/// A duration as the report shows it: `340 ms`, `2.5 s`.
pub(super) fn took(ms: f64) -> String {
    let mut out = String::new();
    write_took(&mut out, ms);
    out
}

/// [`took`] appended to `out`.
pub(super) fn write_took(out: &mut String, ms: f64) {
    let _ = if ms < 1000.0 {
        write!(out, "{ms:.0} ms")
    } else {
        write!(out, "{:.1} s", ms / 1000.0)
    };
}

#[cfg(test)]
mod tests {
    use super::super::{CallReport, Outcome, StepReport, TrailReport};
    use super::section;
    use serde_json::json;

    fn call(tool: &str, ms: f64, calls: Vec<CallReport>) -> CallReport {
        CallReport {
            tool: tool.into(),
            args: json!({}),
            ok: true,
            error: None,
            duration_ms: ms,
            line: None,
            tap: None,
            calls,
        }
    }

    #[test]
    fn steps_sit_where_they_ran_and_calls_follow_each_other_inside() {
        let step = |n: usize, start: f64, took: f64, calls: Vec<CallReport>| StepReport {
            number: n,
            kind: "step".into(),
            text: format!("do {n}"),
            line: 0,
            outcome: Outcome::Passed,
            started_ms: start,
            duration_ms: took,
            attempts: 1,
            retried: Vec::new(),
            calls,
            error: None,
            screen: None,
            screen_size: None,
            agent: None,
            page: None,
            llm: None,
        };
        let t = TrailReport {
            file: "t".into(),
            id: None,
            title: None,
            outcome: Outcome::Passed,
            duration_ms: 0.0,
            steps: vec![
                step(0, 0.0, 100.0, vec![call("launchApp", 100.0, Vec::new())]),
                step(
                    1,
                    100.0,
                    300.0,
                    vec![
                        call(
                            "signIn",
                            200.0,
                            vec![call("inputText", 50.0, Vec::new()), call("tap", 150.0, Vec::new())],
                        ),
                        call("assertVisible", 100.0, Vec::new()),
                    ],
                ),
            ],
            error: None,
            log: None,
            written: None,
            device: None,
            lost_devices: Vec::new(),
            storyboard: None,
            trace: None,
            llm: None,
        };
        let (rows, total) = super::rows(&t);
        assert_eq!(total, 400.0);
        let at: Vec<(String, usize, f64, f64)> = rows
            .iter()
            .map(|r| (r.label.to_string(), r.depth, r.start, r.took))
            .collect();
        assert_eq!(
            at,
            [
                ("trailhead do 0", 0, 0.0, 100.0),
                ("launchApp", 1, 0.0, 100.0),
                ("step 1 do 1", 0, 100.0, 300.0),
                ("signIn", 1, 100.0, 200.0),
                ("inputText", 2, 100.0, 50.0),
                ("tap", 2, 150.0, 150.0),
                ("assertVisible", 1, 300.0, 100.0),
            ]
            .map(|(label, depth, start, took)| (label.to_string(), depth, start, took))
        );
        let mut html = String::new();
        section(&mut html, &t);
        // Step 1 starts a quarter in and takes three quarters.
        assert!(html.contains("margin-left:25.00%;width:75.00%"), "{html}");
        assert!(html.contains("padding-left:24px\">inputText"), "nested twice");
        assert!(html.contains("timeline: 2 steps, 400 ms"));
    }
}
