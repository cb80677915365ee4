//! Waypoints: named screens. A `*.waypoint.yaml` under a trailmap's `waypoints/` names a place in
//! the app (`clock/android/alarm_tab`) and, per device classifier (`android`, `ios`, `web`,
//! `android-tablet`, ...), the selectors that must be on the screen there (`required`, each at least
//! `minCount` times) and those that must not (`forbidden`). A screen is at a waypoint when every
//! required selector matches and no forbidden one does, for the closest block of the device's
//! classifier lineage (`android-phone`, then `android`), each list taken from the closest block
//! that declares it, as the original resolves them.
//!
//! Selectors are kept as written and checked by the type gate (`check`), so a bad one is a finding
//! at its line; the matcher decodes them when it needs them and fails closed on one it cannot use.
//! `{{target.appId}}` in a pattern stands for the trailmap's app id (several: any of them).

use std::path::PathBuf;

use serde_json::Value;

use crate::device::Platform;
use crate::selector::TrailblazeNodeSelector;
use crate::snapshot::Snapshot;
use crate::yaml::Pos;

mod load;

pub use load::discover;

/// One waypoint file.
#[derive(Debug, Clone)]
pub struct Waypoint {
    pub id: String,
    pub description: Option<String>,
    /// The deep link or path that reaches it (kept: the original's navigation graph uses it).
    pub route: Option<String>,
    pub file: PathBuf,
    /// The blocks by device classifier, in file order.
    pub blocks: Vec<(String, Block)>,
}

/// The part of a waypoint for one device classifier.
#[derive(Debug, Clone, Default)]
pub struct Block {
    pub route: Option<String>,
    pub required: Vec<Condition>,
    pub forbidden: Vec<Condition>,
}

/// One entry of `required` or `forbidden`.
#[derive(Debug, Clone)]
pub struct Condition {
    pub description: Option<String>,
    /// How many nodes must match for a required condition to hold (at least 1).
    pub min_count: u32,
    /// The selector as written; `None` for a condition of a kind this host does not evaluate (a
    /// required one never holds, a forbidden one never fires, as in the original).
    pub selector: Option<Value>,
    /// `android.required[0].selector`, within the file.
    pub path: String,
    /// Where the selector (or the condition, without one) is in the file.
    pub pos: Pos,
}

impl Condition {
    /// How the condition reads in a message: its description, else its selector.
    pub fn label(&self) -> String {
        match (&self.description, &self.selector) {
            (Some(d), _) => format!("\"{d}\""),
            (None, Some(s)) => s.to_string(),
            (None, None) => "(a condition with no selector)".to_string(),
        }
    }
}

/// The literal authors write in a pattern for the target's app id.
pub const APP_ID_PLACEHOLDER: &str = "{{target.appId}}";

/// The device classifiers of a platform, most specific first: the blocks a device reads.
pub fn lineage(platform: Platform) -> Vec<String> {
    let p = platform.as_str();
    // The form factor this host's devices take: a phone, an iPhone (an iPad reads the iPhone's
    // blocks too, then `ios`).
    let form = match platform {
        Platform::Android => Some("phone"),
        Platform::Ios => Some("iphone"),
        _ => None,
    };
    form.map(|f| format!("{p}-{f}"))
        .into_iter()
        .chain([p.to_string()])
        .collect()
}

/// How a screen stands against a waypoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Matched,
    /// Required conditions that did not hold, and forbidden ones that did (with how many nodes).
    Mismatch {
        missing: Vec<String>,
        present: Vec<String>,
    },
    /// The waypoint has no block for this device's classifiers: it describes no screen here.
    NoBlock {
        classifiers: Vec<String>,
    },
    /// A pattern still says `{{target.appId}}`: the trailmap declares no app id to put there.
    Unresolved {
        path: String,
    },
    /// A selector that cannot be used (the type gate reports it too): matching fails closed.
    BadSelector {
        path: String,
        why: String,
    },
}

impl Verdict {
    pub fn matched(&self) -> bool {
        matches!(self, Verdict::Matched)
    }

    /// Why the screen is not at waypoint `id`, in one sentence; empty when it is.
    pub fn explain(&self, id: &str) -> String {
        match self {
            Verdict::Matched => String::new(),
            Verdict::Mismatch { missing, present } => {
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!("missing required {}", missing.join("; ")));
                }
                if !present.is_empty() {
                    parts.push(format!("forbidden present {}", present.join("; ")));
                }
                format!("the screen is not at waypoint `{id}`: {}", parts.join("; "))
            }
            Verdict::NoBlock { classifiers } => format!(
                "waypoint `{id}` has no block for this device (looked for {}): it describes no screen here",
                classifiers.join(", ")
            ),
            Verdict::Unresolved { path } => format!(
                "waypoint `{id}`: `{path}` says {APP_ID_PLACEHOLDER}, and the trailmap declares no app id \
                 (`target.app_ids`) to put there; a forbidden selector that cannot match would pass, so it is not matched"
            ),
            Verdict::BadSelector { path, why } => {
                format!("waypoint `{id}`: `{path}` cannot be used ({why}); `trailblaze check` shows where")
            }
        }
    }
}

/// The waypoints a session knows (its trailmap's and its dependencies'), and the app ids that
/// `{{target.appId}}` stands for.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Sorted by id.
    waypoints: Vec<Waypoint>,
    app_ids: Vec<String>,
}

impl Registry {
    /// The registry of `waypoints` (each id once: the caller keeps the first) for a target with
    /// `app_ids`.
    pub fn new(mut waypoints: Vec<Waypoint>, app_ids: Vec<String>) -> Registry {
        waypoints.sort_by(|a, b| a.id.cmp(&b.id));
        waypoints.dedup_by(|b, a| a.id == b.id);
        Registry { waypoints, app_ids }
    }

    pub fn is_empty(&self) -> bool {
        self.waypoints.is_empty()
    }

    pub fn len(&self) -> usize {
        self.waypoints.len()
    }

    pub fn get(&self, id: &str) -> Option<&Waypoint> {
        self.waypoints
            .binary_search_by(|w| w.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.waypoints[i])
    }

    pub fn all(&self) -> &[Waypoint] {
        &self.waypoints
    }

    pub fn ids(&self) -> Vec<String> {
        self.waypoints.iter().map(|w| w.id.clone()).collect()
    }

    /// How `snap`, from a device of `platform`, stands against `wp`.
    pub fn evaluate(&self, wp: &Waypoint, snap: &Snapshot, platform: Platform) -> Verdict {
        let chain = lineage(platform);
        let blocks: Vec<&Block> = chain
            .iter()
            .filter_map(|c| wp.blocks.iter().find(|(k, _)| k == c).map(|(_, b)| b))
            .collect();
        if blocks.is_empty() {
            return Verdict::NoBlock { classifiers: chain };
        }
        // Each list from the closest block that declares one, as the original resolves them.
        let pick = |f: fn(&Block) -> &Vec<Condition>| -> &[Condition] {
            blocks
                .iter()
                .map(|b| f(b))
                .find(|l| !l.is_empty())
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        let required = pick(|b| &b.required);
        let forbidden = pick(|b| &b.forbidden);
        let mut missing = Vec::new();
        let mut present = Vec::new();
        for (cond, is_required) in required
            .iter()
            .map(|c| (c, true))
            .chain(forbidden.iter().map(|c| (c, false)))
        {
            let count = match self.count(cond, snap) {
                Ok(n) => n,
                Err(v) => return v,
            };
            if is_required && count < cond.min_count as usize {
                missing.push(format!("{} ({count} of {} found)", cond.label(), cond.min_count));
            } else if !is_required && count > 0 {
                present.push(format!("{} ({count} found)", cond.label()));
            }
        }
        if missing.is_empty() && present.is_empty() {
            Verdict::Matched
        } else {
            Verdict::Mismatch { missing, present }
        }
    }

    /// The ids of the waypoints `snap` is at, sorted.
    pub fn matching(&self, snap: &Snapshot, platform: Platform) -> Vec<String> {
        self.waypoints
            .iter()
            .filter(|w| self.evaluate(w, snap, platform).matched())
            .map(|w| w.id.clone())
            .collect()
    }

    /// How many nodes `cond` matches; a condition with no selector matches none.
    fn count(&self, cond: &Condition, snap: &Snapshot) -> Result<usize, Verdict> {
        let Some(raw) = &cond.selector else { return Ok(0) };
        let sel = self.selector(cond, raw)?;
        Ok(sel.resolve(snap).len())
    }

    /// The condition's selector with `{{target.appId}}` put in, decoded and usable.
    fn selector(&self, cond: &Condition, raw: &Value) -> Result<TrailblazeNodeSelector, Verdict> {
        let expanded = expand_app_id(raw, &self.app_ids);
        if expanded.to_string().contains(APP_ID_PLACEHOLDER) {
            return Err(Verdict::Unresolved {
                path: cond.path.clone(),
            });
        }
        let bad = |why: String| Verdict::BadSelector {
            path: cond.path.clone(),
            why,
        };
        let sel: TrailblazeNodeSelector =
            trailblaze_host_functions::decode::decode(&expanded).map_err(|e| bad(e.to_string()))?;
        if let Some(p) = sel.without_predicate() {
            return Err(bad(format!("`selector{p}` has no predicate")));
        }
        if let Some((p, why)) = sel.invalid_pattern() {
            return Err(bad(format!("`selector{p}`: {why}")));
        }
        Ok(sel)
    }
}

/// `raw` with [`APP_ID_PLACEHOLDER`] in every string replaced by the app id as a literal pattern
/// (several: an alternation of them). With no app id the placeholder stays, for the caller to see.
pub fn expand_app_id(raw: &Value, app_ids: &[String]) -> Value {
    let with = match app_ids {
        [] => return raw.clone(),
        [one] => regex::escape(one),
        many => format!(
            "(?:{})",
            many.iter().map(|a| regex::escape(a)).collect::<Vec<_>>().join("|")
        ),
    };
    fn walk(v: &Value, with: &str) -> Value {
        match v {
            Value::String(s) if s.contains(APP_ID_PLACEHOLDER) => Value::String(s.replace(APP_ID_PLACEHOLDER, with)),
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, with)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), walk(v, with))).collect()),
            other => other.clone(),
        }
    }
    walk(raw, &with)
}

/// `{{target.appId}}` replaced by a sample id: what the type gate checks a pattern as.
pub fn with_sample_app_id(raw: &Value) -> Value {
    expand_app_id(raw, &["com.example.app".to_string()])
}

#[cfg(test)]
mod tests;
