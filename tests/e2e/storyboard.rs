//! A run you can watch: each trail's storyboard (its screens as a strip and as an animated GIF
//! beside its log) and timeline (steps and their nested calls, with durations) in `report.html`, and
//! run folders named by their UTC second. The GIF is decoded here, from SVG screens (the simulated
//! device) and from PNG screens (a phone's `screencap`), and played by headless Chromium (a page
//! that loads it reports its size); the report is rendered there with no console error.

use std::path::Path;

use super::report::{fixture, opts, run, trail_text, write};
use super::report_browser::{chromium, console_errors, headless};

const STEPS: &str = "  - verify: The inbox is shown\n    recording:\n      tools:\n        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Inbox$\" } } }\n  - step: Open Ana's message\n    recording:\n      tools:\n        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: \"^Ana Lima$\" } } }\n  - step: Back to the inbox\n    recording:\n      tools:\n        - pressKey: { keyCode: BACK }\n";

/// A GIF's frames: RGBA, and the delay (hundredths of a second).
type Frames = Vec<(Vec<u8>, u16)>;

/// Every frame of a GIF, with the GIF's size.
fn frames(gif_bytes: &[u8]) -> ((u16, u16), Frames) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut d = options.read_info(gif_bytes).expect("a GIF");
    let size = (d.width(), d.height());
    let mut out = Vec::new();
    while let Some(f) = d.read_next_frame().expect("a frame") {
        out.push((f.buffer.to_vec(), f.delay));
    }
    (size, out)
}

#[test]
fn each_trail_has_a_playable_storyboard_strip_and_timeline_in_a_dated_run_folder() {
    let f = fixture();
    let file = write(&f, "watch.trail.yaml", &trail_text("", "jane@example.com", STEPS));
    let out = run(&f, &[file], opts(&f));
    assert!(out.report.summary().ok(), "{:?}", out.report.trails[0]);
    // run-2026-12-02T06-28-01Z, and `latest` points at it.
    let name = out
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    // `run-` + YYYY-MM-DDTHH-MM-SSZ (digits where the pattern has 9s).
    let shape = "run-9999-99-99T99-99-99Z";
    let stamped = name.len() == shape.len()
        && name
            .chars()
            .zip(shape.chars())
            .all(|(c, want)| if want == '9' { c.is_ascii_digit() } else { c == want });
    assert!(stamped, "{name}");
    let latest = std::fs::read_link(f.out().join("latest")).expect("latest");
    assert_eq!(latest, Path::new(&name));
    // The GIF: beside the trail's log, looping, one frame per change of screen.
    let t = &out.report.trails[0];
    let rel = t.storyboard.clone().expect("a storyboard");
    assert_eq!(rel, "watch/storyboard.gif");
    let bytes = std::fs::read(out.dir.join(&rel)).expect("the GIF");
    assert!(bytes.starts_with(b"GIF89a"));
    assert!(
        bytes.windows(11).any(|w| w == b"NETSCAPE2.0"),
        "it loops (the application extension)"
    );
    let ((w, h), gif_frames) = frames(&bytes);
    // The inbox (the trailhead signs in; the check stays there), the message, the inbox again.
    let changes = t
        .steps
        .iter()
        .filter_map(|s| s.screen.as_deref())
        .fold(Vec::new(), |mut v: Vec<&str>, s| {
            if v.last() != Some(&s) {
                v.push(s);
            }
            v
        });
    assert_eq!(gif_frames.len(), changes.len(), "{changes:?}");
    assert_eq!(gif_frames.len(), 3);
    assert_eq!((w, h), (270, 600), "a phone screen at 600 px tall");
    assert!(
        gif_frames.iter().all(|(_, delay)| *delay >= 100),
        "each frame shows a second at least"
    );
    assert_ne!(gif_frames[0].0, gif_frames[1].0, "the frames show different screens");
    // Control: the inbox twice is the same screen, and the same picture.
    assert_eq!(changes[0], changes[2]);
    assert_eq!(gif_frames[0].0, gif_frames[2].0);
    // The HTML: the animation, the strip (one picture per change, linked to its step), the timeline.
    let html = std::fs::read_to_string(&out.files.html).expect("html");
    assert!(
        html.contains(&format!("<img class=\"animation\" src=\"{rel}\"")),
        "the animation"
    );
    let strip = &html[html.find("<ol class=\"strip\">").expect("the strip")..];
    let strip = &strip[..strip.find("</ol>").expect("its end")];
    assert_eq!(strip.matches("<img ").count(), changes.len());
    for s in t.steps.iter().filter(|s| s.screen.is_some()) {
        assert!(
            html.contains(&format!("id=\"trail-1-step-{}\"", s.number)),
            "step {} has an anchor",
            s.number
        );
    }
    assert!(strip.contains("href=\"#trail-1-step-2\""));
    let timeline = &html[html.find("<ol class=\"timeline\">").expect("the timeline")..];
    let timeline = &timeline[..timeline.find("</ol>").expect("its end")];
    assert_eq!(timeline.matches("<li class=\"tl tl-step").count(), t.steps.len());
    // The trailhead's scripted tool with its nested calls, indented under it.
    assert!(
        timeline.contains(">signInWith</span>") && timeline.contains("padding-left:24px\">inputText"),
        "{timeline}"
    );
    assert!(t.steps.iter().all(|s| s.duration_ms > 0.0), "every step is timed");
    assert!(
        t.steps
            .windows(2)
            .all(|w| w[1].started_ms >= w[0].started_ms + w[0].duration_ms * 0.99)
    );
    let json = super::report::report_json(&out);
    assert_eq!(json["trails"][0]["storyboard"], rel.as_str());
    assert!(
        json["trails"][0]["steps"][1]["duration_ms"]
            .as_f64()
            .is_some_and(|d| d > 0.0)
    );
}

#[test]
fn chromium_plays_the_storyboard_and_renders_the_report_without_error() {
    let Some(chromium) = chromium() else { return };
    let f = fixture();
    let file = write(&f, "watch.trail.yaml", &trail_text("", "jane@example.com", STEPS));
    let out = run(&f, &[file], opts(&f));
    let rel = out.report.trails[0].storyboard.clone().expect("a storyboard");
    // A page beside the report loads the GIF and writes what the browser decoded into the DOM.
    let probe = out.dir.join("probe.html");
    std::fs::write(
        &probe,
        format!(
            "<!DOCTYPE html><html><body><img id=\"g\" src=\"{rel}\"/><script>\
             var g = document.getElementById('g');\
             function say(t) {{ document.body.setAttribute('data-gif', t); }}\
             g.onload = function () {{ say('loaded ' + g.naturalWidth + 'x' + g.naturalHeight); }};\
             g.onerror = function () {{ say('error'); }};\
             </script></body></html>"
        ),
    )
    .expect("probe");
    let (dom, stderr) = headless(&chromium, &probe, &["--dump-dom".to_string()]);
    assert!(
        dom.contains("data-gif=\"loaded 270x600\""),
        "Chromium did not decode the GIF:\n{dom}\n{stderr}"
    );
    // Control: a file that is no GIF is reported as an error by the same page.
    std::fs::write(out.dir.join("broken.gif"), b"GIF89a not really").expect("broken");
    std::fs::write(
        &probe,
        std::fs::read_to_string(&probe)
            .expect("probe")
            .replace(&rel, "broken.gif"),
    )
    .expect("probe");
    let (dom, _) = headless(&chromium, &probe, &["--dump-dom".to_string()]);
    assert!(dom.contains("data-gif=\"error\""), "{dom}");
    // The report itself, with its storyboard and timeline, renders with no console error.
    let (dom, stderr) = headless(&chromium, &out.files.html, &["--dump-dom".to_string()]);
    assert!(dom.contains("data-script=\"ran\""), "{stderr}");
    assert!(console_errors(&stderr).is_empty(), "{stderr}");
    assert!(dom.contains("class=\"storyboard\"") && dom.contains("class=\"timeline\""));
}

/// How many of a frame's pixels are not white: the screen's drawing.
fn drawn(rgba: &[u8]) -> usize {
    rgba.chunks_exact(4)
        .filter(|px| px[..3].iter().any(|&c| c < 250))
        .count()
}

#[test]
fn a_phones_png_screens_make_its_storyboard() {
    let fake = trailblaze_e2e::fake_adb::FakeAdb::demo("emulator-5554");
    let f = trailblaze_e2e::Fixture::demo();
    let dir = f.dir.path().join("phone");
    let trail = f.map_dir().join("trails/open-message.trail.yaml");
    let secrets = f.map_dir().join("demo.secrets");
    let o = trailblaze_e2e::in_dir(
        &f,
        f.dir.path(),
        &[
            "run",
            trail.to_str().unwrap_or_default(),
            "--secrets",
            secrets.to_str().unwrap_or_default(),
            "--device",
            "android:emulator-5554",
            "--adb-server",
            &fake.addr().to_string(),
            "--report-dir",
            dir.to_str().unwrap_or_default(),
        ],
    );
    let (out, err) = trailblaze_e2e::text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("JSON");
    let t = &report["trails"][0];
    let screens: Vec<&str> = t["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["screen"].as_str())
        .collect();
    assert!(
        !screens.is_empty() && screens.iter().all(|s| s.ends_with(".png")),
        "the phone's screens are PNGs: {screens:?}"
    );
    let changes = screens.iter().fold(Vec::new(), |mut v: Vec<&str>, s| {
        if v.last() != Some(s) {
            v.push(s);
        }
        v
    });
    let rel = t["storyboard"].as_str().expect("a storyboard from PNG screens");
    let ((w, h), gif_frames) = frames(&std::fs::read(dir.join(rel)).expect("the GIF"));
    assert_eq!(
        gif_frames.len(),
        changes.len(),
        "one frame per change of screen: {changes:?}"
    );
    assert!(changes.len() >= 2, "{changes:?}");
    assert_eq!((w, h), (270, 600), "the phone's 1080x2400 screen at 600 px tall");
    // Each frame is the picture of its screen: drawn on (the outlines of the screen's nodes), the
    // same screen the same picture, another screen another.
    for (i, (rgba, _)) in gif_frames.iter().enumerate() {
        let n = drawn(rgba);
        assert!(n > 0 && n < rgba.len() / 4 / 2, "frame {i}: {n} pixels drawn");
    }
    for i in 1..changes.len() {
        assert_ne!(
            gif_frames[i - 1].0,
            gif_frames[i].0,
            "frames {} and {i} show different screens",
            i - 1
        );
    }
    for (i, a) in changes.iter().enumerate() {
        for (j, b) in changes.iter().enumerate().skip(i + 1) {
            if a == b {
                assert_eq!(gif_frames[i].0, gif_frames[j].0, "frames {i} and {j}: the same screen");
            }
        }
    }
    // Control: the measure sees a blank frame as one with nothing drawn.
    assert_eq!(drawn(&[255, 255, 255, 255].repeat(16)), 0);
}
