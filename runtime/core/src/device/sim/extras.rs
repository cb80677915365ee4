//! What the simulated device does for the platform's extras and for scrolling. Its decisions
//! (docs/android.md, "On the simulated device"): the clipboard, app data, the installed app and the
//! keyboard work as on a phone; permissions and demo mode have nothing to act on and succeed doing
//! nothing; a shell, broadcasts, files, URLs and the network are refused (the `Device` defaults).

use super::{DeviceError, SimDevice, State};

impl SimDevice {
    /// Whether the keyboard is up: a field is focused and the keyboard was not hidden since.
    pub fn keyboard_shown(&self) -> bool {
        self.state.foreground && self.state.focus.is_some() && self.state.keyboard
    }

    /// The clipboard's text, as a phone's user would paste it.
    pub fn clipboard_text(&self) -> Option<&str> {
        self.clipboard.as_deref()
    }

    /// Moves the content of the scroll container under `at` up by `dy` pixels (down when negative),
    /// within its ends. No container there: nothing scrolls.
    pub(super) fn scroll(&mut self, at: (i32, i32), dy: i32) {
        if !self.state.foreground || dy == 0 {
            return;
        }
        let s = self.state.current;
        let Some(screen) = self.app.screens.get(s) else {
            return;
        };
        // Containers do not nest, so their own bounds never move.
        let container = screen
            .nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.scroll.is_some_and(|max| max > 0) && n.bounds.contains(at.0, at.1));
        if let Some((c, node)) = container {
            let max = node.scroll.unwrap_or(0);
            let offset = self.state.offsets.entry((s, c)).or_default();
            *offset = offset.saturating_add(dy).clamp(0, max);
        }
    }

    /// `pm clear`: the app's data goes and the app stops (the launcher shows).
    pub(super) fn clear_data(&mut self, app_id: &str) -> Result<(), DeviceError> {
        if app_id != self.app.id {
            return Err(DeviceError::Action(format!(
                "the app `appId` names is not installed: this simulated device runs only `{}`",
                self.app.id
            )));
        }
        self.state = State::fresh(&self.app);
        self.state.foreground = false;
        Ok(())
    }

    /// `am force-stop`: the process goes (where it was, focus, typed text; toggles stand for saved
    /// settings and stay) and the launcher shows; the next launch starts at `start`.
    pub fn stop(&mut self, app_id: &str) -> Result<(), DeviceError> {
        if app_id != self.app.id {
            return Err(DeviceError::Action(format!(
                "the app `appId` names is not installed: this simulated device runs only `{}`",
                self.app.id
            )));
        }
        let checked = std::mem::take(&mut self.state.checked);
        self.state = State::fresh(&self.app);
        self.state.checked = checked;
        self.state.foreground = false;
        Ok(())
    }

    /// The simulated app asks for no permission, so a grant has nothing to change: `false`, as a
    /// phone answers for a permission the app does not declare. Another app id is not installed.
    pub(super) fn no_permissions(&self, app_id: &str) -> Result<bool, DeviceError> {
        if app_id != self.app.id {
            return Err(DeviceError::Action(format!(
                "the app `appId` names is not installed: this simulated device runs only `{}`",
                self.app.id
            )));
        }
        Ok(false)
    }
}
