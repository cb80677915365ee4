//! A trail's storyboard: its steps' screens in order, as a strip of pictures in `report.html` and as
//! an animated GIF beside the trail's log (`<run>/<trail>/storyboard.gif`) that a part writes when
//! the run ends (`trailblaze-reports`).
//! A screen that stays the same over several steps is one frame; a long trail is sampled down to
//! [`MAX_FRAMES`], its first and last screens kept.

use super::{StepReport, TrailReport};

/// The most frames (and strip pictures) one trail shows.
pub const MAX_FRAMES: usize = 60;

/// The steps whose screens make the storyboard: each change of screen, in order, sampled down to
/// [`MAX_FRAMES`].
pub fn frames(trail: &TrailReport) -> Vec<&StepReport> {
    let mut out: Vec<&StepReport> = Vec::new();
    for s in &trail.steps {
        let Some(screen) = s.screen.as_deref() else { continue };
        if out.last().and_then(|l| l.screen.as_deref()) != Some(screen) {
            out.push(s);
        }
    }
    if out.len() <= MAX_FRAMES {
        return out;
    }
    // Evenly spread over the trail, the first and the last included.
    let last = out.len() - 1;
    (0..MAX_FRAMES).map(|i| out[i * last / (MAX_FRAMES - 1)]).collect()
}

/// The storyboard in `report.html`: the animation (once written) and the strip of each screen
/// change, each picture naming its step and linking to it.
pub(super) fn section(out: &mut String, t: &TrailReport, index: usize) {
    use std::fmt::Write as _;
    let e = super::xml_escape;
    let shown = frames(t);
    if shown.is_empty() {
        return;
    }
    out.push_str("<div class=\"storyboard\">\n");
    if let Some(gif) = &t.storyboard {
        let _ = writeln!(
            out,
            "<img class=\"animation\" src=\"{}\" alt=\"the trail's screens, animated\"/>",
            e(gif)
        );
    }
    out.push_str("<ol class=\"strip\">\n");
    for s in shown {
        let name = super::step_name(s);
        let _ = writeln!(
            out,
            "<li><a href=\"#trail-{index}-step-{}\"><img loading=\"lazy\" src=\"{}\" alt=\"the screen after {}\"/><span>{}</span></a></li>",
            s.number,
            e(s.screen.as_deref().unwrap_or_default()),
            e(&name),
            e(&name)
        );
    }
    out.push_str("</ol>\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::super::{Outcome, StepReport, TrailReport};
    use super::*;

    fn step(n: usize, screen: Option<&str>) -> StepReport {
        StepReport {
            number: n,
            kind: "step".into(),
            text: format!("step {n}"),
            line: 0,
            outcome: Outcome::Passed,
            started_ms: 0.0,
            duration_ms: 0.0,
            attempts: 1,
            retried: Vec::new(),
            calls: Vec::new(),
            error: None,
            screen: screen.map(str::to_string),
            screen_size: None,
            agent: None,
            page: None,
            llm: None,
        }
    }

    fn trail(steps: Vec<StepReport>) -> TrailReport {
        TrailReport {
            file: "t.trail.yaml".into(),
            id: None,
            title: None,
            outcome: Outcome::Passed,
            duration_ms: 0.0,
            steps,
            error: None,
            log: Some("t/log.jsonl".into()),
            written: None,
            device: None,
            lost_devices: Vec::new(),
            storyboard: None,
            trace: None,
            llm: None,
        }
    }

    #[test]
    fn frames_are_the_changes_of_screen_sampled_down() {
        let t = trail(vec![
            step(0, Some("screens/a.svg")),
            step(1, Some("screens/a.svg")),
            step(2, None),
            step(3, Some("screens/b.svg")),
            step(4, Some("screens/a.svg")),
        ]);
        let n: Vec<usize> = frames(&t).iter().map(|s| s.number).collect();
        assert_eq!(
            n,
            [0, 3, 4],
            "a screen kept over steps is one frame; a return is a frame"
        );
        let long = trail(
            (0..1000)
                .map(|i| step(i, Some(if i % 2 == 0 { "screens/a.svg" } else { "screens/b.svg" })))
                .collect(),
        );
        let f = frames(&long);
        assert_eq!(f.len(), MAX_FRAMES);
        assert_eq!((f[0].number, f[MAX_FRAMES - 1].number), (0, 999), "first and last kept");
        // Control: a trail without screens has no storyboard at all.
        assert!(frames(&trail(vec![step(0, None)])).is_empty());
        let mut html = String::new();
        section(&mut html, &trail(vec![step(0, None)]), 1);
        assert!(html.is_empty());
    }
}
