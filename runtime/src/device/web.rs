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
pub mod keys;
mod launch;
mod page;
mod serve;
mod session;
mod shared;
mod ws;

pub use browser::Browser;
pub use cdp::CdpError;
pub use launch::{find_chromium, install_signal_cleanup, kill_all};
pub use page::PageError;
pub use session::{Checks, Lines, WebDevice};
pub use shared::KeepBrowser;
