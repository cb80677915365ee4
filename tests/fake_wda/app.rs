//! What the fake WDA drives: one app on the phone. The server owns the process (not running, in the
//! background, in front) and the home screen; the app owns its screens and data.

use super::element::Element;

/// The app's screen in points and its scale (pixels per point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    pub width: i32,
    pub height: i32,
    pub scale: i32,
    /// The status bar's height in points (`/wda/screen`); 0 for a screen without one.
    pub status_bar: i32,
}

/// An app behind the fake WDA. Points are floats, as W3C actions give them.
pub trait FakeApp: Send {
    /// `com.apple.MobileAddressBook`
    fn bundle_id(&self) -> &str;
    /// The name the home screen shows and the application element's label.
    fn name(&self) -> &str;
    fn screen(&self) -> Screen;
    /// A new process: the first screen, saved data kept.
    fn launch(&mut self);
    /// Back to the foreground as it was left.
    fn resume(&mut self) {}
    /// Sent to the background (the home screen shows).
    fn background(&mut self) {}
    /// The process ends.
    fn terminate(&mut self) {}
    /// The application element's children: its window(s), the keyboard when it is up.
    fn windows(&mut self) -> Vec<Element>;
    fn tap(&mut self, x: f64, y: f64);
    fn long_press(&mut self, x: f64, y: f64) {
        self.tap(x, y);
    }
    fn swipe(&mut self, from: (f64, f64), to: (f64, f64), millis: u64);
    fn keyboard_shown(&self) -> bool;
    /// Types into the focused field (only called while the keyboard is up).
    fn type_text(&mut self, text: &str);
    fn delete_backward(&mut self);
    fn press_return(&mut self);
    /// Hides the keyboard; `false` when none was up.
    fn dismiss_keyboard(&mut self) -> bool;
    /// A URL opened while the app is in front; `true` when the app handled it.
    fn open_url(&mut self, url: &str) -> bool {
        let _ = url;
        false
    }
}
