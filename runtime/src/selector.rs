//! `TrailblazeNodeSelector`: the structural description of a node that recordings hold. This module
//! has the type (its keys match `sdk-ts/src/selectors.ts` exactly), the resolver that finds the nodes
//! a selector matches in a snapshot, and the generator that finds the shortest selector matching one
//! node uniquely.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::snapshot::Snapshot;

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
    /// A CSS selector the element must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub css_selector: Option<String>,
    /// The element's `data-testid` attribute (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_test_id: Option<String>,
    /// The accessible description.
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

/// Whole-value regex match, falling back to exact equality for a pattern that is not a valid regex
/// (so `$5.00` or `(1)` need no escaping).
fn text_matches(pattern: &str, value: Option<&str>) -> bool {
    let value = value.unwrap_or("");
    if pattern == value {
        return true;
    }
    compiled(pattern, |re| re.is_ok_and(|re| re.is_match(value)))
}

/// Why a pattern does not compile.
#[derive(Debug, Clone, Copy)]
enum PatternError {
    TooBig,
    Invalid,
}

/// Runs `f` with `pattern` compiled (to match a whole value). Resolving tries every node against
/// every predicate, and every call checks its selector's patterns first: each pattern is compiled
/// once per thread, its failure remembered too.
fn compiled<R>(pattern: &str, f: impl FnOnce(Result<&regex::Regex, PatternError>) -> R) -> R {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Result<regex::Regex, PatternError>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            if cache.len() >= 512 {
                cache.clear();
            }
            let re = whole_value(pattern).map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => PatternError::TooBig,
                _ => PatternError::Invalid,
            });
            cache.insert(pattern.to_string(), re);
        }
        match cache.get(pattern) {
            Some(re) => f(re.as_ref().map_err(|e| *e)),
            None => f(Err(PatternError::Invalid)),
        }
    })
}

/// `pattern` compiled to match a whole value.
fn whole_value(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&format!("^(?:{})$", java_quoting(pattern)))
}

/// The original's patterns are Java regular expressions, whose `\Q...\E` quotes a literal stretch
/// (`\QMouse - $29.99\E`); Rust's regex has no such quoting, so the stretch is escaped instead.
pub fn java_quoting(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\Q") {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.chars().next() {
            Some('Q') => {
                let quoted = &after[1..];
                let (inner, next) = match quoted.find("\\E") {
                    Some(e) => (&quoted[..e], &quoted[e + 2..]),
                    None => (quoted, ""),
                };
                out.push_str(&regex::escape(inner));
                rest = next;
            }
            // Any other escape (`\\`, `\d`) is copied whole, so `\\Q` stays a backslash and a Q.
            Some(c) => {
                out.push('\\');
                out.push(c);
                rest = &after[c.len_utf8()..];
            }
            None => {
                out.push('\\');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Whether `pattern` is a regular expression the matcher accepts; the reason when not. The pattern
/// itself is not repeated (it may hold a resolved secret).
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    match compiled(pattern, |re| re.map(|_| ())) {
        Ok(()) => Ok(()),
        Err(PatternError::TooBig) => Err("the regular expression is too large".into()),
        Err(PatternError::Invalid) => Err(
            "not a valid regular expression (escape `(`, `[`, `+`, `*`, `?` with `\\` to match them as text)".into(),
        ),
    }
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

impl AndroidMaestroMatch {
    fn matches(&self, n: &crate::device::ViewNode) -> bool {
        opt_text(&self.text_regex, n.text.as_deref())
            && opt_text(&self.resource_id_regex, n.resource_id.as_deref())
            && opt_text(&self.accessibility_text_regex, n.content_description.as_deref())
            && opt_text(&self.class_name_regex, Some(&n.class_name))
            && opt_text(&self.hint_text_regex, n.hint_text.as_deref())
            && opt_bool(self.enabled, n.enabled)
            && opt_bool(self.checked, n.checked.unwrap_or(false))
            && opt_bool(self.focused, n.focused)
            && opt_bool(self.selected, n.selected)
            && opt_bool(self.clickable, n.clickable)
    }
}

/// Relational constraints nest; a selector deeper than this is refused as a match.
const MAX_SELECTOR_DEPTH: usize = 32;

impl TrailblazeNodeSelector {
    /// Every node the selector matches, in tree order, with `index` applied.
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

    pub fn resolve(&self, snap: &Snapshot) -> Vec<usize> {
        let all: Vec<usize> = (0..snap.nodes.len()).filter(|&i| self.matches_at(snap, i, 0)).collect();
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
    fn matches_at(&self, snap: &Snapshot, i: usize, depth: usize) -> bool {
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
        // An Android view tree has no DOM, no Compose semantics and no iOS elements: a match on one
        // of those drivers never holds here (the type gate still knows every field).
        if self.web.is_some() || self.compose.is_some() || self.ios_maestro.is_some() || self.ios_axe.is_some() {
            return false;
        }
        let any = |sel: &TrailblazeNodeSelector, pred: &dyn Fn(usize) -> bool| {
            (0..snap.nodes.len()).any(|j| j != i && pred(j) && sel.matches_at(snap, j, depth + 1))
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

    /// The shortest selector that matches node `i` and no other: its own text, hint, resource id,
    /// content description or class; then two of them; then relational (`childOf` a uniquely selectable
    /// ancestor, `below` a uniquely selectable node); `index` last. `None` when the node has nothing to
    /// tell it apart (no text, hint, id or description): the caller falls back to a coordinate tap.
    pub fn for_node(snap: &Snapshot, i: usize) -> Option<TrailblazeNodeSelector> {
        let singles = own_predicates(snap, i);
        if singles.iter().all(|(kind, _)| *kind == Kind::Class) {
            return None;
        }
        let unique = |s: &TrailblazeNodeSelector| s.resolve(snap) == [i];
        for (_, s) in &singles {
            if unique(s) {
                return Some(s.clone());
            }
        }
        for (a, (_, x)) in singles.iter().enumerate() {
            for (_, y) in singles.iter().skip(a + 1) {
                let s = merge(x, y);
                if unique(&s) {
                    return Some(s);
                }
            }
        }
        let best = singles
            .iter()
            .find(|(k, _)| *k != Kind::Class)
            .map(|(_, s)| s.clone())?;
        let mut anc = snap.nodes[i].parent;
        while let Some(a) = anc {
            if let Some(parent_sel) = unique_own(snap, a) {
                let s = TrailblazeNodeSelector {
                    child_of: Some(Box::new(parent_sel)),
                    ..best.clone()
                };
                if unique(&s) {
                    return Some(s);
                }
            }
            anc = snap.nodes[a].parent;
        }
        // The nearest node above with a unique selector of its own.
        let b = snap.nodes[i].bounds;
        let mut above: Vec<usize> = (0..snap.nodes.len())
            .filter(|&j| snap.nodes[j].bounds.bottom <= b.top)
            .collect();
        above.sort_by_key(|&j| std::cmp::Reverse(snap.nodes[j].bounds.bottom));
        for j in above.into_iter().take(8) {
            if let Some(anchor) = unique_own(snap, j) {
                let s = TrailblazeNodeSelector {
                    below: Some(Box::new(anchor)),
                    ..best.clone()
                };
                if unique(&s) {
                    return Some(s);
                }
            }
        }
        let matches = best.resolve(snap);
        let mut ordered = matches;
        ordered.sort_by_key(|&j| (snap.nodes[j].bounds.top, snap.nodes[j].bounds.left, j));
        let k = ordered.iter().position(|&j| j == i)?;
        Some(TrailblazeNodeSelector {
            index: Some(k as u32),
            ..best
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Hint,
    Id,
    Desc,
    Class,
}

/// One-predicate selectors for node `i`, most telling first.
fn own_predicates(snap: &Snapshot, i: usize) -> Vec<(Kind, TrailblazeNodeSelector)> {
    let n = &snap.nodes[i];
    let exact = |v: &str| regex::escape(v);
    let mut out = Vec::new();
    let mut push = |kind: Kind, m: AndroidAccessibilityMatch| {
        out.push((
            kind,
            TrailblazeNodeSelector {
                android_accessibility: Some(m),
                ..Default::default()
            },
        ));
    };
    // A password field's text is masked and changes as it is typed into: never select by it.
    if let Some(t) = n
        .text
        .as_deref()
        .filter(|t| !t.is_empty() && !n.password && !n.editable)
    {
        push(
            Kind::Text,
            AndroidAccessibilityMatch {
                text_regex: Some(exact(t)),
                ..Default::default()
            },
        );
    }
    if let Some(h) = n.hint_text.as_deref().filter(|t| !t.is_empty()) {
        push(
            Kind::Hint,
            AndroidAccessibilityMatch {
                hint_text_regex: Some(exact(h)),
                ..Default::default()
            },
        );
    }
    if let Some(r) = n.resource_id.as_deref().filter(|t| !t.is_empty()) {
        push(
            Kind::Id,
            AndroidAccessibilityMatch {
                resource_id_regex: Some(exact(r)),
                ..Default::default()
            },
        );
    }
    if let Some(d) = n.content_description.as_deref().filter(|t| !t.is_empty()) {
        push(
            Kind::Desc,
            AndroidAccessibilityMatch {
                content_description_regex: Some(exact(d)),
                ..Default::default()
            },
        );
    }
    push(
        Kind::Class,
        AndroidAccessibilityMatch {
            class_name_regex: Some(exact(&n.class_name)),
            ..Default::default()
        },
    );
    out
}

/// A single-predicate selector that matches only node `i`, if there is one.
fn unique_own(snap: &Snapshot, i: usize) -> Option<TrailblazeNodeSelector> {
    own_predicates(snap, i)
        .into_iter()
        .map(|(_, s)| s)
        .find(|s| s.resolve(snap) == [i])
}

fn merge(a: &TrailblazeNodeSelector, b: &TrailblazeNodeSelector) -> TrailblazeNodeSelector {
    let (Some(x), Some(y)) = (&a.android_accessibility, &b.android_accessibility) else {
        return a.clone();
    };
    let m = AndroidAccessibilityMatch {
        text_regex: x.text_regex.clone().or(y.text_regex.clone()),
        hint_text_regex: x.hint_text_regex.clone().or(y.hint_text_regex.clone()),
        resource_id_regex: x.resource_id_regex.clone().or(y.resource_id_regex.clone()),
        content_description_regex: x
            .content_description_regex
            .clone()
            .or(y.content_description_regex.clone()),
        class_name_regex: x.class_name_regex.clone().or(y.class_name_regex.clone()),
        ..Default::default()
    };
    TrailblazeNodeSelector {
        android_accessibility: Some(m),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Bounds, ViewNode, ViewTree};

    #[test]
    #[allow(clippy::invalid_regex)] // the control builds an invalid regex on purpose
    fn java_quoting_matches_the_stretch_as_text() {
        let p = r"\QMouse - USB-C, Gray - $34.99\E";
        assert!(check_pattern(p).is_ok());
        assert!(text_matches(p, Some("Mouse - USB-C, Gray - $34.99")));
        assert!(!text_matches(p, Some("Mouse - USB-C, Gray - $34X99")));
        // A quote with no `\E` runs to the end; regex around it still works.
        assert!(text_matches(r"Total: \Q$5.00", Some("Total: $5.00")));
        assert!(text_matches(r"(?i)total.*\Q(1)\E", Some("TOTAL x (1)")));
        // An escaped backslash before Q is a backslash and a Q, not a quote.
        assert!(text_matches(r"a\\Qb", Some(r"a\Qb")));
        // Control: without the quoting the pattern is no valid Rust regex at all.
        #[allow(clippy::invalid_regex)]
        let raw = regex::Regex::new(r"\QMouse\E");
        assert!(raw.is_err());
    }

    fn node(class: &str, text: Option<&str>, id: Option<&str>, top: i32, children: Vec<ViewNode>) -> ViewNode {
        ViewNode {
            class_name: class.into(),
            text: text.map(Into::into),
            resource_id: id.map(Into::into),
            bounds: Bounds {
                left: 0,
                top,
                right: 1000,
                bottom: top + 100,
            },
            enabled: true,
            children,
            ..ViewNode::default()
        }
    }

    /// Two rows with the same label, told apart by their containers.
    fn snap() -> Snapshot {
        let row = |id: &str, top: i32| {
            node(
                "android.widget.LinearLayout",
                None,
                Some(id),
                top,
                vec![node("android.widget.TextView", Some("Open"), None, top, vec![])],
            )
        };
        let root = node(
            "android.widget.FrameLayout",
            None,
            None,
            0,
            vec![
                node("android.widget.TextView", Some("Header"), None, 0, vec![]),
                row("app:id/first", 200),
                row("app:id/second", 400),
            ],
        );
        Snapshot::from_tree(ViewTree {
            app_id: Some("app".into()),
            width: 1000,
            height: 2000,
            root,
        })
    }

    fn text(t: &str) -> TrailblazeNodeSelector {
        TrailblazeNodeSelector {
            android_accessibility: Some(AndroidAccessibilityMatch {
                text_regex: Some(t.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_whole_grammar_reads_and_what_the_tree_does_not_carry_never_matches() {
        let mut root = node("android.widget.FrameLayout", None, None, 0, vec![]);
        let mut tab = node(
            "android.widget.TextView",
            Some("ALARM"),
            Some("app:id/tab"),
            100,
            vec![],
        );
        tab.selected = true;
        let mut list = node(
            "androidx.recyclerview.widget.RecyclerView",
            None,
            Some("app:id/list"),
            300,
            vec![],
        );
        list.scrollable = true;
        let mut switch = node("android.widget.Switch", None, Some("app:id/on"), 500, vec![]);
        switch.checked = Some(false);
        root.children = vec![tab, list, switch];
        let s = Snapshot::from_tree(ViewTree {
            app_id: Some("app".into()),
            width: 1000,
            height: 2000,
            root,
        });
        let one = |v: serde_json::Value| -> usize {
            let sel: TrailblazeNodeSelector = serde_json::from_value(v).expect("the grammar reads it");
            sel.resolve(&s).len()
        };
        use serde_json::json;
        assert_eq!(one(json!({"androidAccessibility": {"isSelected": true}})), 1);
        assert_eq!(one(json!({"androidAccessibility": {"isScrollable": true}})), 1);
        assert_eq!(
            one(json!({"androidAccessibility": {"isCheckable": true}})),
            1,
            "checkable: has a checked state"
        );
        assert_eq!(
            one(json!({"androidMaestro": {"selected": true, "clickable": false}})),
            1
        );
        // What an Android view tree does not carry reads as absent: `false` holds, `true` or a number never.
        assert_eq!(
            one(json!({"androidAccessibility": {"textRegex": "ALARM", "isHeading": false}})),
            1
        );
        assert_eq!(
            one(json!({"androidAccessibility": {"textRegex": "ALARM", "isHeading": true}})),
            0
        );
        assert_eq!(
            one(json!({"androidAccessibility": {"textRegex": "ALARM", "collectionItemRowIndex": 0}})),
            0
        );
        assert_eq!(
            one(json!({"androidAccessibility": {"textRegex": "ALARM", "labeledByTextRegex": "Tabs"}})),
            0
        );
        // Other platforms' drivers read, and never match an Android screen.
        for driver in [
            json!({"iosMaestro": {"textRegex": "ALARM"}}),
            json!({"iosAxe": {"labelRegex": "ALARM", "enabled": true}}),
            json!({"compose": {"textRegex": "ALARM", "testTag": "tab"}}),
            json!({"web": {"ariaNameRegex": "ALARM", "headingLevel": 1, "nthIndex": 0}}),
        ] {
            assert_eq!(one(driver), 0);
        }
        // Control: an unknown field of a new driver is refused, as everywhere.
        assert!(serde_json::from_value::<TrailblazeNodeSelector>(json!({"iosAxe": {"label": "x"}})).is_err());
        // A driver with nothing in it says nothing about the node.
        let empty: TrailblazeNodeSelector = serde_json::from_value(json!({"iosAxe": {}})).expect("reads");
        assert_eq!(empty.without_predicate(), Some(String::new()));
    }

    #[test]
    fn driver_matches_are_whole_value_regexes() {
        let s = snap();
        assert_eq!(text("Header").resolve(&s).len(), 1);
        assert_eq!(text("Head").resolve(&s).len(), 0, "a partial match is no match");
        assert_eq!(text("Op.n").resolve(&s).len(), 2);
        assert_eq!(
            text("(").resolve(&s).len(),
            0,
            "an invalid regex falls back to equality"
        );
    }

    #[test]
    fn relational_keys_and_index_narrow_the_matches() {
        let s = snap();
        let id = |r: &str| TrailblazeNodeSelector {
            android_accessibility: Some(AndroidAccessibilityMatch {
                resource_id_regex: Some(r.into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let in_second = TrailblazeNodeSelector {
            child_of: Some(Box::new(id(".*second"))),
            ..text("Open")
        };
        let found = in_second.resolve(&s);
        assert_eq!(found.len(), 1);
        assert_eq!(
            s.nodes[s.nodes[found[0]].parent.unwrap()].resource_id.as_deref(),
            Some("app:id/second")
        );
        let below_first = TrailblazeNodeSelector {
            below: Some(Box::new(id(".*first"))),
            ..text("Open")
        };
        assert_eq!(
            below_first.resolve(&s),
            found,
            "the second row's label is below the first row"
        );
        let second_by_index = TrailblazeNodeSelector {
            index: Some(1),
            ..text("Open")
        };
        assert_eq!(second_by_index.resolve(&s), found);
        let containing = TrailblazeNodeSelector {
            contains_child: Some(Box::new(text("Open"))),
            ..Default::default()
        };
        assert_eq!(containing.resolve(&s).len(), 2);
    }

    #[test]
    fn every_generated_selector_resolves_to_exactly_its_node() {
        let s = snap();
        for i in 0..s.nodes.len() {
            match TrailblazeNodeSelector::for_node(&s, i) {
                Some(sel) => assert_eq!(sel.resolve(&s), [i], "node {i}: {sel:?}"),
                // Only the bare root container has nothing to tell it apart.
                None => assert_eq!(i, 0),
            }
        }
        // The duplicate label is disambiguated relationally, not by index.
        let second_label = s.nodes.iter().rposition(|n| n.text.as_deref() == Some("Open")).unwrap();
        let sel = TrailblazeNodeSelector::for_node(&s, second_label).unwrap();
        assert!(sel.child_of.is_some() && sel.index.is_none(), "{sel:?}");
    }

    #[test]
    fn the_demo_app_gets_unique_selectors_on_every_screen() {
        use crate::device::Device;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../trailmaps/demo/app.yaml");
        let mut sim = crate::device::sim::SimDevice::from_app_file(&path).expect("demo app");
        let s = Snapshot::from_tree(sim.snapshot().expect("snapshot"));
        let with_id = (0..s.nodes.len()).filter(|&i| s.nodes[i].resource_id.is_some());
        for i in with_id {
            let sel = TrailblazeNodeSelector::for_node(&s, i).expect("a node with an id has a selector");
            assert_eq!(sel.resolve(&s), [i]);
        }
    }

    #[test]
    fn a_selector_part_without_a_predicate_is_named_by_its_path() {
        let sel = |v: serde_json::Value| -> TrailblazeNodeSelector { serde_json::from_value(v).expect("a selector") };
        for (v, path) in [
            (serde_json::json!({}), ""),
            (serde_json::json!({ "androidAccessibility": {} }), ""),
            (serde_json::json!({ "index": 0 }), ""),
            (
                serde_json::json!({ "androidAccessibility": { "textRegex": "x" }, "below": {} }),
                ".below",
            ),
            (
                serde_json::json!({ "containsDescendants": [{ "web": { "cssSelector": "a" } }, { "index": 1 }] }),
                ".containsDescendants[1]",
            ),
        ] {
            assert_eq!(sel(v.clone()).without_predicate().as_deref(), Some(path), "{v}");
        }
        // Positive controls: a property, or a relation whose parts all say something.
        for v in [
            serde_json::json!({ "androidAccessibility": { "isEnabled": false } }),
            serde_json::json!({ "childOf": { "web": { "ariaRole": "list" } }, "index": 2 }),
        ] {
            assert_eq!(sel(v.clone()).without_predicate(), None, "{v}");
        }
    }
}
