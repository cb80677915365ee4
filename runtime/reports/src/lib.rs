//! Pictures for trailblaze's reports and its agent: a screen (the simulated device's SVG, a
//! phone's or a page's PNG) rasterized and scaled ([`raster`]), and each trail's storyboard as an
//! animated GIF ([`storyboard`], added to a run by [`parts`]). Image codecs live here, not in the core.

pub mod export;
pub mod raster;
pub mod storyboard;

/// What this crate adds to a project: the storyboard GIF a run writes when its trails are done.
pub fn parts() -> trailblaze_core::parts::Parts {
    trailblaze_core::parts::Parts::default()
        .run_files(storyboard::Storyboards)
        .painter(raster::SecretPainter)
}
