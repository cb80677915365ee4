//! The targets a check compares trails with: each target trailmap's surface (or why it does not
//! load), built once per check, and what a cached result of a trail against it depends on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Finding, exempt};
use crate::surface::client_files::Surface;
use trailblaze_core::project::Project;

/// What the native gate says about one trail file: what it adds to the report.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct TrailResult {
    pub calls: usize,
    pub findings: Vec<Finding>,
    pub notices: Vec<String>,
}

/// What a trail's result depends on besides its file's path and content: the target whose surface
/// checked it and the tools it calls there. `None` target: the result depends on nothing else (a
/// parse error, or no target to check against).
#[derive(Default)]
pub(super) struct Uses {
    pub target: Option<Arc<TargetEnv>>,
    /// The distinct tools it calls, sorted.
    pub tools: Vec<String>,
    /// It calls a tool its target does not have: the finding suggests the nearest recordable names.
    pub unknown: bool,
}

/// A target trailmap as the native gate sees it: its surface, or why its catalog does not load.
pub(super) struct TargetEnv {
    pub id: String,
    pub loaded: Result<Loaded, String>,
    /// What cache entries are compared with, computed on first use (a check without the cache
    /// never needs them).
    hashes: OnceLock<Hashes>,
}

pub(super) struct Loaded {
    pub surface: Arc<Surface>,
    /// An exempt trailmap's findings are warnings.
    pub warning: bool,
}

impl TargetEnv {
    pub fn hashes(&self) -> &Hashes {
        self.hashes.get_or_init(|| Hashes::of(self))
    }
}

/// Each target's surface, built once per check by the first worker that needs it.
pub(super) struct Targets<'p> {
    pub project: &'p Project,
    built: Mutex<HashMap<String, Arc<TargetEnv>>>,
}

impl<'p> Targets<'p> {
    pub fn new(project: &'p Project) -> Self {
        Targets {
            project,
            built: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, id: &str) -> Arc<TargetEnv> {
        // A worker that panicked while holding the lock left the map usable: entries are inserted whole.
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(env) = built.get(id) {
            return env.clone();
        }
        let loaded = crate::surface_of(self.project, id)
            .map(|surface| Loaded {
                surface,
                warning: exempt(self.project, id),
            })
            .map_err(|e| e.to_string());
        let env = Arc::new(TargetEnv {
            id: id.to_string(),
            loaded,
            hashes: OnceLock::new(),
        });
        built.insert(id.to_string(), env.clone());
        env
    }
}

/// A hash, as hex: SHA-256 cut to 128 bits (a cache key, not a signature).
pub(super) fn digest(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    // Length-prefixed, so no two different lists of parts hash the same bytes.
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let full: [u8; 32] = h.finalize().into();
    let mut out = String::with_capacity(32);
    for b in &full[..16] {
        use std::fmt::Write as _;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// What cache entries for one target are compared with.
pub(super) struct Hashes {
    /// How the target loads: its catalog's error, or that it loads and whether it is exempt.
    pub env: String,
    /// Each tool of its surface (the first of a name, as [`crate::surface::client_files::Surface::tool`])
    /// by its place in the surface, hashed when first asked for: a check reads the schemas of the
    /// tools its trails call, and hashing every tool made every built-in's schema (a few
    /// milliseconds of a `run`).
    tools: HashMap<String, (usize, OnceLock<String>)>,
    surface: Option<Arc<Surface>>,
    /// Its recordable names, in order.
    pub names: String,
}

impl Hashes {
    pub fn of(env: &TargetEnv) -> Hashes {
        let id = env.id.as_bytes();
        let loaded = match &env.loaded {
            Ok(l) => l,
            Err(e) => {
                return Hashes {
                    env: digest(&[id, b"error", e.as_bytes()]),
                    tools: HashMap::new(),
                    surface: None,
                    names: String::new(),
                };
            }
        };
        let surface = &loaded.surface;
        let mut tools = HashMap::new();
        for (at, t) in surface.tools.iter().enumerate() {
            tools.entry(t.name.clone()).or_insert_with(|| (at, OnceLock::new()));
        }
        let names: Vec<&[u8]> = surface.recordable.iter().map(|n| n.as_bytes()).collect();
        Hashes {
            env: digest(&[id, b"loads", &[u8::from(loaded.warning)]]),
            tools,
            surface: Some(surface.clone()),
            names: digest(&names),
        }
    }

    pub fn tool(&self, name: &str) -> String {
        let made = self
            .tools
            .get(name)
            .zip(self.surface.as_ref())
            .and_then(|((at, hash), surface)| {
                let t = surface.tools.get(*at)?;
                Some(hash.get_or_init(|| {
                    let recordable: &[u8] = if surface.is_recordable(&t.name) {
                        b"recordable"
                    } else {
                        b"hidden"
                    };
                    let schema = serde_json::to_vec(&t.args).unwrap_or_default();
                    digest(&[t.name.as_bytes(), recordable, &schema])
                }))
            });
        match made {
            Some(h) => h.clone(),
            None => digest(&[name.as_bytes(), b"absent"]),
        }
    }
}
