//! What the LLM is offered, as the original decides it: an LLM-visible tool the device's platform
//! runs, that an active toolset lists when some toolset governs it; a shortcut only when the screen
//! is at its start waypoint; a trailhead always. `tools --json`, MCP's `tools/list`, the agent and
//! `trailblaze tool` all read this one rule.

use std::collections::BTreeSet;

use super::{Catalog, Edge, ToolDefinition};
use crate::device::Platform;
use crate::tool::ToolDescriptor;

/// Where a session stands: its device's platform, its active toolsets, and the waypoints the
/// screen is at (`None`: not looked at, so no shortcut is offered).
#[derive(Debug, Clone)]
pub struct Offer<'a> {
    pub platform: Platform,
    pub active: &'a BTreeSet<String>,
    pub here: Option<&'a [String]>,
}

/// Why an LLM-visible tool is not offered now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotOffered {
    /// No active toolset lists it: these would.
    Toolset(Vec<String>),
    /// A shortcut whose start waypoint the screen is not at.
    NotAtStart(String),
    /// The device's platform does not run it.
    Platform,
}

impl NotOffered {
    pub fn explain(&self, tool: &str) -> String {
        match self {
            NotOffered::Toolset(sets) => format!(
                "`{tool}` is in toolset {}, which is not active; enable it with `setActiveToolSets {{toolSetIds: [{}]}}`",
                sets.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" or "),
                sets.first().map(String::as_str).unwrap_or_default()
            ),
            NotOffered::NotAtStart(from) => {
                format!("`{tool}` is a shortcut from waypoint `{from}`, and the screen is not there")
            }
            NotOffered::Platform => format!("`{tool}` does not run on this session's device"),
        }
    }
}

impl Catalog {
    /// Whether LLM-visible tool `t` is offered at `at`, or why not.
    pub fn offered(&self, t: &ToolDescriptor, at: &Offer<'_>) -> Result<(), NotOffered> {
        if !t.runs_on(at.platform) {
            return Err(NotOffered::Platform);
        }
        if self.toolsets.governs(at.platform, &t.name) && !self.toolsets.offers(at.active, &t.name) {
            return Err(NotOffered::Toolset(self.toolsets.listing(at.platform, &t.name)));
        }
        match self.edge(&t.name) {
            Some(Edge::Shortcut { from, .. }) if !at.here.is_some_and(|h| h.contains(from)) => {
                Err(NotOffered::NotAtStart(from.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The definitions the LLM is sent at `at`, sorted by name.
    pub fn offered_definitions(&self, at: &Offer<'_>) -> Vec<ToolDefinition> {
        self.llm_tools()
            .filter(|t| self.offered(t, at).is_ok())
            .map(|t| ToolDefinition {
                name: t.name.clone(),
                description: t.description.to_string(),
                input_schema: t.advertised_schema(),
            })
            .collect()
    }

    /// The toolsets a session on `platform` starts with.
    pub fn initial_toolsets(&self, platform: Platform) -> BTreeSet<String> {
        self.toolsets.initial(platform)
    }

    /// Whether any tool's offer depends on the screen (a shortcut): only then is the screen matched
    /// against the waypoints to decide what is offered.
    pub fn has_shortcuts(&self) -> bool {
        self.edges().any(|(_, e)| matches!(e, Edge::Shortcut { .. }))
    }
}

/// A toolset as `tools --toolsets` shows it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsetInfo {
    pub id: String,
    pub description: String,
    /// Active when a session on the platform starts.
    pub active: bool,
    pub always_enabled: bool,
    /// Whether a session on the platform can use it at all.
    pub fits: bool,
    /// The file it came from; `None` for a built-in one.
    pub file: Option<std::path::PathBuf>,
    pub tools: Vec<String>,
    /// Listed tools this catalog does not have (a typo, or another trailmap's tool).
    pub unknown: Vec<String>,
}

/// A shortcut or trailhead as `tools` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EdgeInfo {
    pub tool: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

impl Catalog {
    /// What a session on `platform` offers the LLM before it has looked at the screen: its starting
    /// toolsets, no shortcut (those wait for their start waypoint).
    pub fn offered_at_start(&self, platform: Platform) -> Vec<ToolDefinition> {
        let active = self.initial_toolsets(platform);
        self.offered_definitions(&Offer {
            platform,
            active: &active,
            here: None,
        })
    }

    /// Every toolset the catalog knows, for a session on `platform`.
    pub fn toolset_list(&self, platform: Platform) -> Vec<ToolsetInfo> {
        let active = self.initial_toolsets(platform);
        self.toolsets
            .sets
            .values()
            .map(|t| ToolsetInfo {
                id: t.spec.id.clone(),
                description: t.spec.description.clone(),
                active: active.contains(&t.spec.id),
                always_enabled: t.spec.always_enabled,
                fits: t.fits(platform),
                file: t.file.clone(),
                tools: t.spec.tools.clone(),
                unknown: t
                    .spec
                    .tools
                    .iter()
                    .filter(|n| self.tool(n).is_none())
                    .cloned()
                    .collect(),
            })
            .collect()
    }

    /// Every shortcut and trailhead, by tool name.
    pub fn edge_list(&self) -> Vec<EdgeInfo> {
        self.edges()
            .map(|(tool, e)| match e {
                Edge::Shortcut { from, to } => EdgeInfo {
                    tool: tool.clone(),
                    from: Some(from.clone()),
                    to: Some(to.clone()),
                },
                Edge::Trailhead { to } => EdgeInfo {
                    tool: tool.clone(),
                    from: None,
                    to: to.clone(),
                },
            })
            .collect()
    }
}
