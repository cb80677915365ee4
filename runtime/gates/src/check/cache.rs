//! The native gate's results on disk, so a check of trails that did not change reads them instead of
//! parsing and checking again.
//!
//! One file per trailmaps folder, `<cache_dir>/check/<hash of the folder>.cache`: a header line
//! (format, build and workspace fingerprint), then one line per trail:
//! `<hash of its absolute path> <checksum> <entry as JSON>`. An entry is reused only when
//! - its checksum holds (a torn or edited line is ignored),
//! - its key is the hash of the trail's absolute path, the path as given (findings name it) and its
//!   whole text — parse errors and notices depend on nothing else, so they are cached too;
//! - the target it was checked against still loads the same way (or fails with the same message), and
//!   every tool it calls has the same type there: the hash of the tool's argument schema and whether it
//!   is recordable, or "absent" for a tool the target did not have (so it is checked again when the
//!   tool appears). A trail that calls an unknown tool also keys on the target's recordable names,
//!   which its finding's "did you mean" lists.
//!
//! Anything else a result depends on is in the header: this build of trailblaze (the running binary's
//! size and time), the trailmaps folder and its trailmaps' ids; a different header ignores the whole
//! file. Writes are a temp file renamed over the old one, so a concurrent check reads the old file or
//! the new one; two checks writing at once lose one's new lines, never correctness. A file that does not
//! read is ignored and rewritten: the cache is an optimisation and never fails a check.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::targets::{Targets, TrailResult, Uses, digest};
use trailblaze_core::project::Project;

/// The first word of a cache file and its format's version: bump it when an entry's shape or meaning
/// changes.
const HEADER: &str = "trailblaze-check-cache 1";

/// The largest cache file read.
const MAX_CACHE_BYTES: u64 = 256 << 20;

fn bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// The running binary's size and modification time: a rebuilt trailblaze may check differently, so
/// its entries start afresh.
fn build_stamp() -> &'static str {
    static STAMP: OnceLock<String> = OnceLock::new();
    STAMP.get_or_init(|| {
        let meta = std::env::current_exe().and_then(fs::metadata);
        match meta {
            Ok(m) => {
                let time = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                format!("{}:{time}", m.len())
            }
            Err(_) => String::new(),
        }
    })
}

/// One trail's line: its result and what the result depends on.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    target: Option<String>,
    env: Option<String>,
    tools: Vec<(String, String)>,
    names: Option<String>,
    result: TrailResult,
}

/// Where a trail's entry is: its line (by absolute path) and the key its entry must hold.
pub(super) struct Key {
    slot: String,
    content: String,
}

pub(super) struct Cache {
    file: PathBuf,
    header: String,
    /// The lines read, by slot: `<checksum> <json>`, checked and decoded only when asked for.
    lines: HashMap<String, String>,
    /// The file read had this header: its lines are kept when new ones are written.
    current: bool,
    /// The working folder, asked for once: relative trail paths are made absolute against it.
    cwd: Option<PathBuf>,
}

impl Cache {
    /// The project's check cache, read; `None` when the project has no cache folder.
    pub fn open(project: &Project) -> Option<Cache> {
        let root = std::path::absolute(&project.trailmaps.root).unwrap_or_else(|_| project.trailmaps.root.clone());
        let dir = project.cache_dir()?.join("check");
        let file = dir.join(format!("{}.cache", digest(&[bytes(&root)])));
        let mut parts: Vec<&[u8]> = vec![HEADER.as_bytes(), env!("CARGO_PKG_VERSION").as_bytes()];
        parts.push(build_stamp().as_bytes());
        parts.push(bytes(&root));
        for (id, map) in &project.trailmaps.maps {
            parts.push(id.as_bytes());
            parts.push(bytes(&map.dir));
        }
        let header = format!("{HEADER} {}", digest(&parts));
        let mut cache = Cache {
            file,
            header,
            cwd: std::env::current_dir().ok(),
            lines: HashMap::new(),
            current: false,
        };
        cache.read();
        Some(cache)
    }

    fn read(&mut self) {
        // Far beyond any workspace's (a line is about half a kilobyte a trail); a bigger file is
        // not ours to trust, and not worth reading.
        if fs::metadata(&self.file).is_ok_and(|m| m.len() > MAX_CACHE_BYTES) {
            tracing::debug!(path = %self.file.display(), "check cache too big; ignoring");
            return;
        }
        let text = match fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    tracing::debug!(path = %self.file.display(), error = %e, "check cache unreadable; ignoring");
                }
                return;
            }
        };
        let mut lines = text.lines();
        if lines.next() != Some(self.header.as_str()) {
            tracing::debug!(path = %self.file.display(), "check cache of another build or workspace; ignoring");
            return;
        }
        self.current = true;
        for line in lines {
            if let Some((slot, rest)) = line.split_once(' ') {
                self.lines.insert(slot.to_string(), rest.to_string());
            }
        }
    }

    pub fn key(&self, file: &Path, text: &str) -> Key {
        // `absolute` of a path joined to the working folder: the same result without asking again.
        let joined = match &self.cwd {
            Some(cwd) if file.is_relative() => cwd.join(file),
            _ => file.to_path_buf(),
        };
        let abs = std::path::absolute(&joined).unwrap_or(joined);
        Key {
            slot: digest(&[bytes(&abs)]),
            content: digest(&[bytes(&abs), bytes(file), text.as_bytes()]),
        }
    }

    /// The cached result for `key`, if every input it depends on is unchanged.
    pub fn get(&self, key: &Key, targets: &Targets<'_>) -> Option<TrailResult> {
        let (sum, json) = self.lines.get(&key.slot)?.split_once(' ')?;
        if digest(&[json.as_bytes()]) != sum {
            return None;
        }
        let entry: Entry = serde_json::from_str(json).ok()?;
        if entry.key != key.content {
            return None;
        }
        match &entry.target {
            None if entry.tools.is_empty() && entry.names.is_none() && entry.env.is_none() => {}
            None => return None,
            Some(id) => {
                let env = targets.get(id);
                let h = env.hashes();
                let same_tools = entry.tools.iter().all(|(name, hash)| h.tool(name) == *hash);
                let same_names = entry.names.as_ref().is_none_or(|n| *n == h.names);
                if entry.env.as_deref() != Some(h.env.as_str()) || !same_tools || !same_names {
                    return None;
                }
            }
        }
        Some(entry.result)
    }

    /// The line that records `result`, found now for `key` with `uses`.
    pub fn entry(&self, key: &Key, uses: &Uses, result: &TrailResult) -> Option<(String, String)> {
        let (target, env, tools, names) = match &uses.target {
            None => (None, None, Vec::new(), None),
            Some(t) => {
                let h = t.hashes();
                let tools = uses.tools.iter().map(|name| (name.clone(), h.tool(name))).collect();
                (
                    Some(t.id.clone()),
                    Some(h.env.clone()),
                    tools,
                    uses.unknown.then(|| h.names.clone()),
                )
            }
        };
        let entry = Entry {
            key: key.content.clone(),
            target,
            env,
            tools,
            names,
            result: result.clone(),
        };
        let json = serde_json::to_string(&entry).ok()?;
        Some((key.slot.clone(), format!("{} {json}", digest(&[json.as_bytes()]))))
    }

    /// Writes the lines found now over the file's, when there is something new.
    pub fn store(mut self, fresh: Vec<(String, String)>) {
        if fresh.is_empty() && self.current {
            return;
        }
        for (slot, line) in fresh {
            self.lines.insert(slot, line);
        }
        let mut text = String::with_capacity(self.lines.values().map(|l| l.len() + 34).sum::<usize>() + 64);
        text.push_str(&self.header);
        text.push('\n');
        for (slot, line) in &self.lines {
            text.push_str(slot);
            text.push(' ');
            text.push_str(line);
            text.push('\n');
        }
        // The cache is an optimisation: failing to write it must not fail the check.
        if let Err(e) = trailblaze_core::files::write_atomically(&self.file, text.as_bytes()) {
            tracing::debug!(path = %self.file.display(), error = %e, "could not write the check cache");
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
