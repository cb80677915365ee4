//! Finding the element a `web_*` tool names, and waiting for it the way Playwright does: captured
//! again and again until it is attached and visible, then checked (enabled, stable, not covered)
//! until it can take the action, all within the timeout. A failure says what it waited for and
//! what it saw last.

use std::collections::HashMap;
use std::time::Instant;

use super::page;
use crate::device::Checks;
use trailblaze_core::device::WebHandle;
use trailblaze_core::selector::{TrailblazeNodeSelector, WebMatch, describe};
use trailblaze_core::snapshot::Snapshot;
use trailblaze_core::tool::{ToolCx, ToolFailure};

/// How often a wait looks again.
use super::POLL;
use trailblaze_core::budget::poll;

/// What a tool names: a recorded selector, or a ref (see the module's doc).
#[derive(Debug, Clone)]
pub(super) enum Target {
    Selector(Box<TrailblazeNodeSelector>),
    Ref(String),
}

impl Target {
    /// `nodeSelector` when it says something, else `ref`. The original ORs the two; here a
    /// recording's selector wins, since its `ref` numbered another tool's snapshot.
    pub(super) fn of(r: Option<&str>, sel: Option<&TrailblazeNodeSelector>) -> Result<Target, ToolFailure> {
        match (sel, r.map(str::trim).filter(|r| !r.is_empty())) {
            (Some(s), None) => Ok(Target::Selector(Box::new(s.clone()))),
            (Some(s), Some(_)) if s.without_predicate().is_none() => Ok(Target::Selector(Box::new(s.clone()))),
            (_, Some(r)) => Ok(Target::Ref(r.to_string())),
            (None, None) => Err(
                "name the element: `ref` (a snapshot ref, an ARIA descriptor such as `button \"Submit\"`, \
                 or `css=...`) or `nodeSelector`"
                    .into(),
            ),
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Target::Selector(s) => describe(s),
            Target::Ref(r) => r.clone(),
        }
    }
}

/// An element found and ready: where to act, and which node of the snapshot it is.
pub(super) struct Found {
    pub handle: WebHandle,
    pub point: (f64, f64),
    pub r#ref: String,
}

/// Waits until `target` is attached, visible and passes `checks`, or fails at `until`.
pub(super) fn ready(cx: &ToolCx<'_>, target: &Target, checks: Checks, until: Instant) -> Result<Found, ToolFailure> {
    let started = Instant::now();
    let mut seen = String::from("nothing yet");
    let mut fresh = false;
    let found = poll(Some(cx.deadline), until, POLL, || {
        let snap = if std::mem::replace(&mut fresh, true) {
            cx.recapture()?
        } else {
            cx.screen.snapshot()?
        };
        match find(cx, &snap, target, until)? {
            Ok(i) => {
                let node = &snap.nodes[i];
                let handle = node.web.as_ref().map(|w| w.handle).unwrap_or_default();
                match page(cx, |w| w.actionable(handle, checks, until)) {
                    Ok(Ok(point)) => {
                        return Ok(Some(Found {
                            handle,
                            point,
                            r#ref: node.r#ref.clone(),
                        }));
                    }
                    Ok(Err(why)) => seen = format!("found [{}] {}, but it is {why}", node.r#ref, node.class_name),
                    // The page changed between the capture and the check: look again.
                    Err(ToolFailure::Failed(m)) if m.contains("changed since") => {}
                    Err(e) => return Err(e),
                }
            }
            Err(saw) => seen = saw,
        }
        Ok(None)
    })?;
    found.ok_or_else(|| {
        format!(
            "waited {} ms for `{}` to be attached and visible{}: {seen}",
            started.elapsed().as_millis(),
            target.describe(),
            wanted(checks)
        )
        .into()
    })
}

/// Waits until `target` is attached and visible (no other check), or fails at `until`.
pub(super) fn visible(cx: &ToolCx<'_>, target: &Target, until: Instant) -> Result<Found, ToolFailure> {
    ready(cx, target, Checks::default(), until)
}

fn wanted(c: Checks) -> String {
    let mut w = vec![", stable"];
    if c.enabled {
        w.push(", enabled");
    }
    if c.editable {
        w.push(", editable");
    }
    if c.hit {
        w.push(" and not covered");
    }
    w.concat()
}

/// The node `target` names in `snap`: `Ok(Ok(i))`, or `Ok(Err(what was seen))`.
pub(super) fn find(
    cx: &ToolCx<'_>,
    snap: &Snapshot,
    target: &Target,
    until: Instant,
) -> Result<Result<usize, String>, ToolFailure> {
    match target {
        Target::Selector(sel) => by_selector(cx, snap, sel, until),
        Target::Ref(r) => by_ref(cx, snap, r, until),
    }
}

fn by_ref(cx: &ToolCx<'_>, snap: &Snapshot, r: &str, until: Instant) -> Result<Result<usize, String>, ToolFailure> {
    if let Some(css) = r.strip_prefix("css=") {
        return by_selector(cx, snap, &css_selector(css), until);
    }
    if let Some(i) = snap.by_ref(r) {
        return Ok(Ok(i));
    }
    if let Some(n) = r.strip_prefix('e').and_then(|d| d.parse::<usize>().ok()) {
        return Ok(
            original_element(snap, n).ok_or_else(|| format!("no element `{r}` on the page (take a fresh snapshot)"))
        );
    }
    let (role, name) = parse_descriptor(r);
    let sel = |role: Option<&str>, name: Option<&str>| TrailblazeNodeSelector {
        web: Some(WebMatch {
            aria_role: role.map(str::to_string),
            aria_name_regex: name.map(regex::escape),
            ..Default::default()
        }),
        ..Default::default()
    };
    if let Some(role) = role.filter(|r| ROLES.contains(r)) {
        let hits = sel(Some(role), name.as_deref()).resolve(snap);
        return Ok(hits.first().copied().ok_or_else(|| format!("no {r} on the page")));
    }
    // Not a role: the text is a name (of a control first), else visible text.
    let hits = sel(None, Some(r)).resolve(snap);
    let control = hits
        .iter()
        .find(|&&i| snap.nodes[i].clickable || snap.nodes[i].editable);
    if let Some(&i) = control.or(hits.first()) {
        return Ok(Ok(i));
    }
    let by_text = snap
        .nodes
        .iter()
        .position(|n| n.web.as_deref().and_then(|w| w.own_text.as_deref()) == Some(r));
    Ok(by_text.ok_or_else(|| format!("no element named or reading `{r}`, and no such snapshot ref")))
}

/// `css=...` as a selector.
pub(super) fn css_selector(css: &str) -> TrailblazeNodeSelector {
    TrailblazeNodeSelector {
        web: Some(WebMatch {
            css_selector: Some(css.to_string()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// ARIA roles a descriptor may start with.
const ROLES: &[&str] = &[
    "alert",
    "article",
    "banner",
    "button",
    "cell",
    "checkbox",
    "columnheader",
    "combobox",
    "complementary",
    "contentinfo",
    "dialog",
    "document",
    "figure",
    "form",
    "generic",
    "grid",
    "group",
    "heading",
    "img",
    "link",
    "list",
    "listbox",
    "listitem",
    "main",
    "menu",
    "menubar",
    "menuitem",
    "navigation",
    "option",
    "paragraph",
    "progressbar",
    "radio",
    "region",
    "row",
    "rowheader",
    "searchbox",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "textbox",
    "toolbar",
    "tooltip",
    "tree",
    "treeitem",
];

/// `button "Submit"`, `heading 'All orders'`, `textbox Email`, `navigation`: role and name.
fn parse_descriptor(r: &str) -> (Option<&str>, Option<String>) {
    let r = r.trim();
    let (role, rest) = match r.split_once(' ') {
        Some((a, b)) => (a, b.trim()),
        None => (r, ""),
    };
    if rest.is_empty() {
        return (Some(role), None);
    }
    let unquoted = rest
        .strip_prefix('"')
        .and_then(|x| x.rfind('"').map(|e| &x[..e]))
        .or_else(|| rest.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(rest);
    (Some(role), Some(unquoted.replace("\\\"", "\"")))
}

/// The original's `eN`: the N-th element of its compact list (controls, and named elements that
/// are not plain containers, paragraphs included), in document order.
fn original_element(snap: &Snapshot, n: usize) -> Option<usize> {
    const CONTROLS: &[&str] = &[
        "button",
        "link",
        "textbox",
        "combobox",
        "searchbox",
        "checkbox",
        "radio",
        "switch",
        "tab",
        "menuitem",
        "option",
        "slider",
        "spinbutton",
    ];
    let listed = snap.nodes.iter().enumerate().filter(|(_, node)| {
        node.web.as_deref().is_some_and(|w| {
            let named = !w.name.is_empty() || (w.role == "paragraph" && w.own_text.is_some());
            !w.in_name
                && (CONTROLS.contains(&w.role.as_str())
                    || (named && !matches!(w.role.as_str(), "generic" | "none" | "presentation" | "document")))
        })
    });
    listed.map(|(i, _)| i).nth(n.checked_sub(1)?)
}

fn by_selector(
    cx: &ToolCx<'_>,
    snap: &Snapshot,
    sel: &TrailblazeNodeSelector,
    until: Instant,
) -> Result<Result<usize, String>, ToolFailure> {
    cx.check_selector(sel)?;
    let mut css: HashMap<String, Vec<usize>> = HashMap::new();
    let mut hidden = 0;
    let by_handle: HashMap<WebHandle, usize> = snap
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.web.as_ref().map(|w| (w.handle, i)))
        .collect();
    for c in css_of(sel) {
        if css.contains_key(&c) {
            continue;
        }
        let (handles, h) = page(cx, |w| w.query_css(&c, until))?.map_err(ToolFailure::Failed)?;
        hidden += h;
        css.insert(c, handles.iter().filter_map(|h| by_handle.get(h).copied()).collect());
    }
    let oracle = |c: &str, i: usize| css.get(c).is_some_and(|v| v.contains(&i));
    let hits = sel.resolve_with(snap, &oracle);
    Ok(hits.first().copied().ok_or_else(|| {
        if hidden > 0 {
            format!("no visible element matches; {hidden} hidden element(s) match its CSS")
        } else {
            "no element matches".to_string()
        }
    }))
}

/// Every CSS selector a selector holds, nested ones included.
fn css_of(sel: &TrailblazeNodeSelector) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![sel];
    while let Some(s) = stack.pop() {
        if out.len() > 64 {
            break;
        }
        if let Some(c) = s.web.as_ref().and_then(|w| w.css_selector.clone()) {
            out.push(c);
        }
        for r in [
            &s.below,
            &s.above,
            &s.left_of,
            &s.right_of,
            &s.child_of,
            &s.contains_child,
        ]
        .into_iter()
        .flatten()
        {
            stack.push(r);
        }
        stack.extend(s.contains_descendants.iter().flatten());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_read_with_and_without_quotes() {
        assert_eq!(
            parse_descriptor("button \"Submit\""),
            (Some("button"), Some("Submit".into()))
        );
        assert_eq!(
            parse_descriptor("heading 'All orders'"),
            (Some("heading"), Some("All orders".into()))
        );
        assert_eq!(
            parse_descriptor("textbox Email or phone"),
            (Some("textbox"), Some("Email or phone".into()))
        );
        assert_eq!(parse_descriptor("navigation"), (Some("navigation"), None));
    }
}
