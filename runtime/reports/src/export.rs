//! A trail's steps as pictures for a pull request (`trailblaze report --gif|--storyboard`): each
//! step's screen after it, read from its trace (docs/trace.md), as an animated GIF or as one PNG of
//! them in a grid, each under its step's number and text. The texts are the trace's, already
//! scrubbed of secrets.

use std::path::Path;

use trailblaze_core::device::Screenshot;
use trailblaze_core::report::StepScreen;

use crate::raster::{Fit, Picture};

/// The most steps an export shows: a longer trail is sampled down, its first and last kept.
pub const MAX_STEPS: usize = 60;
/// A storyboard's columns.
const COLUMNS: usize = 6;
/// A storyboard cell's screen: at most this wide and tall (a phone's screen 216×480).
const CELL: (u32, u32) = (240, 480);
/// The label under each screen, and the gap around cells.
const LABEL: u32 = 52;
const GAP: u32 = 12;
/// The largest file an export writes: a GIF of 60 frames of 600 px, a grid of 60 cells, are a few
/// MiB; a bigger one is refused rather than attached to a pull request.
pub const MAX_BYTES: usize = 16 << 20;

/// A GIF frame's long side, as the run's storyboard GIF (a phone's screen 270×600).
const GIF_FIT: Fit = Fit {
    long_side: 600,
    short_side: 600,
    pixels: u64::MAX,
};

/// Step `s`'s screen, from the trace's folder `dir`: an SVG or a PNG.
fn load(dir: &Path, s: &StepScreen, fit: Fit) -> Result<Picture, String> {
    let mime = match s.screen.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()) {
        Some(e) if e == "svg" => "image/svg+xml",
        Some(e) if e == "png" => "image/png",
        _ => return Err(format!("{}: a screen is an SVG or a PNG", s.screen)),
    };
    let bytes = std::fs::read(dir.join(&s.screen)).map_err(|e| format!("{}: {e}", s.screen))?;
    Picture::from_screenshot(&Screenshot { mime, bytes }, fit).map_err(|e| format!("{}: {e}", s.screen))
}

/// `steps` sampled down to [`MAX_STEPS`], evenly, the first and the last kept.
fn sampled(steps: &[StepScreen]) -> Vec<&StepScreen> {
    if steps.len() <= MAX_STEPS {
        return steps.iter().collect();
    }
    let last = steps.len() - 1;
    (0..MAX_STEPS).map(|i| &steps[i * last / (MAX_STEPS - 1)]).collect()
}

fn capped(bytes: Vec<u8>, what: &str) -> Result<Vec<u8>, String> {
    if bytes.len() > MAX_BYTES {
        return Err(format!(
            "the {what} would be {} MiB, more than the {} MiB an export may be",
            bytes.len() >> 20,
            MAX_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// The steps' screens as a looping animated GIF (the storyboard's encoder).
pub fn gif(dir: &Path, steps: &[StepScreen]) -> Result<Vec<u8>, String> {
    let pictures = sampled(steps)
        .into_iter()
        .map(|s| load(dir, s, GIF_FIT))
        .collect::<Result<Vec<_>, _>>()?;
    if pictures.is_empty() {
        return Err("the trace has no step with a screen".into());
    }
    capped(crate::storyboard::gif_frames::encode_pictures(pictures)?, "GIF")
}

/// The steps' screens in a grid, each under its step's number and text, as a PNG.
pub fn storyboard_png(dir: &Path, steps: &[StepScreen]) -> Result<Vec<u8>, String> {
    let shown = sampled(steps);
    if shown.is_empty() {
        return Err("the trace has no step with a screen".into());
    }
    let columns = shown.len().min(COLUMNS) as u32;
    let rows = shown.len().div_ceil(COLUMNS) as u32;
    let (cw, ch) = (CELL.0 + GAP, CELL.1 + LABEL + GAP);
    let mut sheet = Picture::blank(columns * cw + GAP, rows * ch + GAP).map_err(|e| e.to_string())?;
    let fit = Fit {
        long_side: CELL.0.max(CELL.1),
        short_side: CELL.0.min(CELL.1),
        pixels: u64::from(CELL.0 * CELL.1),
    };
    for (i, s) in shown.iter().enumerate() {
        let (col, row) = ((i % COLUMNS) as u32, (i / COLUMNS) as u32);
        let (x, y) = (GAP + col * cw, GAP + row * ch);
        let label = Picture::from_svg(label_svg(s).as_bytes(), Fit::ANY).map_err(|e| e.to_string())?;
        sheet.draw(&label, x as i32, y as i32);
        let screen = load(dir, s, fit)?;
        // Centred in its cell, under the label.
        let dx = CELL.0.saturating_sub(screen.width()) / 2;
        sheet.draw(&screen, (x + dx) as i32, (y + LABEL) as i32);
    }
    capped(sheet.to_png().map_err(|e| e.to_string())?, "storyboard")
}

/// A cell's label: "Step N" and the step's text on two lines, cut to the cell's width.
fn label_svg(s: &StepScreen) -> String {
    const CHARS: usize = 30;
    let name = if s.number == 0 {
        "Trailhead".to_string()
    } else {
        format!("Step {}", s.number)
    };
    let text: String = s.text.chars().take(CHARS).collect();
    let text = if s.text.chars().count() > CHARS {
        format!("{}…", text.trim_end())
    } else {
        text
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{LABEL}\"><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\
         <text x=\"2\" y=\"18\" font-family=\"sans-serif\" font-size=\"15\" font-weight=\"bold\" fill=\"#202124\">{}</text>\
         <text x=\"2\" y=\"40\" font-family=\"sans-serif\" font-size=\"13\" fill=\"#5f6368\">{}</text></svg>",
        CELL.0,
        escape(&name),
        escape(&text)
    )
}

/// Text for an SVG's text node; a control character (which XML cannot hold) becomes a space.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(width: usize) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"540\" height=\"1200\"><rect width=\"540\" height=\"1200\" fill=\"#fafafa\"/><rect x=\"40\" y=\"100\" width=\"{width}\" height=\"120\" fill=\"#1a73e8\"/></svg>"
        )
    }

    fn steps(dir: &Path, n: usize) -> Vec<StepScreen> {
        std::fs::create_dir_all(dir.join("trace")).unwrap();
        (0..n)
            .map(|i| {
                let screen = format!("trace/{i}.svg");
                std::fs::write(dir.join(&screen), svg(100 + i * 7)).unwrap();
                StepScreen {
                    number: i as u64 + 1,
                    text: format!("Tap <the> & \"button\" {i}\u{1b}"),
                    screen,
                }
            })
            .collect()
    }

    #[test]
    fn a_gif_has_a_frame_per_step_within_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let gif = gif(dir.path(), &steps(dir.path(), 3)).unwrap();
        assert!(gif.starts_with(b"GIF89a") && gif.len() <= MAX_BYTES);
        let mut d = gif::DecodeOptions::new().read_info(gif.as_slice()).unwrap();
        assert_eq!((d.width(), d.height()), (270, 600));
        let mut frames = 0;
        while d.read_next_frame().unwrap().is_some() {
            frames += 1;
        }
        assert_eq!(frames, 3);
    }

    #[test]
    fn a_storyboard_is_a_grid_of_the_steps_sampled_down() {
        let dir = tempfile::tempdir().unwrap();
        let png = storyboard_png(dir.path(), &steps(dir.path(), 70)).unwrap();
        let p = Picture::from_png(&png).unwrap();
        // 60 steps: six columns, ten rows.
        assert_eq!(p.width(), 6 * (CELL.0 + GAP) + GAP);
        assert_eq!(p.height(), 10 * (CELL.1 + LABEL + GAP) + GAP);
        assert!(png.len() <= MAX_BYTES);
        // A screen that is not there is an error naming it.
        let err = storyboard_png(
            dir.path(),
            &[StepScreen {
                number: 1,
                text: String::new(),
                screen: "trace/none.svg".into(),
            }],
        );
        assert!(err.unwrap_err().contains("trace/none.svg"));
    }
}
