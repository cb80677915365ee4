//! A run's screens on disk: each distinct screen written once, as `screens/<sha256>.svg`, when its step
//! finishes. The report keeps only the path, so a long trail costs memory for its step texts, not for
//! its screens (held until the end, a 20,000-step trail's SVGs would be most of its memory).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Point;
use crate::secret::Redaction;

/// The folder under the run folder that holds the screens.
pub const SCREENS_DIR: &str = "screens";

/// Writes screens into `<run>/screens/`, deduplicated by content.
pub struct Screens {
    dir: PathBuf,
    redaction: Redaction,
    /// Hashes written by this run (a file left by an earlier run under the same name is the same bytes).
    written: HashSet<String>,
    /// A write failed once already (a full disk): later failures are not said again.
    warned: bool,
    /// The last screens saved, as the device gave them: a trail shows the same few screens again
    /// and again, and comparing bytes is cheaper than scrubbing and hashing them each step.
    recent: Vec<(&'static str, Vec<u8>, SavedScreen)>,
}

/// How many distinct screens [`Screens::save`] remembers.
const RECENT: usize = 8;

/// A screen as the report refers to it.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedScreen {
    /// Relative to the run folder: `screens/<sha256>.svg`.
    pub path: String,
    pub size: Option<Point>,
}

impl Screens {
    /// Screens of the run in `run_dir`, scrubbed of `redaction`'s values before they are hashed or written.
    pub fn new(run_dir: &Path, redaction: Redaction) -> Screens {
        Screens {
            dir: run_dir.join(SCREENS_DIR),
            redaction,
            written: HashSet::new(),
            warned: false,
            recent: Vec::new(),
        }
    }

    /// Saves a device's screenshot: an SVG (scrubbed, see [`Screens::save_svg`]) or a PNG as it is
    /// (a device masks password fields itself; pixels cannot be scrubbed). `None` for another kind or
    /// when the write failed, which is said once per run, not once per step.
    pub fn save(&mut self, mime: &str, bytes: &[u8]) -> Option<SavedScreen> {
        if let Some((_, _, saved)) = self.recent.iter().find(|(m, b, _)| *m == mime && b == bytes) {
            return Some(saved.clone());
        }
        // The cache is keyed by kind too: the same bytes as another kind are not a saved screen.
        let (kind, saved): (&'static str, _) = match mime {
            "image/svg+xml" => match std::str::from_utf8(bytes) {
                Ok(svg) => ("image/svg+xml", self.save_svg(svg)),
                Err(_) => return None,
            },
            "image/png" => (
                "image/png",
                self.save_bytes(bytes, "png").map(|path| SavedScreen {
                    path,
                    size: png_size(bytes),
                }),
            ),
            _ => return None,
        };
        match saved {
            Ok(s) => {
                if self.recent.len() >= RECENT {
                    self.recent.remove(0);
                }
                self.recent.push((kind, bytes.to_vec(), s.clone()));
                Some(s)
            }
            Err(e) => {
                if !self.warned {
                    self.warned = true;
                    tracing::warn!(dir = %self.dir.display(), error = %e, "cannot save the run's screens (said once per run)");
                }
                None
            }
        }
    }

    /// Writes `bytes` once as `<sha256>.<ext>`; returns its path relative to the run folder.
    fn save_bytes(&mut self, bytes: &[u8], ext: &str) -> std::io::Result<String> {
        let hash: String = Sha256::digest(bytes)
            .iter()
            .fold(String::with_capacity(64), |mut hex, b| {
                use std::fmt::Write;
                let _ = write!(hex, "{b:02x}");
                hex
            });
        let name = format!("{hash}.{ext}");
        if !self.written.contains(&hash) {
            super::write(&self.dir, &name, bytes)?;
            self.written.insert(hash);
        }
        Ok(format!("{SCREENS_DIR}/{name}"))
    }

    /// `<run>/screens`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves an SVG screen (scrubbed first, so a secret can never reach the file nor change its name).
    pub fn save_svg(&mut self, svg: &str) -> std::io::Result<SavedScreen> {
        let svg = self.redaction.text(svg);
        Ok(SavedScreen {
            path: self.save_bytes(svg.as_bytes(), "svg")?,
            size: svg_size(&svg),
        })
    }
}

/// A PNG's size from its IHDR chunk (the first chunk, right after the 8-byte signature).
fn png_size(png: &[u8]) -> Option<Point> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" || &png[12..16] != b"IHDR" {
        return None;
    }
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    Some(Point {
        x: i64::from(be(16)),
        y: i64::from(be(20)),
    })
}

/// The `width` and `height` of an SVG's root element, in pixels, when they are plain numbers.
fn svg_size(svg: &str) -> Option<Point> {
    let start = svg.find("<svg")?;
    let tag = &svg[start..start + svg[start..].find('>')?];
    let attr = |name: &str| -> Option<i64> {
        let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let value = &tag[at..at + tag[at..].find('"')?];
        value
            .trim_end_matches("px")
            .parse::<f64>()
            .ok()
            .map(|v| v.round() as i64)
    };
    Some(Point {
        x: attr("width")?,
        y: attr("height")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1080\" height=\"2400\"><text>hunter2 here</text></svg>";

    #[test]
    fn a_screen_is_written_once_scrubbed_and_named_by_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let mut screens = Screens::new(dir.path(), Redaction::new(&["hunter2".to_string()]));
        let a = screens.save_svg(SVG).unwrap();
        let b = screens.save_svg(SVG).unwrap();
        let c = screens.save_svg(&SVG.replace("here", "there")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.path, c.path);
        assert_eq!(a.size, Some(Point { x: 1080, y: 2400 }));
        assert!(a.path.starts_with("screens/") && a.path.ends_with(".svg") && a.path.len() == 8 + 64 + 4);
        let files: Vec<_> = std::fs::read_dir(screens.dir()).unwrap().flatten().collect();
        assert_eq!(files.len(), 2, "one file per distinct screen");
        let text = std::fs::read_to_string(dir.path().join(&a.path)).unwrap();
        assert!(!text.contains("hunter2") && text.contains("*** here"), "{text}");
        // Control: without the redaction the value is there, so the check above can see it.
        let mut plain = Screens::new(&dir.path().join("plain"), Redaction::default());
        let p = plain.save_svg(SVG).unwrap();
        assert!(
            std::fs::read_to_string(dir.path().join("plain").join(&p.path))
                .unwrap()
                .contains("hunter2")
        );
    }

    #[test]
    fn a_png_is_kept_as_a_file_with_its_size_and_a_failed_write_is_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1080u32.to_be_bytes());
        png.extend_from_slice(&2400u32.to_be_bytes());
        let mut screens = Screens::new(dir.path(), Redaction::default());
        let saved = screens.save("image/png", &png).expect("saved");
        assert!(saved.path.ends_with(".png"));
        assert_eq!(saved.size, Some(Point { x: 1080, y: 2400 }));
        assert_eq!(std::fs::read(dir.path().join(&saved.path)).unwrap(), png);
        assert_eq!(screens.save("image/jpeg", &png), None, "an unknown kind is not saved");
        // A run folder that is a file: every write fails, and the run goes on without screens.
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let mut broken = Screens::new(&file, Redaction::default());
        assert_eq!(broken.save("image/png", &png), None);
        assert!(broken.warned);
        assert_eq!(png_size(b"not a png at all, not at all"), None);
    }

    #[test]
    fn the_size_is_read_from_the_root_element_only() {
        assert_eq!(
            svg_size("<svg width=\"10\" height=\"20.4px\">"),
            Some(Point { x: 10, y: 20 })
        );
        assert_eq!(
            svg_size("<svg viewBox=\"0 0 1 1\"><rect width=\"5\" height=\"5\"/></svg>"),
            None
        );
        assert_eq!(svg_size("no svg"), None);
    }
}
