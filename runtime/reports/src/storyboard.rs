//! A trail's storyboard as an animated GIF beside its log (`<run>/<trail>/storyboard.gif`),
//! written once the run's screens are all on disk; its frames are the core's
//! [`frames`](trailblaze_core::report::storyboard_frames).

use std::path::Path;

use trailblaze_core::report::{TrailReport, storyboard_frames as frames};

/// The file name of a trail's animated storyboard, in its session folder.
pub const FILE: &str = "storyboard.gif";

/// Writes each trail's storyboard GIF into its session folder under `run_dir` and notes its path in
/// the report. A trail with no screen, or whose GIF cannot be made, has none (said in the log).
pub fn write_all(trails: &mut [TrailReport], run_dir: &Path) {
    let mut cache = gif_frames::Cache::default();
    for t in trails.iter_mut() {
        let Some(folder) = t.log.as_deref().and_then(|l| l.strip_suffix("/log.jsonl")) else {
            continue;
        };
        let screens: Vec<String> = frames(t).iter().filter_map(|s| s.screen.clone()).collect();
        if screens.is_empty() {
            continue;
        }
        let rel = format!("{folder}/{FILE}");
        match gif_frames::encode(&screens, run_dir, &mut cache).and_then(|gif| {
            trailblaze_core::files::write_atomically(&run_dir.join(&rel), &gif).map_err(|e| e.to_string())
        }) {
            Ok(()) => t.storyboard = Some(rel),
            Err(e) => tracing::warn!(trail = %t.file, error = %e, "no storyboard for this trail"),
        }
    }
}

/// The storyboard GIFs, as a run writes them when its trails are done.
pub struct Storyboards;

impl trailblaze_core::parts::RunFiles for Storyboards {
    fn write(&self, trails: &mut [TrailReport], run_dir: &Path) {
        write_all(trails, run_dir);
    }
}

pub(crate) mod gif_frames {
    use std::collections::HashMap;
    use std::path::Path;

    use crate::raster::{Fit, Picture};
    use trailblaze_core::device::Screenshot;

    /// A frame's long side, in pixels: a phone screen 270×600.
    const FRAME_SIDE: u32 = 600;
    /// How long each frame shows, in hundredths of a second; the last one longer.
    const DELAY: u16 = 100;
    const LAST_DELAY: u16 = 300;

    /// Screens already drawn, by path, and already made into frames (quantized and LZW-compressed),
    /// by path and frame size: trails of a run share their screens, and a trail goes back to a screen
    /// often (quantizing and compressing are a frame's whole cost: 60 frames of two screens took half
    /// a second, then a third of a 2,000-step run's time went to compressing the same two frames).
    #[derive(Default)]
    pub(super) struct Cache(
        HashMap<String, Picture>,
        HashMap<(String, u32, u32), gif::Frame<'static>>,
    );

    fn picture(path: &str, run_dir: &Path, cache: &mut Cache) -> Result<Picture, String> {
        if let Some(p) = cache.0.get(path) {
            return Ok(p.clone());
        }
        // The report's own paths: `screens/<sha256>.svg|png`, nothing else is read.
        let name = path
            .strip_prefix("screens/")
            .filter(|n| !n.contains('/') && !n.contains(".."))
            .ok_or_else(|| format!("{path} is not a screen of this run"))?;
        let mime = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("svg") => "image/svg+xml",
            Some("png") => "image/png",
            _ => return Err(format!("{path} is not an SVG nor a PNG")),
        };
        let bytes = std::fs::read(run_dir.join(path)).map_err(|e| format!("{path}: {e}"))?;
        let fit = Fit {
            long_side: FRAME_SIDE,
            short_side: FRAME_SIDE,
            pixels: u64::MAX,
        };
        let p = Picture::from_screenshot(&Screenshot { mime, bytes }, fit).map_err(|e| format!("{path}: {e}"))?;
        cache.0.insert(path.to_string(), p.clone());
        Ok(p)
    }

    /// The screens as one looping GIF, every frame the size of the first (another size is scaled to
    /// fit it, on white).
    pub(super) fn encode(screens: &[String], run_dir: &Path, cache: &mut Cache) -> Result<Vec<u8>, String> {
        let Some(first) = screens.first() else {
            return Err("no screen".into());
        };
        let first = picture(first, run_dir, cache)?;
        let (w, h) = (first.width(), first.height());
        write(w, h, screens.len(), |path_index, (w16, h16)| {
            let path = &screens[path_index];
            let key = (path.clone(), w, h);
            if let Some(f) = cache.1.get(&key) {
                return Ok(f.clone());
            }
            let f = frame(same_size(picture(path, run_dir, cache)?, w, h)?, w16, h16);
            cache.1.insert(key, f.clone());
            Ok(f)
        })
    }

    /// Pictures as one looping GIF, a second each (the last three), every frame the size of the
    /// first scaled to [`FRAME_SIDE`]: `trailblaze report --gif`'s frames, read from a trace.
    pub fn encode_pictures(pictures: Vec<Picture>) -> Result<Vec<u8>, String> {
        let fit = Fit {
            long_side: FRAME_SIDE,
            short_side: FRAME_SIDE,
            pixels: u64::MAX,
        };
        let pictures: Vec<Picture> = pictures
            .into_iter()
            .map(|p| p.scaled(fit).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let Some(first) = pictures.first() else {
            return Err("no screen".into());
        };
        let (w, h) = (first.width(), first.height());
        write(w, h, pictures.len(), |i, (w16, h16)| {
            Ok(frame(same_size(pictures[i].clone(), w, h)?, w16, h16))
        })
    }

    /// One frame, quantized and compressed.
    fn frame(mut rgba: Vec<u8>, w16: u16, h16: u16) -> gif::Frame<'static> {
        // Speed 10 of 30: flat screens quantize well fast; text keeps its edges.
        let mut f = gif::Frame::from_rgba_speed(w16, h16, &mut rgba, 10);
        f.make_lzw_pre_encoded();
        f
    }

    /// A looping GIF of `count` frames of `w`×`h`, frame `i` made by `frame_at`.
    fn write(
        w: u32,
        h: u32,
        count: usize,
        mut frame_at: impl FnMut(usize, (u16, u16)) -> Result<gif::Frame<'static>, String>,
    ) -> Result<Vec<u8>, String> {
        let (w16, h16) = (
            u16::try_from(w).map_err(|_| "too wide")?,
            u16::try_from(h).map_err(|_| "too tall")?,
        );
        let mut out = Vec::new();
        {
            let mut encoder = gif::Encoder::new(&mut out, w16, h16, &[]).map_err(|e| e.to_string())?;
            encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| e.to_string())?;
            for i in 0..count {
                let mut frame = frame_at(i, (w16, h16))?;
                frame.delay = if i + 1 == count { LAST_DELAY } else { DELAY };
                encoder.write_lzw_pre_encoded_frame(&frame).map_err(|e| e.to_string())?;
            }
        }
        Ok(out)
    }

    /// `p`'s RGBA at `w`×`h`: as it is when it has that size, else scaled into it, centred on white.
    fn same_size(p: Picture, w: u32, h: u32) -> Result<Vec<u8>, String> {
        if (p.width(), p.height()) == (w, h) {
            return Ok(opaque(p.rgba()));
        }
        let fit = Fit {
            long_side: w.max(h),
            short_side: w.min(h),
            pixels: u64::from(w) * u64::from(h),
        };
        let small = p.scaled(fit).map_err(|e| e.to_string())?;
        let (sw, sh) = (small.width().min(w), small.height().min(h));
        let (ox, oy) = ((w - sw) / 2, (h - sh) / 2);
        let src = opaque(small.rgba());
        let mut out = vec![255u8; (w * h * 4) as usize];
        for y in 0..sh {
            let from = ((y * small.width()) * 4) as usize;
            let to = (((y + oy) * w + ox) * 4) as usize;
            out[to..to + (sw * 4) as usize].copy_from_slice(&src[from..from + (sw * 4) as usize]);
        }
        Ok(out)
    }

    /// Transparent pixels as white: a GIF frame has no partial transparency.
    fn opaque(mut rgba: Vec<u8>) -> Vec<u8> {
        for px in rgba.chunks_exact_mut(4) {
            let a = u16::from(px[3]);
            for c in &mut px[..3] {
                *c = ((u16::from(*c) * a + 255 * (255 - a)) / 255) as u8;
            }
            px[3] = 255;
        }
        rgba
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A passed trail logged at `t/log.jsonl`, a step per screen (`None`: a step with no screen),
    /// as a run's `report.json` holds it.
    fn trail(screens: &[Option<&str>]) -> TrailReport {
        let steps: Vec<serde_json::Value> = screens
            .iter()
            .enumerate()
            .map(|(n, screen)| {
                serde_json::json!({ "number": n, "kind": "step", "text": format!("step {n}"),
                    "outcome": { "status": "passed" }, "calls": [], "error": null, "screen": screen })
            })
            .collect();
        let report = serde_json::json!({ "file": "t.trail.yaml", "id": null, "title": null,
            "outcome": { "status": "passed" }, "duration_ms": 0.0, "steps": steps, "error": null,
            "log": "t/log.jsonl" });
        serde_json::from_value(report).expect("a trail report")
    }

    #[test]
    fn a_storyboard_gif_is_written_beside_the_log_and_only_from_the_runs_screens() {
        let dir = tempfile::tempdir().unwrap();
        let svg = |text: &str| {
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"600\"><rect width=\"300\" height=\"600\" fill=\"#fafafa\"/><rect x=\"20\" y=\"20\" width=\"{}\" height=\"40\" fill=\"#1a73e8\"/></svg>",
                text.len() * 20
            )
        };
        std::fs::create_dir_all(dir.path().join("screens")).unwrap();
        std::fs::write(dir.path().join("screens/a.svg"), svg("a")).unwrap();
        std::fs::write(dir.path().join("screens/b.svg"), svg("bbbb")).unwrap();
        let mut trails = vec![
            trail(&[Some("screens/a.svg"), Some("screens/b.svg")]),
            // A path that leaves the screens folder is not read.
            trail(&[Some("screens/../../etc/passwd")]),
        ];
        trails[1].log = Some("u/log.jsonl".into());
        write_all(&mut trails, dir.path());
        assert_eq!(trails[0].storyboard.as_deref(), Some("t/storyboard.gif"));
        assert_eq!(trails[1].storyboard, None);
        let gif = std::fs::read(dir.path().join("t/storyboard.gif")).unwrap();
        assert!(gif.starts_with(b"GIF89a"));
        let mut decoder = gif::DecodeOptions::new();
        decoder.set_color_output(gif::ColorOutput::RGBA);
        let mut d = decoder.read_info(gif.as_slice()).unwrap();
        assert_eq!((d.width(), d.height()), (300, 600));
        let mut frames = 0;
        while let Some(f) = d.read_next_frame().unwrap() {
            frames += 1;
            assert!(f.delay >= DELAY_MIN);
        }
        assert_eq!(frames, 2);
    }

    const DELAY_MIN: u16 = 100;
}
