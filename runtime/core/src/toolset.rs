//! Toolsets: named lists of tools that choose what the LLM is offered. The framework's own
//! (`core_interaction`, `navigation`, `verification`, `memory`, ... under the original's ids) are
//! built in; a trailmap adds its own files (`toolsets/*.yaml`, and those its manifest's `toolsets:`
//! lists), a workspace one winning over a built-in of the same id. A session starts with the
//! toolsets its trailmap declares for the device's platform (`target.platforms.<p>.tool_sets`, else a
//! dependency's `defaults.<p>.tool_sets`, else the framework's defaults) plus every `always_enabled`
//! one; `setActiveToolSets` replaces that choice (the `always_enabled` ones stay).
//!
//! A tool no toolset of the platform lists is not governed by toolsets: its own flags decide.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::device::Platform;
use crate::yaml::{self, YamlError};

/// A toolset file, as the original writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsetSpec {
    pub id: String,
    #[serde(default)]
    pub description: String,
    /// Platforms it is for (`android`, `ios`, `web`); absent: every platform its drivers allow.
    #[serde(default)]
    pub platforms: Option<Vec<String>>,
    /// The original's driver names (`android-ondevice-accessibility`, `playwright-native`, ...); a
    /// driver stands for its platform here.
    #[serde(default)]
    pub drivers: Option<Vec<String>>,
    /// Active in every session, whatever `setActiveToolSets` says.
    #[serde(default)]
    pub always_enabled: bool,
    #[serde(default)]
    pub tools: Vec<String>,
}

/// One known toolset and where it came from (`None`: built in).
#[derive(Debug, Clone)]
pub struct Toolset {
    pub spec: ToolsetSpec,
    pub file: Option<PathBuf>,
}

impl Toolset {
    /// Whether a session on `platform` can use it.
    pub fn fits(&self, platform: Platform) -> bool {
        let p = platform.as_str();
        let by_platform = self
            .spec
            .platforms
            .as_ref()
            .is_none_or(|ps| ps.iter().any(|x| x.eq_ignore_ascii_case(p)));
        let by_driver = self
            .spec
            .drivers
            .as_ref()
            .is_none_or(|ds| ds.iter().any(|d| driver_platform(d) == Some(platform)));
        by_platform && by_driver
    }
}

/// The platform a driver of the original drives; `None` for a driver this host has no counterpart
/// for (a cloud device service).
pub fn driver_platform(driver: &str) -> Option<Platform> {
    let d = driver.to_ascii_lowercase();
    if d.starts_with("android") {
        Some(Platform::Android)
    } else if d.starts_with("ios") {
        Some(Platform::Ios)
    } else if d.starts_with("playwright") || d == "web" {
        Some(Platform::Web)
    } else if d.starts_with("compose") || d == "desktop" {
        Some(Platform::Desktop)
    } else {
        None
    }
}

/// Every toolset a catalog knows, by id, and which ones a session starts with per platform.
#[derive(Debug, Clone, Default)]
pub struct Toolsets {
    pub sets: BTreeMap<String, Toolset>,
    /// Declared per platform (`android`, `web`, ...) by the trailmap or its dependencies; a platform
    /// with none declared starts with the framework's defaults.
    pub declared: BTreeMap<String, Vec<String>>,
}

impl Toolsets {
    /// The built-in toolsets, with `files` (a trailmap's) added over them.
    pub fn with(files: impl IntoIterator<Item = Toolset>) -> Toolsets {
        let mut sets: BTreeMap<String, Toolset> = builtin().into_iter().map(|t| (t.spec.id.clone(), t)).collect();
        for t in files {
            sets.insert(t.spec.id.clone(), t);
        }
        Toolsets {
            sets,
            declared: BTreeMap::new(),
        }
    }

    /// The toolsets a session on `platform` starts with: the declared (or default) ones and the
    /// always-enabled ones, those that fit the platform, sorted.
    pub fn initial(&self, platform: Platform) -> BTreeSet<String> {
        let declared = self
            .declared
            .get(platform.as_str())
            .cloned()
            .unwrap_or_else(|| default_for(platform).iter().map(|s| s.to_string()).collect());
        self.effective(platform, &declared)
    }

    /// `requested` plus the always-enabled toolsets, those that exist and fit `platform`.
    pub fn effective(&self, platform: Platform, requested: &[String]) -> BTreeSet<String> {
        self.sets
            .values()
            .filter(|t| t.fits(platform) && (t.spec.always_enabled || requested.contains(&t.spec.id)))
            .map(|t| t.spec.id.clone())
            .collect()
    }

    /// Whether some toolset fitting `platform` lists `tool`: then only an active one offers it.
    pub fn governs(&self, platform: Platform, tool: &str) -> bool {
        self.sets
            .values()
            .any(|t| t.fits(platform) && t.spec.tools.iter().any(|n| n == tool))
    }

    /// Whether an active toolset lists `tool`.
    pub fn offers(&self, active: &BTreeSet<String>, tool: &str) -> bool {
        active
            .iter()
            .filter_map(|id| self.sets.get(id))
            .any(|t| t.spec.tools.iter().any(|n| n == tool))
    }

    /// The toolsets that list `tool` (to tell a caller which one to enable).
    pub fn listing(&self, platform: Platform, tool: &str) -> Vec<String> {
        self.sets
            .values()
            .filter(|t| t.fits(platform) && t.spec.tools.iter().any(|n| n == tool))
            .map(|t| t.spec.id.clone())
            .collect()
    }

    /// Checks the ids a caller asks for: each must be known and fit `platform`.
    pub fn check_request(&self, platform: Platform, ids: &[String]) -> Result<(), String> {
        for id in ids {
            match self.sets.get(id) {
                None => {
                    let known: Vec<&String> = self.sets.keys().filter(|k| self.sets[*k].fits(platform)).collect();
                    let near = trailblaze_host_functions::decode::nearest(id, &known);
                    return Err(format!(
                        "unknown toolset `{id}`{} (known here: {})",
                        near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default(),
                        known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
                Some(t) if !t.fits(platform) => {
                    return Err(format!("toolset `{id}` is not for this session's device ({platform})"));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// The framework's defaults per platform (its `trailblaze` trailmap's `defaults:`).
pub fn default_for(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Android | Platform::Ios => &[
            "core_interaction",
            "navigation",
            "observation",
            "verification",
            "memory",
        ],
        Platform::Web => &["web_core", "web_verification", "memory"],
        Platform::Desktop => &["compose_core", "compose_verification", "memory"],
    }
}

const MOBILE: &[&str] = &["android", "ios"];

/// This host's framework toolsets, under the original's ids; the tools are this host's names for
/// what the original lists (its `tap` is ours, and our `type`, `snapshot` and `runSequence` go with
/// the core interactions).
fn builtin() -> Vec<Toolset> {
    let set = |id: &str, description: &str, always: bool, platforms: &[&str], tools: &[&str]| Toolset {
        spec: ToolsetSpec {
            id: id.to_string(),
            description: description.to_string(),
            platforms: (!platforms.is_empty()).then(|| platforms.iter().map(|s| s.to_string()).collect()),
            drivers: None,
            always_enabled: always,
            tools: tools.iter().map(|s| s.to_string()).collect(),
        },
        file: None,
    };
    vec![
        set(
            "core_interaction",
            "Tapping, typing, keys, swipes and launching: the interactions every session has.",
            true,
            MOBILE,
            &[
                "tap",
                "type",
                "snapshot",
                "runSequence",
                "clearText",
                "eraseText",
                "hideKeyboard",
                "inputText",
                "inputTextRandom",
                "launchApp",
                "networkConnection",
                "openUrl",
                "mobile_pasteClipboard",
                "pressKey",
                "scrollUntilTextIsVisible",
                "mobile_setClipboard",
                "swipe",
                "takeSnapshot",
                "longPress",
                "dragTo",
                "tapOnPoint",
                "wait",
                "waitForChange",
            ],
        ),
        set(
            "navigation",
            "Moving between screens: back, launching, links, scrolling to a text.",
            false,
            MOBILE,
            &["launchApp", "openUrl", "pressBack", "scrollUntilTextIsVisible"],
        ),
        set(
            "observation",
            "Looking at the screen.",
            false,
            MOBILE,
            &["takeSnapshot"],
        ),
        set(
            "verification",
            "Checks that change nothing on the screen.",
            false,
            MOBILE,
            &["assertVisible", "assertNotVisibleWithText", "assertWaypoint"],
        ),
        set(
            "memory",
            "Remembering values from the screen and comparing them.",
            false,
            &[],
            &[
                "assertEquals",
                "assertMath",
                "assertNotEquals",
                "assertWithAi",
                "dumpMemory",
                "rememberNumber",
                "rememberText",
                "rememberWithAi",
            ],
        ),
        set(
            "meta",
            "Reporting how the objective stands.",
            true,
            &[],
            &["objectiveStatus"],
        ),
        set(
            "mobile_primitives",
            "Clipboard, installed apps and app data, for scripts and the LLM.",
            true,
            MOBILE,
            &[
                "mobile_clearAppData",
                "mobile_listInstalledApps",
                "mobile_listInstalledAppsDetailed",
                "mobile_pasteClipboard",
                "mobile_setClipboard",
            ],
        ),
        set(
            "android_framework",
            "Android broadcasts and shell for scripts; installed apps for the LLM.",
            true,
            &["android"],
            &["mobile_listInstalledApps", "android_sendBroadcast", "android_adbShell"],
        ),
        set(
            "android_primitives",
            "Android shell, broadcasts, permissions, demo mode and files, for scripts.",
            true,
            &["android"],
            &[
                "android_adbShell",
                "android_grantAppOpsPermission",
                "android_grantPermissions",
                "android_sendBroadcast",
                "android_systemUiDemoMode",
                "android_writeBytesToFile",
                "android_writeFileToDownloads",
            ],
        ),
        set(
            "web_core",
            "Clicking, typing, navigating and scrolling a web page.",
            false,
            &["web"],
            &[
                "web_click",
                "web_type",
                "web_navigate",
                "web_scroll",
                "web_hover",
                "web_pressKey",
                "web_selectOption",
                "web_wait",
                "web_snapshot",
                "web_requestDetails",
                "web_resize",
                "web_currentUrl",
                "web_waitForUrl",
                "web_applyCookies",
                "web_getStorageState",
                "web_fillSecret",
            ],
        ),
        set(
            "web_framework",
            "Page scripts for scripted tools (never offered to the LLM).",
            true,
            &["web"],
            &["web_evaluate"],
        ),
        set(
            "web_verification",
            "Checks on a web page.",
            false,
            &["web"],
            &[
                "web_verifyTextVisible",
                "web_verifyElementVisible",
                "web_verifyValue",
                "web_verifyListVisible",
                "web_assertNetworkEvent",
                "assertWaypoint",
            ],
        ),
        set(
            "compose_core",
            "Clicking, typing and scrolling a Compose desktop app.",
            false,
            &["desktop"],
            &[
                "compose_click",
                "compose_type",
                "compose_scroll",
                "compose_wait",
                "compose_request_details",
                "takeSnapshot",
            ],
        ),
        set(
            "compose_verification",
            "Checks on a Compose desktop app.",
            false,
            &["desktop"],
            &[
                "compose_verify_text_visible",
                "compose_verify_element_visible",
                "assertWaypoint",
            ],
        ),
    ]
}

/// The toolset files of the trailmap in `dir`: every `toolsets/**/*.yaml`, then each file the
/// manifest's `toolsets:` names (relative to the trailmap), each once.
pub fn discover(dir: &Path, listed: &[String]) -> (Vec<Toolset>, Vec<YamlError>) {
    let mut files = crate::files::files_under(&dir.join("toolsets"), ".yaml");
    let mut errors = Vec::new();
    for rel in listed {
        let file = dir.join(rel);
        if rel.contains("..") || !file.is_file() {
            errors.push(YamlError::new(
                &dir.join("trailmap.yaml"),
                "",
                yaml::Pos { line: 1, col: 1 },
                format!("`toolsets:` names `{rel}`, which is no file in this trailmap's folder"),
            ));
        } else if !files.contains(&file) {
            files.push(file);
        }
    }
    let mut found: Vec<Toolset> = Vec::new();
    for file in files {
        match yaml::from_file::<ToolsetSpec>(&file) {
            Ok(spec) => match found.iter().find(|t| t.spec.id == spec.id) {
                Some(first) => errors.push(match yaml::parse_file(&file) {
                    Ok(doc) => doc.error_at(
                        "id",
                        format!(
                            "toolset `{}` is declared in {} too",
                            spec.id,
                            first.file.as_deref().unwrap_or(Path::new("?")).display()
                        ),
                    ),
                    Err(e) => e,
                }),
                None => found.push(Toolset { spec, file: Some(file) }),
            },
            Err(e) => errors.push(e),
        }
    }
    (found, errors)
}

#[cfg(test)]
mod tests;
