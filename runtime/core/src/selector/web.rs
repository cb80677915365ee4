//! The `web` driver match on a page's snapshot, and the generator of web selectors. A page decides
//! CSS (its own engine, through a [`CssOracle`]); every other field is matched here. `nthIndex`
//! picks among the nodes the other fields match, in document order.

use std::cell::RefCell;
use std::collections::HashMap;

use super::pattern::text_matches;
use super::{TrailblazeNodeSelector, WebMatch};
use crate::device::WebNode;
use crate::snapshot::Snapshot;

/// Whether node `i` of the snapshot matches a CSS selector.
pub type CssOracle<'a> = &'a dyn Fn(&str, usize) -> bool;

/// One resolution's context: the CSS oracle, and each `nthIndex` match's answer, worked out once.
pub(super) struct Cx<'a> {
    css: CssOracle<'a>,
    nth: RefCell<HashMap<*const WebMatch, Option<usize>>>,
}

impl<'a> Cx<'a> {
    pub(super) fn new(css: CssOracle<'a>) -> Cx<'a> {
        Cx {
            css,
            nth: RefCell::new(HashMap::new()),
        }
    }
}

/// `role "name"` (or `role` alone): the original's ARIA descriptor of a node.
pub fn descriptor(w: &WebNode) -> String {
    if w.name.is_empty() {
        w.role.clone()
    } else {
        format!("{} \"{}\"", w.role, w.name)
    }
}

impl WebMatch {
    /// Whether node `i` has every property this match sets, `nthIndex` included.
    pub(super) fn matches_at(&self, snap: &Snapshot, i: usize, cx: &Cx<'_>) -> bool {
        if !self.matches_fields(snap, i, cx) {
            return false;
        }
        let Some(k) = self.nth_index else {
            return true;
        };
        let key = self as *const WebMatch;
        if let Some(answer) = cx.nth.borrow().get(&key) {
            return *answer == Some(i);
        }
        let nth = usize::try_from(k).ok().and_then(|k| {
            (0..snap.nodes.len())
                .filter(|&j| self.matches_fields(snap, j, cx))
                .nth(k)
        });
        cx.nth.borrow_mut().insert(key, nth);
        nth == Some(i)
    }

    fn matches_fields(&self, snap: &Snapshot, i: usize, cx: &Cx<'_>) -> bool {
        let Some(w) = snap.nodes[i].web.as_deref() else {
            return false;
        };
        self.aria_role
            .as_deref()
            .is_none_or(|r| r.eq_ignore_ascii_case(&w.role))
            && self
                .aria_name_regex
                .as_deref()
                .is_none_or(|p| text_matches(p, Some(&w.name)))
            && self
                .aria_descriptor_regex
                .as_deref()
                .is_none_or(|p| text_matches(p, Some(&descriptor(w))))
            && self
                .data_test_id
                .as_deref()
                .is_none_or(|t| w.test_id.as_deref() == Some(t))
            && self
                .heading_level
                .is_none_or(|l| w.level.is_some_and(|have| i64::from(have) == l))
            && self.css_selector.as_deref().is_none_or(|c| (cx.css)(c, i))
    }
}

/// A selector as an error names it (the web tools' messages): `css=#x`, `button "Submit"`, `[data-testid=y]`, or its JSON.
pub fn describe(sel: &TrailblazeNodeSelector) -> String {
    let plain = TrailblazeNodeSelector {
        web: None,
        ..sel.clone()
    };
    if let (Some(w), true) = (&sel.web, plain == TrailblazeNodeSelector::default()) {
        let mut parts = Vec::new();
        if let Some(c) = &w.css_selector {
            parts.push(format!("css={c}"));
        }
        if let Some(t) = &w.data_test_id {
            parts.push(format!("[data-testid={t}]"));
        }
        match (&w.aria_role, &w.aria_name_regex) {
            (Some(r), Some(n)) => parts.push(format!("{r} \"{n}\"")),
            (Some(r), None) => parts.push(r.clone()),
            (None, Some(n)) => parts.push(format!("name \"{n}\"")),
            (None, None) => {}
        }
        if let Some(d) = &w.aria_descriptor_regex {
            parts.push(format!("descriptor {d}"));
        }
        if let Some(l) = w.heading_level {
            parts.push(format!("level {l}"));
        }
        if let Some(n) = w.nth_index {
            parts.push(format!("nth {n}"));
        }
        if !parts.is_empty() {
            return parts.join(" ");
        }
    }
    serde_json::to_string(sel).unwrap_or_default()
}

fn web(m: WebMatch) -> TrailblazeNodeSelector {
    TrailblazeNodeSelector {
        web: Some(m),
        ..Default::default()
    }
}

/// `#id` as CSS writes it (characters other than letters, digits, `-` and `_` escaped).
fn css_id(id: &str) -> String {
    let mut out = String::from("#");
    for (i, c) in id.chars().enumerate() {
        let plain = c.is_ascii_alphanumeric() || c == '-' || c == '_' || !c.is_ascii();
        if plain && !(i == 0 && c.is_ascii_digit()) {
            out.push(c);
        } else {
            out.push_str(&format!("\\{:x} ", c as u32));
        }
    }
    out
}

/// The shortest selector that picks node `i` of a page's snapshot alone: its test id, its DOM id,
/// its role and name, its role and name with `nthIndex`, then a CSS path; `None` when it has none
/// (a node inside a shadow root with nothing else to tell it apart).
pub fn web_for_node(snap: &Snapshot, i: usize) -> Option<TrailblazeNodeSelector> {
    let w = snap.nodes.get(i)?.web.as_deref()?;
    let count = |pred: &dyn Fn(&WebNode, Option<&str>) -> bool| {
        snap.nodes
            .iter()
            .filter(|n| n.web.as_deref().is_some_and(|x| pred(x, n.resource_id.as_deref())))
            .count()
    };
    if let Some(t) = &w.test_id
        && count(&|x, _| x.test_id.as_ref() == Some(t)) == 1
    {
        return Some(web(WebMatch {
            data_test_id: Some(t.clone()),
            ..Default::default()
        }));
    }
    let id = snap.nodes[i].resource_id.as_deref().filter(|s| !s.is_empty());
    if let Some(id) = id
        && count(&|_, other| other == Some(id)) == 1
    {
        return Some(web(WebMatch {
            css_selector: Some(css_id(id)),
            ..Default::default()
        }));
    }
    if !w.name.is_empty() && w.role != "generic" {
        let by_name = WebMatch {
            aria_role: Some(w.role.clone()),
            aria_name_regex: Some(regex::escape(&w.name)),
            ..Default::default()
        };
        let matches = web(by_name.clone()).resolve(snap);
        if matches == [i] {
            return Some(web(by_name));
        }
        if let Some(k) = matches.iter().position(|&j| j == i) {
            return Some(web(WebMatch {
                nth_index: Some(k as i64),
                ..by_name
            }));
        }
    }
    css_path(snap, i).map(|css| {
        web(WebMatch {
            css_selector: Some(css),
            ..Default::default()
        })
    })
}

/// `#anchor > div:nth-child(2) > button:nth-child(1)`: from the nearest ancestor with a unique id
/// (or the document's body) down to node `i`, within its frame.
fn css_path(snap: &Snapshot, i: usize) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut at = i;
    for _ in 0..64 {
        let n = &snap.nodes[at];
        let w = n.web.as_deref()?;
        if w.tag == "body" || w.frame_url.is_some() {
            parts.push("body".into());
            break;
        }
        if let Some(id) = n.resource_id.as_deref().filter(|s| !s.is_empty())
            && snap
                .nodes
                .iter()
                .filter(|o| o.resource_id.as_deref() == Some(id))
                .count()
                == 1
        {
            parts.push(css_id(id));
            break;
        }
        // A shadow root or a slot breaks the chain: CSS cannot cross it.
        if w.detached_parent || w.nth_child == 0 {
            return None;
        }
        parts.push(format!("{}:nth-child({})", w.tag, w.nth_child));
        at = n.parent?;
    }
    parts.reverse();
    Some(parts.join(" > "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_escaped_as_css_reads_them() {
        assert_eq!(css_id("nav-form"), "#nav-form");
        assert_eq!(css_id("1x"), "#\\31 x");
        assert_eq!(css_id("a.b"), "#a\\2e b");
    }
}
