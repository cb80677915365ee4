//! What a web page tells about one element beyond the phone's fields. Plain data, compiled with or
//! without the `web` feature: snapshots, selectors and embedders read it the same way.

use serde::{Deserialize, Serialize};

/// The web side of a [`super::ViewNode`] (`--device web`). The node's `class_name` is its ARIA
/// role; `text` is its accessible name (for an editable field: its value, which a secret masks);
/// `hint_text` its placeholder; `content_description` its accessible description (for an editable
/// field: its name); `resource_id` its DOM id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebNode {
    /// The ARIA role (`button`, `heading`, `generic`, ...).
    pub role: String,
    /// The accessible name (`aria-label`, a `<label>`, the content of a button or link, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The element's tag (`button`, `div`).
    pub tag: String,
    /// The element's own text (its text nodes, not its children's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_text: Option<String>,
    /// A heading's level (1-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// `aria-expanded` (or an open `<details>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded: Option<bool>,
    /// A checkbox in the mixed state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mixed: bool,
    /// `data-testid` (or `data-test-id`, `data-test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_id: Option<String>,
    /// The value of a control that is not a text field (a slider, a `<select>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Its text is part of an ancestor's name (a span in a button): not a line of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_name: bool,
    /// Lies outside the viewport (scrolling reaches it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offscreen: bool,
    /// Its position among its DOM parent's element children (1-based; 0: slotted).
    #[serde(default)]
    pub nth_child: u32,
    /// Its DOM parent is not its parent here (a hidden element between, a shadow root, a slot).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detached_parent: bool,
    /// The URL of the frame whose document this node is the root of (iframes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_url: Option<String>,
    /// What a capture of a huge page left out (on the root only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the device finds the element again: capture, frame and index.
    #[serde(default)]
    pub handle: WebHandle,
}

/// The element of one capture of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, Hash)]
pub struct WebHandle {
    pub capture: u64,
    pub frame: u32,
    pub index: u32,
}
