//! `--device web`: a page of headless Chromium driven over the Chrome DevTools Protocol. A
//! [`Browser`] (the process, or a running browser attached to) is shared; each [`WebDevice`] owns
//! one isolated browser context and one page in it. The snapshot is the page's accessibility tree
//! in the phone's view-tree shape (see `capture`), so refs, selectors and the snapshot cache work
//! as on a phone; the `web_*` tools reach the page through [`WebDevice`]'s own methods.
//!
//! Why a thin client over the protocol rather than a CDP crate: see docs/web.md ("Why not a CDP
//! crate"). In short, the `Device` trait is synchronous and this client is too (no runtime to
//! block on), it costs no generated bindings to compile, and it owns the browser's lifecycle.

mod address;
mod browser;
mod capture;
mod cdp;
mod element;
mod events;
mod har;
mod keeper;
pub mod keys;
mod launch;
mod page;
mod serve;
mod session;
mod shared;
mod trace;
mod ws;

pub use browser::Browser;
pub use cdp::CdpError;
pub use launch::{find_chromium, install_signal_cleanup, kill_all};
pub use page::PageError;
pub use session::{Checks, Lines, WebDevice};
pub use shared::KeepBrowser;

/// The `web` device kind: a page in the process's shared browser, or in a running one.
pub struct Kind;

impl trailblaze_core::parts::DeviceKind for Kind {
    fn connect(
        &self,
        spec: &trailblaze_core::device::DeviceSpec,
    ) -> Option<Result<Box<dyn trailblaze_core::device::Device>, trailblaze_core::device::DeviceError>> {
        let trailblaze_core::device::DeviceSpec::Web(opts) = spec else {
            return None;
        };
        Some(WebDevice::start_shared(opts.clone()).map(|d| Box::new(d) as Box<dyn trailblaze_core::device::Device>))
    }

    /// One browser for a run's web trails (started by the first), each in a context of its own.
    fn hold_for_run(&self) -> Option<Box<dyn std::any::Any>> {
        Some(Box::new(KeepBrowser::new()))
    }
}
