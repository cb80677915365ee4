//! One Chromium for the web devices of a run. A run's trails (one after another, or `--jobs` at
//! once) each open an isolated context (own cookies, storage and cache) in the same browser instead
//! of starting a browser each: a start costs more than a short trail, and eight browsers at once
//! cost eight times the memory. While a [`KeepBrowser`] lives the browser outlasts its devices (so
//! the next trail finds it); after that the last device to let go closes it, as before. A browser
//! whose connection closed (it crashed) is never handed out again: the next device starts a new one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::browser::Browser;
use super::cdp::lock;

/// What a browser was started with: devices share it only when these match.
type Key = (bool, (u32, u32));

/// Browsers started for sharing, by key.
static STARTED: Mutex<Vec<(Key, Weak<Browser>)>> = Mutex::new(Vec::new());
/// Browsers held while a run keeps them.
static KEPT: Mutex<Vec<Arc<Browser>>> = Mutex::new(Vec::new());
/// Live [`KeepBrowser`]s.
static KEEPERS: AtomicUsize = AtomicUsize::new(0);

/// The running browser for `headed` and `window`, or a new one.
pub(super) fn browser(headed: bool, window: (u32, u32)) -> Result<Arc<Browser>, String> {
    let key = (headed, window);
    // Held while starting, so jobs that start together share the one browser they wait for.
    let mut started = lock(&STARTED);
    started.retain(|(_, w)| w.strong_count() > 0);
    let live = started
        .iter()
        .filter(|(k, _)| *k == key)
        .filter_map(|(_, w)| w.upgrade())
        .find(|b| !b.connection().is_closed());
    if let Some(b) = live {
        return Ok(b);
    }
    let b = Browser::launch(headed, window)?;
    started.push((key, Arc::downgrade(&b)));
    if KEEPERS.load(Ordering::SeqCst) > 0 {
        let mut kept = lock(&KEPT);
        kept.retain(|k| !k.connection().is_closed());
        kept.push(b.clone());
    }
    Ok(b)
}

/// Keeps the browsers started while it lives (a run's), so trails one after another share one.
pub struct KeepBrowser(());

impl KeepBrowser {
    pub fn new() -> KeepBrowser {
        KEEPERS.fetch_add(1, Ordering::SeqCst);
        KeepBrowser(())
    }
}

impl Default for KeepBrowser {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for KeepBrowser {
    fn drop(&mut self) {
        if KEEPERS.fetch_sub(1, Ordering::SeqCst) == 1 {
            // Outside the lock: dropping the last hold closes the browser, which takes a moment.
            let kept = std::mem::take(&mut *lock(&KEPT));
            drop(kept);
        }
    }
}
