//! A trailmap's navigation files besides its tools: shortcuts (`shortcuts/**/*.shortcut.yaml`, a
//! tool that goes from one waypoint to another), trailheads (`trailheads/**/*.trailhead.yaml`, a
//! tool that brings the app to a waypoint from anywhere), waypoints (`waypoints/`, read by
//! [`crate::waypoint`]) and toolsets (`toolsets/*.yaml` and the manifest's `toolsets:` list, read by
//! [`crate::toolset`]). Each file is read strictly, in the original's format.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::ParamType;
use crate::yaml::{self, Document, YamlError};

/// `<name>.shortcut.yaml` / `<name>.trailhead.yaml`: a tool with a navigation edge. Its body is a
/// list of tool calls (`tools:`, as a composed tool's), or none: then it attaches the edge to the
/// tool of the same `id` declared elsewhere (a scripted tool, or a built-in named by `class:`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavToolSpec {
    pub id: String,
    /// The original binds a Kotlin class; here the built-in tool named `id` is the body.
    #[serde(default, rename = "class")]
    pub class: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Vec<NavParam>,
    #[serde(default, alias = "surfaceToLlm")]
    pub surface_to_llm: Option<bool>,
    #[serde(default, alias = "isRecordable")]
    pub is_recordable: Option<bool>,
    /// Every tool runs on the host here: read, needs nothing more.
    #[serde(default, alias = "requiresHost")]
    pub requires_host: Option<bool>,
    /// Kept as data (the original's verify steps read it).
    #[serde(default, alias = "isVerification")]
    pub is_verification: Option<bool>,
    /// The calls, `- toolName: {args}`, whose strings may say `"{{params.<name>}}"`.
    #[serde(default)]
    pub tools: Option<Vec<Value>>,
    #[serde(default)]
    pub shortcut: Option<ShortcutEdge>,
    #[serde(default)]
    pub trailhead: Option<TrailheadEdge>,
}

/// `shortcut: {from, to}`: the waypoint the tool starts at and the one it ends at.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortcutEdge {
    pub from: String,
    pub to: String,
    /// Tells apart two shortcuts between the same waypoints (kept as data).
    #[serde(default)]
    pub variant: Option<String>,
}

/// `trailhead: {to}`: the waypoint the tool brings the app to, from anywhere; `dynamic: true`
/// instead when where it lands depends on its arguments.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrailheadEdge {
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub dynamic: bool,
}

/// One parameter, as the original declares them (required unless it says otherwise).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavParam {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    #[serde(default = "yes")]
    pub required: bool,
    #[serde(default)]
    pub description: Option<String>,
    /// The value an omitted argument takes.
    #[serde(default)]
    pub default: Option<Value>,
}

fn yes() -> bool {
    true
}

/// What a navigation tool's edge says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edge {
    Shortcut {
        from: String,
        to: String,
    },
    /// `to: None`: a dynamic trailhead, whose landing is not checked.
    Trailhead {
        to: Option<String>,
    },
}

impl NavToolSpec {
    pub fn edge(&self) -> Option<Edge> {
        match (&self.shortcut, &self.trailhead) {
            (Some(s), _) => Some(Edge::Shortcut {
                from: s.from.clone(),
                to: s.to.clone(),
            }),
            (None, Some(t)) => Some(Edge::Trailhead { to: t.to.clone() }),
            (None, None) => None,
        }
    }

    /// Only the edge: the tool itself is declared elsewhere.
    pub fn metadata_only(&self) -> bool {
        self.tools.is_none()
    }
}

/// The two kinds of navigation file: where they live and what they must say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NavKind {
    Shortcut,
    Trailhead,
}

impl NavKind {
    pub const ALL: [NavKind; 2] = [NavKind::Shortcut, NavKind::Trailhead];

    pub fn dir(self) -> &'static str {
        match self {
            NavKind::Shortcut => "shortcuts",
            NavKind::Trailhead => "trailheads",
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            NavKind::Shortcut => ".shortcut.yaml",
            NavKind::Trailhead => ".trailhead.yaml",
        }
    }
}

/// Every shortcut and trailhead file of the trailmap in `dir`, and every problem in them.
pub fn discover(dir: &Path, has_target: bool) -> (Vec<(PathBuf, NavKind, NavToolSpec)>, Vec<YamlError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for kind in NavKind::ALL {
        for file in crate::files::files_under(&dir.join(kind.dir()), kind.suffix()) {
            let doc = match yaml::parse_file(&file) {
                Ok(d) => d,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            match doc.decode::<NavToolSpec>() {
                Ok(spec) => {
                    let before = errors.len();
                    validate(&doc, &spec, kind, has_target, &mut errors);
                    if errors.len() == before {
                        found.push((file, kind, spec));
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    (found, errors)
}

/// The original's rules for a navigation file, each an error at its key.
fn validate(doc: &Document, spec: &NavToolSpec, kind: NavKind, has_target: bool, errors: &mut Vec<YamlError>) {
    let mut err = |path: &str, message: String| errors.push(doc.error_at(path, message));
    check_edge(spec, kind, &mut err);
    if kind == NavKind::Trailhead && !has_target {
        err(
            "trailhead",
            "a trailmap with no `target:` (a library) has no app to bring to a start state: move the trailhead to a target trailmap".into(),
        );
    }
    check_body(spec, &mut err);
    check_parameters(spec, &mut err);
}

/// The `shortcut:` or `trailhead:` block the file's kind asks for, and the waypoints it names.
fn check_edge(spec: &NavToolSpec, kind: NavKind, err: &mut impl FnMut(&str, String)) {
    match (kind, &spec.shortcut, &spec.trailhead) {
        (_, Some(_), Some(_)) => err(
            "trailhead",
            "a tool is a shortcut (from one waypoint to another) or a trailhead (to one waypoint from anywhere), not both".into(),
        ),
        (NavKind::Shortcut, None, _) => err("", "a `.shortcut.yaml` needs a `shortcut: {from, to}` block".into()),
        (NavKind::Trailhead, _, None) => err("", "a `.trailhead.yaml` needs a `trailhead: {to}` block".into()),
        (NavKind::Shortcut, Some(s), None) => {
            check_waypoint_id(err, "shortcut.from", &s.from);
            check_waypoint_id(err, "shortcut.to", &s.to);
            if s.variant.as_deref().is_some_and(|v| v.trim().is_empty()) {
                err("shortcut.variant", "`variant` is empty: leave it out, or name what tells this shortcut apart".into());
            }
        }
        (NavKind::Trailhead, None, Some(t)) => match (&t.to, t.dynamic) {
            (Some(_), true) => err(
                "trailhead.to",
                "a `dynamic: true` trailhead lands where its arguments take it, so it names no `to`".into(),
            ),
            (Some(to), false) => check_waypoint_id(err, "trailhead.to", to),
            (None, false) => err(
                "trailhead",
                "a trailhead names the waypoint it lands on (`to:`), or says `dynamic: true`".into(),
            ),
            (None, true) => {}
        },
    }
}

/// A `tools:` body declares the tool (and needs a description); without one the file is only an edge.
fn check_body(spec: &NavToolSpec, err: &mut impl FnMut(&str, String)) {
    if spec.class.is_some() && spec.tools.is_some() {
        err(
            "class",
            "`class:` and `tools:` both give the tool's body; keep one".into(),
        );
    }
    if spec.tools.is_some() {
        if spec.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
            err(
                "description",
                "a tool with a `tools:` body needs a `description:` (the LLM reads it)".into(),
            );
        }
    } else {
        // Only the edge: description, parameters and flags come from the tool it names.
        for (key, set) in [
            ("description", spec.description.is_some()),
            ("parameters", !spec.parameters.is_empty()),
            ("surface_to_llm", spec.surface_to_llm.is_some()),
            ("is_recordable", spec.is_recordable.is_some()),
        ] {
            if set {
                err(
                    key,
                    format!(
                        "`{key}` comes from the tool this file attaches its edge to; with no `tools:` body it is not declared here"
                    ),
                );
            }
        }
    }
}

/// Each parameter's name is an identifier, declared once.
fn check_parameters(spec: &NavToolSpec, err: &mut impl FnMut(&str, String)) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, p) in spec.parameters.iter().enumerate() {
        let valid = p.name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && p.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            err(
                &format!("parameters[{i}].name"),
                "a parameter name is letters, digits and `_` (no dots: `{{params.x}}` reads up to the first)".into(),
            );
        }
        if !seen.insert(p.name.as_str()) {
            err(
                &format!("parameters[{i}].name"),
                "this parameter is declared twice".into(),
            );
        }
    }
}

/// A waypoint id is `<trailmap>/<screen>[/...]`: at least two non-blank segments.
fn check_waypoint_id(err: &mut impl FnMut(&str, String), path: &str, id: &str) {
    let segments: Vec<&str> = id.split('/').collect();
    if segments.len() < 2 || segments.iter().any(|s| s.trim().is_empty()) {
        err(
            path,
            "a waypoint id is `<trailmap>/<screen>` (slash-separated, no empty part), e.g. `clock/android/alarm_tab`"
                .into(),
        );
    }
}
