//! Screens as pixels: a device's screenshot (the simulated device's SVG, a phone's or a browser's
//! PNG) decoded or rasterized into a [`Picture`], scaled to fit a size, painted over where it must
//! not show, and encoded as PNG. The agent's vision and the report's storyboard both start here.
//!
//! SVG text is drawn with the system's fonts (fontdb, loaded once per process): a sans-serif face
//! that is there (DejaVu Sans, Liberation Sans, Noto Sans, ... or the first face found) stands for
//! `sans-serif`. With no font at all the boxes still draw and the text does not; [`font_faces`]
//! tells which case this is.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{self, Pixmap};
use resvg::usvg;

use trailblaze_core::device::{Bounds, Screenshot};

/// The largest picture made, either side: a screenshot bigger than this is refused, not allocated.
const MAX_SIDE: u32 = 16_384;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RasterError {
    #[error("the screen's SVG does not parse: {0}")]
    Svg(String),
    #[error("the screen's PNG does not decode: {0}")]
    Png(String),
    #[error("a `{0}` screen cannot be pictured (PNG and SVG can)")]
    Kind(String),
    #[error("a picture of {width}×{height} pixels is empty or too large")]
    Size { width: u32, height: u32 },
    #[error("the picture cannot be encoded: {0}")]
    Encode(String),
}

/// How large a picture may be: its long side, its short side and its area, each at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    pub long_side: u32,
    pub short_side: u32,
    pub pixels: u64,
}

impl Fit {
    /// No bound but `MAX_SIDE` (16,384 pixels a side).
    pub const ANY: Fit = Fit {
        long_side: MAX_SIDE,
        short_side: MAX_SIDE,
        pixels: u64::MAX,
    };

    /// The size `width` × `height` scales down to (never up), keeping its aspect; at least 1×1.
    pub fn size(&self, width: u32, height: u32) -> (u32, u32) {
        let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
        let (long, short) = (w.max(h), w.min(h));
        let scale = [
            1.0,
            f64::from(self.long_side) / long,
            f64::from(self.short_side) / short,
            (self.pixels as f64 / (w * h)).sqrt(),
        ]
        .into_iter()
        .fold(f64::INFINITY, f64::min);
        // Floor: a side rounded up could break the bound it was scaled to.
        let side = |v: f64| ((v * scale).floor() as u32).max(1);
        (side(w), side(h))
    }
}

/// An RGBA picture (premultiplied alpha inside; PNG and [`Picture::rgba`] give it straight).
#[derive(Clone)]
pub struct Picture {
    pixmap: Pixmap,
}

impl std::fmt::Debug for Picture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Picture({}×{})", self.width(), self.height())
    }
}

impl Picture {
    /// A device's screenshot as pixels, scaled down to `fit`. An SVG is drawn at the size it says
    /// (its `width`/`height`), or smaller to fit; a PNG is decoded, then scaled.
    pub fn from_screenshot(shot: &Screenshot, fit: Fit) -> Result<Picture, RasterError> {
        match shot.mime {
            "image/svg+xml" => Picture::from_svg(&shot.bytes, fit),
            "image/png" => Picture::from_png(&shot.bytes)?.scaled(fit),
            other => Err(RasterError::Kind(other.to_string())),
        }
    }

    /// An SVG document drawn to fit.
    pub fn from_svg(svg: &[u8], fit: Fit) -> Result<Picture, RasterError> {
        let options = usvg::Options {
            fontdb: fonts().clone(),
            ..usvg::Options::default()
        };
        let tree = usvg::Tree::from_data(svg, &options).map_err(|e| RasterError::Svg(e.to_string()))?;
        let size = tree.size();
        let (w, h) = fit.size(size.width().ceil() as u32, size.height().ceil() as u32);
        let mut pixmap = new_pixmap(w, h)?;
        let transform = tiny_skia::Transform::from_scale(w as f32 / size.width(), h as f32 / size.height());
        resvg::render(&tree, transform, &mut pixmap.as_mut());
        Ok(Picture { pixmap })
    }

    /// A PNG decoded as it is.
    pub fn from_png(png: &[u8]) -> Result<Picture, RasterError> {
        // The header's size first: a hostile PNG must not make us allocate gigabytes.
        if let Some((w, h)) = png_size(png)
            && (w > MAX_SIDE || h > MAX_SIDE)
        {
            return Err(RasterError::Size { width: w, height: h });
        }
        Pixmap::decode_png(png)
            .map(|pixmap| Picture { pixmap })
            .map_err(|e| RasterError::Png(e.to_string()))
    }

    pub fn width(&self) -> u32 {
        self.pixmap.width()
    }

    pub fn height(&self) -> u32 {
        self.pixmap.height()
    }

    /// This picture scaled down to `fit` (itself when it fits). Halved with a bilinear filter
    /// until within twice the size, then a last bicubic step: one bicubic pass over a large ratio
    /// skips pixels, and text would break up.
    pub fn scaled(self, fit: Fit) -> Result<Picture, RasterError> {
        let (w, h) = fit.size(self.width(), self.height());
        let mut current = self;
        while current.width() / 2 >= w && current.height() / 2 >= h && current.width() > w {
            let (hw, hh) = ((current.width() / 2).max(1), (current.height() / 2).max(1));
            current = current.resized(hw, hh, tiny_skia::FilterQuality::Bilinear)?;
        }
        if (current.width(), current.height()) == (w, h) {
            return Ok(current);
        }
        current.resized(w, h, tiny_skia::FilterQuality::Bicubic)
    }

    fn resized(&self, w: u32, h: u32, quality: tiny_skia::FilterQuality) -> Result<Picture, RasterError> {
        let mut pixmap = new_pixmap(w, h)?;
        let sx = w as f32 / self.width() as f32;
        let sy = h as f32 / self.height() as f32;
        pixmap.draw_pixmap(
            0,
            0,
            self.pixmap.as_ref(),
            &tiny_skia::PixmapPaint {
                quality,
                ..tiny_skia::PixmapPaint::default()
            },
            tiny_skia::Transform::from_scale(sx, sy),
            None,
        );
        Ok(Picture { pixmap })
    }

    /// Paints `bounds` (in the device's pixels, on a screen of `screen` = (width, height)) with an
    /// opaque `rgb`, scaled to this picture; a rectangle off the picture paints nothing.
    pub fn cover(&mut self, bounds: Bounds, screen: (i32, i32), rgb: [u8; 3]) {
        let (sw, sh) = (screen.0.max(1) as f32, screen.1.max(1) as f32);
        let (pw, ph) = (self.width() as f32, self.height() as f32);
        // Outward to whole pixels: a field's edge must not leave a sliver of its text.
        let left = (bounds.left as f32 * pw / sw).floor().clamp(0.0, pw);
        let top = (bounds.top as f32 * ph / sh).floor().clamp(0.0, ph);
        let right = (bounds.right as f32 * pw / sw).ceil().clamp(0.0, pw);
        let bottom = (bounds.bottom as f32 * ph / sh).ceil().clamp(0.0, ph);
        if right <= left || bottom <= top {
            return;
        }
        let Some(rect) = tiny_skia::Rect::from_ltrb(left, top, right, bottom) else {
            return;
        };
        let mut paint = tiny_skia::Paint::default();
        paint.set_color_rgba8(rgb[0], rgb[1], rgb[2], 255);
        paint.anti_alias = false;
        self.pixmap
            .fill_rect(rect, &paint, tiny_skia::Transform::identity(), None);
    }

    /// A blank (white) picture of `w`×`h`, to draw others on.
    pub(crate) fn blank(w: u32, h: u32) -> Result<Picture, RasterError> {
        let mut pixmap = new_pixmap(w, h)?;
        pixmap.fill(tiny_skia::Color::WHITE);
        Ok(Picture { pixmap })
    }

    /// `other` drawn onto this picture with its top left at (`x`, `y`).
    pub(crate) fn draw(&mut self, other: &Picture, x: i32, y: i32) {
        let paint = tiny_skia::PixmapPaint::default();
        let at = tiny_skia::Transform::identity();
        self.pixmap.draw_pixmap(x, y, other.pixmap.as_ref(), &paint, at, None);
    }

    /// The picture as PNG.
    pub fn to_png(&self) -> Result<Vec<u8>, RasterError> {
        self.pixmap.encode_png().map_err(|e| RasterError::Encode(e.to_string()))
    }

    /// Straight (not premultiplied) RGBA bytes, row by row.
    pub fn rgba(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pixmap.data().len());
        for p in self.pixmap.pixels() {
            let c = p.demultiply();
            out.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
        }
        out
    }
}

fn new_pixmap(w: u32, h: u32) -> Result<Pixmap, RasterError> {
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(RasterError::Size { width: w, height: h });
    }
    Pixmap::new(w, h).ok_or(RasterError::Size { width: w, height: h })
}

/// A PNG's size from its IHDR chunk.
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" || &png[12..16] != b"IHDR" {
        return None;
    }
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    Some((be(16), be(20)))
}

/// Families that stand for `sans-serif` when the system has them, best first.
const SANS: [&str; 6] = [
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "Arial",
    "Helvetica",
    "Roboto",
];

/// The system's fonts, loaded once per process.
fn fonts() -> &'static Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        let families: Vec<String> = db
            .faces()
            .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
            .collect();
        let sans = SANS
            .iter()
            .find(|want| families.iter().any(|f| f == *want))
            .map(|s| s.to_string())
            .or_else(|| families.first().cloned());
        if let Some(family) = sans {
            // The faces the pictures draw with are mapped once for the process: each text laid out
            // opened (and, without a mapping, read whole) the font's file again, ~280 times for a
            // 2,000-step run's storyboard.
            let used: Vec<_> = db
                .faces()
                .filter(|f| f.families.iter().any(|(name, _)| *name == family))
                .map(|f| f.id)
                .collect();
            for id in used {
                // SAFETY: the file is mapped, not copied: one changed in place while the process
                // runs could show through (what fontdb's own mapping on each use risks too);
                // package managers replace font files by renaming, which a mapping survives.
                let _ = unsafe { db.make_shared_face_data(id) };
            }
            db.set_sans_serif_family(family);
        } else {
            tracing::warn!("no system font found: pictures of the simulated screens show no text");
        }
        Arc::new(db)
    })
}

/// How many font faces the system gave (0: pictures draw no text).
pub fn font_faces() -> usize {
    fonts().len()
}

/// Paints the fields a secret was typed into over a device's PNG ([`trailblaze_core::parts::Painter`]),
/// at the picture's own size.
pub struct SecretPainter;

impl trailblaze_core::parts::Painter for SecretPainter {
    fn cover(&self, shot: &Screenshot, fields: &trailblaze_core::snapshot::SecretFields) -> Result<Screenshot, String> {
        let mut picture = Picture::from_screenshot(shot, Fit::ANY).map_err(|e| e.to_string())?;
        for b in &fields.bounds {
            picture.cover(*b, fields.screen, trailblaze_core::parts::SECRET_MASK);
        }
        Ok(Screenshot {
            mime: "image/png",
            bytes: picture.to_png().map_err(|e| e.to_string())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trailblaze_core::device::Device;
    use trailblaze_core::device::sim::SimDevice;

    fn sim_shot() -> Screenshot {
        let app = "id: com.example.x\nstart: a\nscreens:\n  a:\n    nodes:\n      - { id: t, class: android.widget.TextView, text: Hello there }\n      - { id: e, class: android.widget.EditText, hint: Email, editable: true }\n";
        let mut sim = SimDevice::from_app_yaml(app, std::path::Path::new("app.yaml")).unwrap();
        sim.launch_app("com.example.x", trailblaze_core::device::LaunchMode::Reinstall)
            .unwrap();
        sim.screenshot().unwrap()
    }

    /// Pixels darker than the background, inside `(l, t, r, b)`.
    fn ink(p: &Picture, (l, t, r, b): (u32, u32, u32, u32)) -> usize {
        let rgba = p.rgba();
        let mut n = 0;
        for y in t..b.min(p.height()) {
            for x in l..r.min(p.width()) {
                let i = ((y * p.width() + x) * 4) as usize;
                if rgba[i] < 128 && rgba[i + 1] < 128 && rgba[i + 2] < 128 {
                    n += 1;
                }
            }
        }
        n
    }

    #[test]
    fn a_sim_screen_is_drawn_at_its_size_with_its_text() {
        let p = Picture::from_screenshot(&sim_shot(), Fit::ANY).unwrap();
        // The sim's SVG says a third of its 1080×2400 screen.
        assert_eq!((p.width(), p.height()), (360, 800));
        // The first node's row (its text's baseline is near the top): dark text pixels when fonts
        // exist; with none, the box is drawn and the text is not, which this says.
        let text_row = (0, 0, 360, 80);
        if font_faces() > 0 {
            assert!(ink(&p, text_row) > 30, "the text is drawn ({} faces)", font_faces());
        } else {
            assert_eq!(ink(&p, text_row), 0);
        }
        // Control: an empty stretch of the screen has no ink.
        assert_eq!(ink(&p, (0, 600, 360, 800)), 0);
        let png = p.to_png().unwrap();
        assert_eq!(png_size(&png), Some((360, 800)));
        let back = Picture::from_png(&png).unwrap();
        assert_eq!(back.rgba(), p.rgba(), "PNG keeps every pixel");
    }

    #[test]
    fn a_picture_scales_down_to_fit_never_up() {
        let fit = Fit {
            long_side: 1568,
            short_side: 768,
            pixels: 1_150_000,
        };
        assert_eq!(fit.size(1080, 2400), (705, 1568));
        assert_eq!(fit.size(360, 800), (360, 800), "never up");
        assert_eq!(fit.size(4000, 1000), (1568, 392));
        let (w, h) = fit.size(2000, 2000);
        assert!(u64::from(w) * u64::from(h) <= 1_150_000 && w == h, "{w}×{h}");
        let p = Picture::from_screenshot(&sim_shot(), Fit { long_side: 400, ..fit }).unwrap();
        assert_eq!((p.width(), p.height()), (180, 400));
        let small = p.scaled(Fit { long_side: 100, ..fit }).unwrap();
        assert_eq!((small.width(), small.height()), (45, 100));
    }

    #[test]
    fn cover_paints_the_bounds_scaled_to_the_picture() {
        let mut p = Picture::from_screenshot(&sim_shot(), Fit::ANY).unwrap();
        let before = p.rgba();
        p.cover(
            Bounds {
                left: 300,
                top: 300,
                right: 600,
                bottom: 600,
            },
            (1080, 2400),
            [0, 0, 0],
        );
        // 1080×2400 → 360×800, a third: (300, 300)-(600, 600) is (100, 100)-(200, 200).
        assert_eq!(ink(&p, (100, 100, 200, 200)), 100 * 100);
        let after = p.rgba();
        let changed = before.chunks(4).zip(after.chunks(4)).filter(|(a, b)| a != b).count();
        assert!(changed <= 100 * 100, "nothing outside the bounds changes ({changed})");
        // Off the picture: nothing.
        p.cover(
            Bounds {
                left: -50,
                top: -50,
                right: -1,
                bottom: -1,
            },
            (1080, 2400),
            [0, 0, 0],
        );
        assert_eq!(p.rgba(), after);
    }

    #[test]
    fn bad_and_huge_inputs_are_errors() {
        let bad = Screenshot {
            mime: "image/svg+xml",
            bytes: b"<svg".to_vec(),
        };
        assert!(matches!(
            Picture::from_screenshot(&bad, Fit::ANY),
            Err(RasterError::Svg(_))
        ));
        let jpeg = Screenshot {
            mime: "image/jpeg",
            bytes: vec![0xff, 0xd8],
        };
        assert!(matches!(
            Picture::from_screenshot(&jpeg, Fit::ANY),
            Err(RasterError::Kind(_))
        ));
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&100_000u32.to_be_bytes());
        png.extend_from_slice(&100_000u32.to_be_bytes());
        assert!(matches!(Picture::from_png(&png), Err(RasterError::Size { .. })));
        assert!(matches!(Picture::from_png(b"not a png"), Err(RasterError::Png(_))));
        let huge = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100000\" height=\"10\"/>";
        // Scaled to fit, a huge SVG is no huge allocation.
        let p = Picture::from_svg(
            huge.as_bytes(),
            Fit {
                long_side: 1000,
                short_side: 1000,
                pixels: 1_000_000,
            },
        )
        .unwrap();
        assert_eq!(p.width(), 1000);
        let capped = Picture::from_svg(huge.as_bytes(), Fit::ANY).unwrap();
        assert_eq!((capped.width(), capped.height()), (MAX_SIDE, 1));
    }
}
