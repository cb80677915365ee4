//! A trail's trace on the web: every request as a HAR entry, the page's console and uncaught errors,
//! and (when asked) the page's screencast, kept from [`Device::trace_begin`] to
//! [`Device::trace_end`]. The events are kept on the connection's reader thread, so keeping one is
//! a few field copies under a lock of the trace's own; a failed request's body is asked for by a
//! thread of the trace's, never by the reader (which would wait for its own answer) nor by a step.
//!
//! [`Device::trace_begin`]: trailblaze_core::device::Device::trace_begin
//! [`Device::trace_end`]: trailblaze_core::device::Device::trace_end

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trailblaze_core::device::trace::{DeviceTrace, TraceOptions, Video};

use super::cdp::lock;
use super::har;

use super::keeper::{BODIES_WAIT, Keeper, SCREENCAST, SECRET_MARGIN_MS};
use super::page::Page;
use super::session::WebDevice;

impl WebDevice {
    /// Starts a trace (ending one that is running): see the module's doc.
    pub(super) fn begin_trace(&mut self, opts: &TraceOptions) {
        if self.trace.is_some() {
            let _ = self.end_trace();
        }
        let keeper = Keeper::start(self.browser.connection(), opts.video);
        for p in self.pages() {
            p.shared.set_trace(Some(keeper.clone()));
        }
        if opts.video
            && let Err(e) = start_screencast(&self.page, self.default_deadline())
        {
            lock(&keeper.kept)
                .notes
                .push(format!("the page's screencast did not start ({e}): no video"));
        }
        self.trace = Some(keeper);
    }

    /// Ends the trace: stops the screencast, waits a moment for bodies still being fetched, and
    /// scrubs what the page holds in its secret fields from every text kept.
    pub(super) fn end_trace(&mut self) -> DeviceTrace {
        let Some(keeper) = self.trace.take() else {
            return DeviceTrace::default();
        };
        if keeper.video {
            let _ = self.page.call(
                "Page.stopScreencast",
                json!({}),
                Instant::now() + Duration::from_secs(2),
            );
        }
        for p in self.pages() {
            p.shared.set_trace(None);
        }
        keeper.wait_for_bodies(Instant::now() + BODIES_WAIT);
        let secret_since = lock(&keeper.kept).secret_since;
        let mut trace = keeper.finish();
        if let Some(since) = secret_since {
            self.drop_frames_showing_secrets(&mut trace, since);
        }
        // The core scrubs the session's secrets; a value typed into a secret field is known here.
        let secrets = self.secret_values(self.default_deadline()).unwrap_or_default();
        let redaction = trailblaze_core::secret::Redaction::new(&secrets);
        if !redaction.is_empty() {
            for e in &mut trace.network {
                redaction.value(e);
            }
            for l in &mut trace.console {
                if let std::borrow::Cow::Owned(t) = redaction.text(&l.text) {
                    l.text = t;
                }
            }
        }
        trace
    }

    /// A frame is a picture of the page, not masked as screenshots are: when a field holding a
    /// secret shows it as text, the frames from a moment before it was typed on are dropped.
    fn drop_frames_showing_secrets(&self, trace: &mut DeviceTrace, since: f64) {
        let Some(Video::Frames(frames)) = &mut trace.video else {
            return;
        };
        let deadline = self.default_deadline();
        // A page that does not answer is taken to show it.
        let shown = self.captured.frames.iter().any(|f| {
            self.page
                .agent(f, "__tb.secretsShown()", deadline)
                .map_or(true, |n| n.as_u64() != Some(0))
        });
        if !shown {
            return;
        }
        let before = frames.len();
        frames.retain(|f| f.unix_ms < since - SECRET_MARGIN_MS);
        trace.notes.push(format!(
            "a secret was typed into a field that shows it as text: {} video frames from {} on were not kept",
            before - frames.len(),
            har::iso8601(since - SECRET_MARGIN_MS)
        ));
        if frames.is_empty() {
            trace.video = None;
        }
    }

    /// The device now shows another page (a popup, or its opener again): the trace follows it.
    pub(super) fn trace_follows(&mut self, from: &Page) {
        let Some(keeper) = &self.trace else { return };
        self.page.shared.set_trace(Some(keeper.clone()));
        if keeper.video {
            // Not waited for: a step's popup must not wait on the screencast.
            from.send("Page.stopScreencast", json!({}));
            self.page.send("Page.startScreencast", screencast());
        }
    }
}

fn start_screencast(page: &Page, deadline: Instant) -> Result<(), super::cdp::CdpError> {
    page.call("Page.startScreencast", screencast(), deadline).map(|_| ())
}

/// `Page.startScreencast`'s parameters: JPEG, at most 1280 px wide (and, as the protocol needs a
/// height too, a tall page's 4 widths), every frame.
fn screencast() -> Value {
    let (format, quality, width) = SCREENCAST;
    json!({ "format": format, "quality": quality, "maxWidth": width, "maxHeight": width * 4, "everyNthFrame": 1 })
}
