//! The generator: the shortest selector that matches one node of a snapshot and no other, for
//! recordings made from a tap on a node.

use super::{AndroidAccessibilityMatch, IosMaestroMatch, TrailblazeNodeSelector};
use crate::snapshot::Snapshot;

impl TrailblazeNodeSelector {
    /// The shortest selector that matches node `i` and no other: its own text, hint, resource id,
    /// content description or class; then two of them; then relational (`childOf` a uniquely selectable
    /// ancestor, `below` a uniquely selectable node); `index` last. `None` when the node has nothing to
    /// tell it apart (no text, hint, id or description): the caller falls back to a coordinate tap.
    pub fn for_node(snap: &Snapshot, i: usize) -> Option<TrailblazeNodeSelector> {
        // A page's node is selected by what a page offers (test id, DOM id, role and name, CSS).
        if snap.nodes.get(i).is_some_and(|n| n.web.is_some()) {
            return super::web_for_node(snap, i);
        }
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
    if n.is_ios() {
        // An iOS node is recorded as the original records it: an `iosMaestro` match.
        for (_, s) in &mut out {
            *s = ios_form(s);
        }
    }
    out
}

/// The same predicates as an `iosMaestro` match: the label is its accessibility text. Its text
/// pattern reads the value, else the placeholder, else the label, so a label-only node's own
/// text is said as its label.
fn ios_form(s: &TrailblazeNodeSelector) -> TrailblazeNodeSelector {
    let Some(a) = &s.android_accessibility else {
        return s.clone();
    };
    TrailblazeNodeSelector {
        ios_maestro: Some(IosMaestroMatch {
            text_regex: a.text_regex.clone(),
            resource_id_regex: a.resource_id_regex.clone(),
            accessibility_text_regex: a.content_description_regex.clone(),
            class_name_regex: a.class_name_regex.clone(),
            hint_text_regex: a.hint_text_regex.clone(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A single-predicate selector that matches only node `i`, if there is one.
fn unique_own(snap: &Snapshot, i: usize) -> Option<TrailblazeNodeSelector> {
    own_predicates(snap, i)
        .into_iter()
        .map(|(_, s)| s)
        .find(|s| s.resolve(snap) == [i])
}

fn merge(a: &TrailblazeNodeSelector, b: &TrailblazeNodeSelector) -> TrailblazeNodeSelector {
    if let (Some(x), Some(y)) = (&a.ios_maestro, &b.ios_maestro) {
        let m = IosMaestroMatch {
            text_regex: x.text_regex.clone().or(y.text_regex.clone()),
            resource_id_regex: x.resource_id_regex.clone().or(y.resource_id_regex.clone()),
            accessibility_text_regex: x
                .accessibility_text_regex
                .clone()
                .or(y.accessibility_text_regex.clone()),
            class_name_regex: x.class_name_regex.clone().or(y.class_name_regex.clone()),
            hint_text_regex: x.hint_text_regex.clone().or(y.hint_text_regex.clone()),
            ..Default::default()
        };
        return TrailblazeNodeSelector {
            ios_maestro: Some(m),
            ..Default::default()
        };
    }
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
