//! `TrailblazeNodeSelector`: the structural description of a node that recordings hold. This module
//! has the type (its keys match `sdk-ts/src/selectors.ts` exactly), the resolver that finds the nodes
//! a selector matches in a snapshot, and the generator that finds the shortest selector matching one
//! node uniquely (`generate.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::snapshot::Snapshot;

mod generate;
mod pattern;
mod web;
use pattern::maestro_matches;
pub(crate) use pattern::text_matches;
pub use pattern::{check_pattern, is_regex, java_quoting};
pub use web::{CssOracle, describe, web_for_node};

/// Predicates on a node from the Android accessibility driver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AndroidAccessibilityMatch {
    /// The node's visible text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub text_regex: Option<String>,
    /// The hint (placeholder) of an editable field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub hint_text_regex: Option<String>,
    /// The Android resource id, e.g. `com.example.demo:id/email`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub resource_id_regex: Option<String>,
    /// The content description (accessibility label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub content_description_regex: Option<String>,
    /// The view class, e.g. `android.widget.EditText`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub class_name_regex: Option<String>,
    /// Whether the node is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_enabled: Option<bool>,
    /// Whether a checkable node is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_checked: Option<bool>,
    /// Whether the node is a password field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_password: Option<bool>,
    /// Whether the node has input focus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_focused: Option<bool>,
    /// Whether the node reacts to a tap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_clickable: Option<bool>,
    /// Whether the node accepts text input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_editable: Option<bool>,
    /// The accessibility driver's unique id of the node (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_id: Option<String>,
    /// A Jetpack Compose `testTag` exposed to accessibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub compose_test_tag_regex: Option<String>,
    /// The text of the node that labels this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub labeled_by_text_regex: Option<String>,
    /// The state description (e.g. `On`, `50 percent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub state_description_regex: Option<String>,
    /// The title of the pane the node is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub pane_title_regex: Option<String>,
    /// The role description read to accessibility users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub role_description_regex: Option<String>,
    /// Whether the node can be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_checkable: Option<bool>,
    /// Whether the node is selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_selected: Option<bool>,
    /// Whether the node scrolls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_scrollable: Option<bool>,
    /// Whether the node is a heading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_heading: Option<bool>,
    /// Whether an editable node takes several lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_multi_line: Option<bool>,
    /// The editable field's Android `InputType` flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<i64>,
    /// The node's row in a collection (list or grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_item_row_index: Option<i64>,
    /// The node's column in a collection (grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_item_column_index: Option<i64>,
}

/// Predicates on a node from the Maestro-based Android driver (UI Automator hierarchy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AndroidMaestroMatch {
    /// The node's visible text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub text_regex: Option<String>,
    /// The Android resource id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub resource_id_regex: Option<String>,
    /// The accessibility text (content description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub accessibility_text_regex: Option<String>,
    /// The view class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub class_name_regex: Option<String>,
    /// The hint of an editable field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub hint_text_regex: Option<String>,
    /// Whether the node is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether the node is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// Whether the node has input focus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused: Option<bool>,
    /// Whether the node is selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
    /// Whether the node reacts to a tap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clickable: Option<bool>,
}

/// Predicates on a node from the web (Playwright) driver. Android devices match none of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebMatch {
    /// The ARIA role, e.g. `button` (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aria_role: Option<String>,
    /// The accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub aria_name_regex: Option<String>,
    /// A CSS selector the element must match (open shadow roots are searched too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub css_selector: Option<String>,
    /// The element's `data-testid` attribute (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_test_id: Option<String>,
    /// The ARIA descriptor: the role and the quoted name, e.g. `button "Submit"` (or the role alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub aria_descriptor_regex: Option<String>,
    /// The level of a heading (1-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading_level: Option<i64>,
    /// 0-based index among the elements the other fields match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth_index: Option<i64>,
}

/// Predicates on a node from the Compose desktop driver (semantics tree). Android devices match none of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ComposeMatch {
    /// The node's `testTag` (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_tag: Option<String>,
    /// The semantics role, e.g. `Button` (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The node's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub text_regex: Option<String>,
    /// The text of an editable field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub editable_text_regex: Option<String>,
    /// The content description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub content_description_regex: Option<String>,
    /// `On`, `Off` or `Indeterminate` (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toggleable_state: Option<String>,
    /// Whether the node is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_enabled: Option<bool>,
    /// Whether the node has focus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_focused: Option<bool>,
    /// Whether the node is selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_selected: Option<bool>,
    /// Whether the node is a password field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_password: Option<bool>,
}

/// Predicates on a node from the Maestro-based iOS driver. Android devices match none of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IosMaestroMatch {
    /// The node's visible text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub text_regex: Option<String>,
    /// The accessibility identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub resource_id_regex: Option<String>,
    /// The accessibility label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub accessibility_text_regex: Option<String>,
    /// The element type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub class_name_regex: Option<String>,
    /// The placeholder of a text field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub hint_text_regex: Option<String>,
    /// Whether the node has focus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused: Option<bool>,
    /// Whether the node is selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
}

/// Predicates on a node from the AXe iOS accessibility driver. Android devices match none of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IosAxeMatch {
    /// The accessibility role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub role_regex: Option<String>,
    /// The accessibility subrole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub subrole_regex: Option<String>,
    /// The accessibility label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub label_regex: Option<String>,
    /// The accessibility value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub value_regex: Option<String>,
    /// The accessibility identifier (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_id: Option<String>,
    /// The element type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub type_regex: Option<String>,
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "regex"))]
    pub title_regex: Option<String>,
    /// A custom accessibility action the node offers (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_action: Option<String>,
    /// Whether the node is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Trailblaze's recursive node selector: at most one driver match plus relational constraints.
/// A node matches when every field that is set holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TrailblazeNodeSelector {
    /// Match on Android accessibility properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub android_accessibility: Option<AndroidAccessibilityMatch>,
    /// Match on Maestro-based Android properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub android_maestro: Option<AndroidMaestroMatch>,
    /// Match on web (DOM / ARIA) properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<WebMatch>,
    /// Match on Compose semantics properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compose: Option<ComposeMatch>,
    /// Match on Maestro-based iOS properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios_maestro: Option<IosMaestroMatch>,
    /// Match on iOS accessibility (AXe) properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios_axe: Option<IosAxeMatch>,
    /// The node lies below a node matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<Box<TrailblazeNodeSelector>>,
    /// The node lies above a node matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<Box<TrailblazeNodeSelector>>,
    /// The node lies left of a node matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_of: Option<Box<TrailblazeNodeSelector>>,
    /// The node lies right of a node matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_of: Option<Box<TrailblazeNodeSelector>>,
    /// The node is a descendant of a node matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_of: Option<Box<TrailblazeNodeSelector>>,
    /// The node has a direct child matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains_child: Option<Box<TrailblazeNodeSelector>>,
    /// The node has descendants matching every one of these selectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains_descendants: Option<Vec<TrailblazeNodeSelector>>,
    /// 0-based index among all matches, top-to-bottom then left-to-right; the last resort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
}

fn opt_text(pattern: &Option<String>, value: Option<&str>) -> bool {
    pattern.as_deref().is_none_or(|p| text_matches(p, value))
}

fn opt_bool(want: Option<bool>, have: bool) -> bool {
    want.is_none_or(|w| w == have)
}

fn opt_int(want: Option<i64>, have: Option<i64>) -> bool {
    want.is_none_or(|w| have == Some(w))
}

impl AndroidAccessibilityMatch {
    /// Whether node `n` has every property this match sets. A property the view tree does not carry
    /// (a label's text, a pane title, an input type, a collection position) reads as absent: a text
    /// pattern then sees `""`, a flag `false`, a number nothing.
    fn matches(&self, n: &crate::device::ViewNode) -> bool {
        opt_text(&self.text_regex, n.text.as_deref())
            && opt_text(&self.hint_text_regex, n.hint_text.as_deref())
            && opt_text(&self.resource_id_regex, n.resource_id.as_deref())
            && opt_text(&self.content_description_regex, n.content_description.as_deref())
            && opt_text(&self.class_name_regex, Some(&n.class_name))
            && opt_bool(self.is_enabled, n.enabled)
            && opt_bool(self.is_checked, n.checked.unwrap_or(false))
            && opt_bool(self.is_password, n.password)
            && opt_bool(self.is_focused, n.focused)
            && opt_bool(self.is_clickable, n.clickable)
            && opt_bool(self.is_editable, n.editable)
            && self.unique_id.as_deref().is_none_or(str::is_empty)
            && opt_text(&self.compose_test_tag_regex, None)
            && opt_text(&self.labeled_by_text_regex, None)
            && opt_text(&self.state_description_regex, None)
            && opt_text(&self.pane_title_regex, None)
            && opt_text(&self.role_description_regex, None)
            && opt_bool(self.is_checkable, n.checked.is_some())
            && opt_bool(self.is_selected, n.selected)
            && opt_bool(self.is_scrollable, n.scrollable)
            && opt_bool(self.is_heading, false)
            && opt_bool(self.is_multi_line, false)
            && opt_int(self.input_type, None)
            && opt_int(self.collection_item_row_index, None)
            && opt_int(self.collection_item_column_index, None)
    }
}

/// A Maestro-shaped pattern against a property, as the original reads them: a property the node
/// lacks matches no pattern; one it has, in Maestro's dialect.
fn maestro(pattern: &Option<String>, value: Option<&str>) -> bool {
    match (pattern, value) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(p), Some(v)) => maestro_matches(p, v),
    }
}

/// A node's text as Maestro-shaped selectors read it: its text, else its hint, else its
/// accessibility text (the first that is not empty).
fn maestro_text(n: &crate::device::ViewNode) -> Option<&str> {
    [&n.text, &n.hint_text, &n.content_description]
        .into_iter()
        .find_map(|v| v.as_deref().filter(|t| !t.is_empty()))
}

impl AndroidMaestroMatch {
    /// Whether node `n` has every property this match sets, read as the original reads a
    /// Maestro-shaped selector (`maestro`, `maestro_text`).
    fn matches(&self, n: &crate::device::ViewNode) -> bool {
        maestro(&self.text_regex, maestro_text(n))
            && maestro(&self.resource_id_regex, n.resource_id.as_deref())
            && maestro(&self.accessibility_text_regex, n.content_description.as_deref())
            && maestro(&self.class_name_regex, Some(&n.class_name))
            && maestro(&self.hint_text_regex, n.hint_text.as_deref())
            && opt_bool(self.enabled, n.enabled)
            && opt_bool(self.checked, n.checked.unwrap_or(false))
            && opt_bool(self.focused, n.focused)
            && opt_bool(self.selected, n.selected)
            && opt_bool(self.clickable, n.clickable)
    }
}

impl IosMaestroMatch {
    /// Whether iOS node `n` has every property this match sets, as the original reads them: `text`
    /// is the node's value, else its placeholder, else its label (a switch's value is `1` or `0`);
    /// a property the node lacks matches no pattern. Only iOS nodes match.
    fn matches(&self, n: &crate::device::ViewNode) -> bool {
        // The iOS device shows a switch's label as its text and its value as `checked`.
        let switch = n.checked.map(|on| if on { "1" } else { "0" });
        let text = switch.or_else(|| maestro_text(n));
        n.is_ios()
            && maestro(&self.text_regex, text)
            && maestro(&self.resource_id_regex, n.resource_id.as_deref())
            && maestro(&self.accessibility_text_regex, n.content_description.as_deref())
            && maestro(&self.class_name_regex, Some(&n.class_name))
            && maestro(&self.hint_text_regex, n.hint_text.as_deref())
            && opt_bool(self.focused, n.focused)
            && opt_bool(self.selected, n.selected)
    }
}

/// Relational constraints nest; a selector deeper than this is refused as a match.
const MAX_SELECTOR_DEPTH: usize = 32;

impl TrailblazeNodeSelector {
    /// The path (`""`, `.below`, `.containsDescendants[1]`) of a selector in this one that has no
    /// predicate of its own: no driver property and no relation (an `index` alone picks among
    /// everything). `None` when every part says something.
    pub fn without_predicate(&self) -> Option<String> {
        let non_empty = |m: Option<serde_json::Value>| m.is_some_and(|v| v.as_object().is_some_and(|o| !o.is_empty()));
        let json = |m: Option<serde_json::Result<serde_json::Value>>| m.and_then(Result::ok);
        let drivers = [
            json(self.android_accessibility.as_ref().map(serde_json::to_value)),
            json(self.android_maestro.as_ref().map(serde_json::to_value)),
            json(self.web.as_ref().map(serde_json::to_value)),
            json(self.compose.as_ref().map(serde_json::to_value)),
            json(self.ios_maestro.as_ref().map(serde_json::to_value)),
            json(self.ios_axe.as_ref().map(serde_json::to_value)),
        ]
        .into_iter()
        .any(non_empty);
        let relations = [
            ("below", &self.below),
            ("above", &self.above),
            ("leftOf", &self.left_of),
            ("rightOf", &self.right_of),
            ("childOf", &self.child_of),
            ("containsChild", &self.contains_child),
        ];
        let descendants = self.contains_descendants.as_deref().unwrap_or_default();
        let related = relations.iter().any(|(_, r)| r.is_some()) || !descendants.is_empty();
        if !drivers && !related {
            return Some(String::new());
        }
        for (key, r) in relations {
            if let Some(inner) = r.as_deref().and_then(|s| s.without_predicate()) {
                return Some(format!(".{key}{inner}"));
            }
        }
        descendants.iter().enumerate().find_map(|(i, s)| {
            s.without_predicate()
                .map(|inner| format!(".containsDescendants[{i}]{inner}"))
        })
    }

    /// The path and reason of the first `*Regex` field in this selector (nested ones included) that is
    /// not a valid regular expression: an invalid one would silently match nothing.
    pub fn invalid_pattern(&self) -> Option<(String, String)> {
        fn walk(v: &serde_json::Value, path: &str) -> Option<(String, String)> {
            match v {
                serde_json::Value::Object(m) => m.iter().find_map(|(k, item)| {
                    let at = format!("{path}.{k}");
                    match item {
                        serde_json::Value::String(p) if k.ends_with("Regex") => check_pattern(p).err().map(|e| (at, e)),
                        other => walk(other, &at),
                    }
                }),
                serde_json::Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .find_map(|(i, item)| walk(item, &format!("{path}[{i}]"))),
                _ => None,
            }
        }
        walk(&serde_json::to_value(self).ok()?, "")
    }

    /// Every node the selector matches, in tree order, with `index` applied. A `web.cssSelector`
    /// matches nothing here: a page decides CSS ([`TrailblazeNodeSelector::resolve_with`]).
    pub fn resolve(&self, snap: &Snapshot) -> Vec<usize> {
        self.resolve_with(snap, &|_, _| false)
    }

    /// [`TrailblazeNodeSelector::resolve`], with `css` telling whether node `i` matches a CSS selector.
    pub fn resolve_with(&self, snap: &Snapshot, css: CssOracle<'_>) -> Vec<usize> {
        let cx = web::Cx::new(css);
        let all: Vec<usize> = (0..snap.nodes.len())
            .filter(|&i| self.matches_at(snap, i, 0, &cx))
            .collect();
        match self.index {
            Some(k) => {
                let mut ordered = all;
                // Top-to-bottom, then left-to-right, as the field's description says.
                ordered.sort_by_key(|&i| (snap.nodes[i].bounds.top, snap.nodes[i].bounds.left, i));
                ordered.get(k as usize).map(|&i| vec![i]).unwrap_or_default()
            }
            None => all,
        }
    }

    /// Whether node `i` matches, ignoring `index` (which only picks among matches).
    fn matches_at(&self, snap: &Snapshot, i: usize, depth: usize, cx: &web::Cx<'_>) -> bool {
        if depth > MAX_SELECTOR_DEPTH {
            return false;
        }
        let n = &snap.nodes[i];
        if let Some(a) = &self.android_accessibility
            && !a.matches(n)
        {
            return false;
        }
        if let Some(m) = &self.android_maestro
            && !m.matches(n)
        {
            return false;
        }
        if let Some(w) = &self.web
            && !w.matches_at(snap, i, cx)
        {
            return false;
        }
        if let Some(m) = &self.ios_maestro
            && !m.matches(n)
        {
            return false;
        }
        // No device here gives Compose semantics or AXe's accessibility tree: a match on one of
        // those drivers never holds (the type gate still knows every field).
        if self.compose.is_some() || self.ios_axe.is_some() {
            return false;
        }
        let any = |sel: &TrailblazeNodeSelector, pred: &dyn Fn(usize) -> bool| {
            (0..snap.nodes.len()).any(|j| j != i && pred(j) && sel.matches_at(snap, j, depth + 1, cx))
        };
        let b = n.bounds;
        if let Some(s) = &self.below
            && !any(s, &|j| b.top >= snap.nodes[j].bounds.bottom)
        {
            return false;
        }
        if let Some(s) = &self.above
            && !any(s, &|j| b.bottom <= snap.nodes[j].bounds.top)
        {
            return false;
        }
        if let Some(s) = &self.left_of
            && !any(s, &|j| b.right <= snap.nodes[j].bounds.left)
        {
            return false;
        }
        if let Some(s) = &self.right_of
            && !any(s, &|j| b.left >= snap.nodes[j].bounds.right)
        {
            return false;
        }
        if let Some(s) = &self.child_of
            && !any(s, &|j| snap.is_ancestor(j, i))
        {
            return false;
        }
        if let Some(s) = &self.contains_child
            && !any(s, &|j| snap.nodes[j].parent == Some(i))
        {
            return false;
        }
        if let Some(list) = &self.contains_descendants
            && !list.iter().all(|s| any(s, &|j| snap.is_ancestor(i, j)))
        {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests;
