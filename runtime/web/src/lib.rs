//! `--device web`: a page of headless Chromium driven over the DevTools Protocol ([`device`]), and
//! the `web_*` tools that act on it ([`tools`]). [`parts`] adds both to a project.

pub mod device;
pub mod tools;

pub use device::WebDevice;

/// What this crate adds to a project: the `web` device kind and the tools that drive a page.
pub fn parts() -> trailblaze_core::parts::Parts {
    trailblaze_core::parts::Parts::default()
        .device(device::Kind)
        .tools(tools::entries)
}
