//! The original's cross-platform mobile tools: the keyboard, URLs, the network, app data, installed
//! apps and the clipboard. Each asks the device (`Device` extras); a device without the extra refuses.

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::{AppIds, Apps, Cleared, ClipboardSet, KeyboardHidden, Network, Opened};
use super::{HIDDEN_READ_ONLY, MOBILE};
use crate::device::Platform;
use crate::tool::exec::type_text;
use crate::tool::results::{self, Typed};
use crate::tool::{BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Hides the on-screen keyboard, e.g. after typing into a field, so it no longer covers the screen.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HideKeyboard {}

impl BuiltinTool for HideKeyboard {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<KeyboardHidden>()
    }
    const NAME: &'static str = "hideKeyboard";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let hidden = cx.screen.with_device(|d| d.hide_keyboard())?;
        results::done(KeyboardHidden { hidden })
    }
}

/// Opens a URL on the device, in the browser or the app that handles its link.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OpenUrl {
    /// The URL to open, e.g. `https://example.com/page`.
    pub url: String,
    /// Why the caller opened it (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)] // accepted so those recordings parse; nothing reads it
    pub reasoning: Option<String>,
}

impl BuiltinTool for OpenUrl {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Opened>()
    }
    const NAME: &'static str = "openUrl";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    // On the web it navigates the page, as the original's does in a browser.
    const PLATFORMS: &'static [Platform] = &[Platform::Android, Platform::Ios, Platform::Web];
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let url = self.url.trim();
        if url.is_empty() {
            return Err("`url` is empty".into());
        }
        cx.screen.with_device(|d| d.open_url(url))?;
        results::done(Opened { opened: url.to_owned() })
    }
}

/// Takes the device offline (airplane mode) or back online.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkConnection {
    /// `true` to connect the device to the network, `false` to take it offline.
    pub connected: bool,
}

impl BuiltinTool for NetworkConnection {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Network>()
    }
    const NAME: &'static str = "networkConnection";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.set_network(self.connected))?;
        results::done(Network {
            connected: self.connected,
        })
    }
}

/// Clears an app's data, as if it had just been installed; the app stops.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClearAppData {
    /// The app's id, e.g. `com.example.app`.
    pub app_id: String,
}

impl BuiltinTool for ClearAppData {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Cleared>()
    }
    const NAME: &'static str = "mobile_clearAppData";
    const FLAGS: ToolFlags = ToolFlags::HIDDEN;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.clear_app_data(&self.app_id))?;
        results::done(Cleared { cleared: self.app_id })
    }
}

/// Lists the ids of the apps installed on the device, sorted (`{appIds: [...]}`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInstalledApps {}

impl BuiltinTool for ListInstalledApps {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<AppIds>()
    }
    const NAME: &'static str = "mobile_listInstalledApps";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut app_ids = cx.screen.with_device(|d| d.installed_app_ids())?;
        app_ids.sort();
        app_ids.dedup();
        results::done(AppIds { app_ids })
    }
}

/// Lists the apps installed on the device with what it reports about each (system app or not,
/// version, build number, install path), sorted by id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListInstalledAppsDetailed {
    /// Include the platform's own apps; `false` lists only the apps users installed.
    #[serde(default = "yes")]
    pub include_system_apps: bool,
}

fn yes() -> bool {
    true
}

impl BuiltinTool for ListInstalledAppsDetailed {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Apps>()
    }
    const NAME: &'static str = "mobile_listInstalledAppsDetailed";
    const FLAGS: ToolFlags = HIDDEN_READ_ONLY;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let mut apps = cx.screen.with_device(|d| d.installed_apps())?;
        apps.retain(|a| self.include_system_apps || !a.is_system_app);
        apps.sort_by(|a, b| a.app_id.cmp(&b.app_id));
        results::done(Apps { apps })
    }
}

/// Puts text on the device's clipboard, for `mobile_pasteClipboard` or the app's own paste.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetClipboard {
    /// The text to put on the clipboard. May hold `{{secret:NAME}}` placeholders.
    pub text: String,
}

impl BuiltinTool for SetClipboard {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<ClipboardSet>()
    }
    const NAME: &'static str = "mobile_setClipboard";
    // The clipboard is the device's; the result counts a secret as the three characters of `***`.
    const SECRET_ARGS: &'static [&'static str] = &["text"];
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.set_clipboard(&self.text))?;
        results::done(ClipboardSet {
            characters: cx.redact.text(&self.text).chars().count(),
        })
    }
}

/// Pastes the clipboard's text into the focused field (typed as `inputText` types).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasteClipboard {}

impl BuiltinTool for PasteClipboard {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Typed>()
    }
    const NAME: &'static str = "mobile_pasteClipboard";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    const PLATFORMS: &'static [Platform] = MOBILE;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let text = cx.screen.with_device(|d| d.clipboard())?.unwrap_or_default();
        if text.is_empty() {
            return Err("the clipboard is empty: put text on it with `mobile_setClipboard` first".into());
        }
        let typed = type_text(cx, &text, None)?;
        results::done(Typed { typed })
    }
}
