//! A live session's tools over the workspace (`listTrails`, `readTrail`, `runTrail`) and its device
//! (`switchDevice`), and what MCP's resources read (`trailblaze://devices`, `trailblaze://trailmaps`).
//! Apart from live.rs, which holds the session itself.
//!
//! Trail paths are relative to the workspace's trails folder: the original's `trails/` when the
//! workspace has one, else the trailmaps folder (`demo/trails/sign-in.trail.yaml`).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};
use trailblaze::Trail;
use trailblaze::device::DeviceSpec;
use trailblaze::report::{Outcome, ScreenshotPolicy, TrailReport};
use trailblaze::trails::{find_trails, is_trail_name};

use super::{Live, Reply, Shared};
use crate::cli::device::DeviceArgs;

pub const LIST_TRAILS: &str = "listTrails";
pub const READ_TRAIL: &str = "readTrail";
pub const RUN_TRAIL: &str = "runTrail";
pub const SWITCH_DEVICE: &str = "switchDevice";

pub const DEVICES_URI: &str = "trailblaze://devices";
pub const TRAILMAPS_URI: &str = "trailblaze://trailmaps";

/// Where the workspace's trails are and how a device's name reads: what these tools need besides
/// the project.
#[derive(Default)]
pub struct Workspace {
    /// The original's `trails/` folder, when the workspace has one.
    trails: Option<PathBuf>,
    /// `--device` and its companions (`--adb-server`, `--wda-url`, the browser flags): a name given
    /// to `switchDevice` reads as `--device` does.
    device: DeviceArgs,
}

impl Workspace {
    pub fn new(trails: Option<PathBuf>, device: &DeviceArgs) -> Workspace {
        Workspace {
            trails,
            device: device.clone(),
        }
    }
}

/// The definitions of the tools this file serves, for `session_tool_definitions`.
pub fn definitions() -> Vec<(&'static str, &'static str, Value)> {
    let path = json!({
        "type": "object",
        "properties": { "path": {
            "type": "string",
            "description": "The trail file, relative to the workspace as `listTrails` gives it (e.g. `demo/trails/sign-in.trail.yaml`)."
        } },
        "required": ["path"],
        "additionalProperties": false
    });
    vec![
        (
            LIST_TRAILS,
            "Lists the workspace's trails: each one's path (for `readTrail` and `runTrail`), id, title, \
             target trailmap and number of steps.",
            json!({
                "type": "object",
                "properties": { "trailmap": { "type": "string", "description": "Only the trails of this trailmap (its id)." } },
                "additionalProperties": false
            }),
        ),
        (READ_TRAIL, "Returns a trail file's YAML text.", path.clone()),
        (
            RUN_TRAIL,
            "Replays a trail on this session's device, from where the screen is now, and reports whether \
             it passed, the failing step and its error, and the time. The replayed calls do not join \
             this session's recording.",
            path,
        ),
        (
            SWITCH_DEVICE,
            "Ends the device session and makes the next call start on another device at the app's start \
             screen: `sim`, `web`, `android`, `android:SERIAL`, `ios`, `ios:UDID` (the resource \
             trailblaze://devices lists them). The recording is kept. A device that cannot be opened \
             leaves the session as it was.",
            json!({
                "type": "object",
                "properties": { "device": { "type": "string", "description": "The device, as `trailblaze --device` names it." } },
                "required": ["device"],
                "additionalProperties": false
            }),
        ),
    ]
}

/// The one string argument `key`, maybe optional, of `tool`'s strict arguments; errors name the key
/// and the type, never a value.
fn string_arg(tool: &str, args: &Value, key: &str, required: bool) -> Result<Option<String>, String> {
    let obj = args
        .as_object()
        .ok_or_else(|| format!("{tool}: the arguments must be an object"))?;
    if let Some(k) = obj.keys().find(|k| *k != key) {
        return Err(format!("{tool}: unknown argument `{k}` (expected {key})"));
    }
    match obj.get(key) {
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{tool}: `{key}` must be a string")),
        None if required => Err(format!("{tool}: missing required argument `{key}`")),
        None => Ok(None),
    }
}

/// A trail file of the workspace: its path as the tools show it, its file, and the trail or why it
/// does not parse.
struct Listed {
    rel: String,
    file: PathBuf,
    trail: Result<Trail, String>,
}

impl Shared {
    /// This server's workspace (where its trails are, how device names read).
    pub(super) fn in_workspace(mut self, workspace: Workspace) -> Shared {
        self.workspace = workspace;
        self
    }

    /// The folder trail paths are relative to.
    fn trails_base(&self) -> &Path {
        self.workspace.trails.as_deref().unwrap_or(&self.project.trailmaps.root)
    }

    /// `path` relative to the trails folder, with `/` (what the tools show and take).
    fn rel(&self, path: &Path) -> String {
        let base = self.trails_base();
        let rel = path
            .strip_prefix(base)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                let abs = std::path::absolute(base).ok()?;
                Some(std::path::absolute(path).ok()?.strip_prefix(abs).ok()?.to_path_buf())
            })
            .unwrap_or_else(|| path.to_path_buf());
        rel.to_string_lossy().replace('\\', "/")
    }

    /// Every trail of the workspace, where a bare `trailblaze run` finds them, read.
    fn workspace_trails(&self) -> Result<Vec<Listed>, String> {
        let roots = match &self.workspace.trails {
            Some(t) => vec![t.clone()],
            None => crate::cli::trails::trails_of(&self.project, &[]),
        };
        let files = find_trails(&roots).map_err(|e| e.to_string())?;
        // What `readTrail` would refuse is not listed: a link to a file outside is not read.
        let real_base = std::fs::canonicalize(self.trails_base()).map_err(|e| e.to_string())?;
        Ok(files
            .into_iter()
            .filter(|file| std::fs::canonicalize(file).is_ok_and(|real| real.starts_with(&real_base)))
            .map(|file| Listed {
                rel: self.rel(&file),
                trail: Trail::load(&file).map_err(|errors| {
                    let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    format!("does not parse: {}", all.join("\n"))
                }),
                file,
            })
            .collect())
    }

    /// The trailmap a listed trail belongs to: its target when that is a trailmap here, else the
    /// trailmap whose folder holds it.
    fn trailmap_of(&self, listed: &Listed) -> Option<String> {
        let loaded = |id: &String| self.project.trailmaps.get(id).is_some();
        match &listed.trail {
            Ok(t) => self.project.target_of(t).filter(loaded),
            Err(_) => self
                .project
                .trailmaps
                .maps
                .values()
                .find(|m| listed.file.starts_with(&m.dir))
                .map(|m| m.id.clone()),
        }
    }

    fn trail_json(&self, listed: &Listed) -> Value {
        match &listed.trail {
            Ok(t) => json!({
                "path": listed.rel,
                "id": t.config.id,
                "title": t.config.title.as_ref().or(t.config.description.as_ref()),
                "target": self.project.target_of(t),
                "steps": t.steps.len(),
                "trailhead": t.trailhead.is_some(),
                "tags": t.config.tags,
            }),
            Err(why) => json!({ "path": listed.rel, "error": why }),
        }
    }

    /// The trail file `given` names, and its path as the tools show it. It must be relative to the
    /// trails folder (or absolute inside it), hold no `..`, have a trail file's name and be a file
    /// inside the workspace once links are followed. Errors name the argument, never its value, and
    /// say nothing of files outside.
    fn trail_file(&self, tool: &str, given: &str) -> Result<(PathBuf, String), String> {
        let bad = |why: &str| format!("{tool}: `path` {why} (`listTrails` gives the workspace's trail paths)");
        let path = Path::new(given);
        if given.is_empty() {
            return Err(bad("must not be empty"));
        }
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(bad("must stay inside the workspace: `..` is not allowed"));
        }
        let base = self.trails_base();
        let outside = || bad("must name a trail inside the workspace");
        let abs_base = std::path::absolute(base).map_err(|_| outside())?;
        let real_base = std::fs::canonicalize(base).map_err(|_| outside())?;
        let file = if path.is_absolute() {
            // Lexically first: whether a file outside exists is none of the client's business.
            let rel = path
                .strip_prefix(&abs_base)
                .or_else(|_| path.strip_prefix(&real_base))
                .map_err(|_| outside())?;
            base.join(rel)
        } else {
            base.join(path)
        };
        let trail_name = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(is_trail_name);
        if !trail_name(&file) {
            return Err(bad(
                "must name a trail file (`*.trail.yaml`, `trail.yaml` or `blaze.yaml`)",
            ));
        }
        let real = std::fs::canonicalize(&file).map_err(|_| bad("names no trail file of the workspace"))?;
        // A link may lead anywhere: where it leads must be a trail file inside too.
        if !real.starts_with(&real_base) || !trail_name(&real) {
            return Err(outside());
        }
        if !real.is_file() {
            return Err(bad("names no trail file of the workspace"));
        }
        let rel = self.rel(&file);
        Ok((file, rel))
    }

    /// The resources MCP lists: (uri, name, description).
    pub fn resources(&self) -> Vec<(String, String, String)> {
        let mut out = vec![
            (
                DEVICES_URI.to_string(),
                "devices".to_string(),
                "The devices `switchDevice` and `--device` can name: sim, web, the adb server's Android \
                 devices, the WebDriverAgent's iPhone (JSON)."
                    .to_string(),
            ),
            (
                TRAILMAPS_URI.to_string(),
                "trailmaps".to_string(),
                "The workspace's trailmaps: id, folder, platforms, app, tool and trail counts (JSON).".to_string(),
            ),
        ];
        out.extend(self.project.trailmaps.maps.keys().map(|id| {
            (
                format!("{TRAILMAPS_URI}/{id}"),
                format!("trailmap {id}"),
                format!(
                    "Trailmap `{id}`: what trailblaze://trailmaps says of it, its tools' names and its trails (JSON)."
                ),
            )
        }));
        out
    }

    /// The JSON text of the resource at `uri`; `None`: there is no such resource.
    pub fn read_resource(&self, uri: &str) -> Option<Result<String, String>> {
        let value = match uri {
            DEVICES_URI => self.devices_json(),
            TRAILMAPS_URI => self.trailmaps_json(None),
            _ => {
                let id = uri.strip_prefix(TRAILMAPS_URI)?.strip_prefix('/')?;
                self.project.trailmaps.get(id)?;
                self.trailmaps_json(Some(id))
            }
        };
        Some(value.map(|v| {
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            self.redact.text(&text).into_owned()
        }))
    }

    fn devices_json(&self) -> Result<Value, String> {
        let d = &self.workspace.device;
        let listed = crate::cli::device::list(d.server.adb_server.as_deref(), d.wda.wda_url.as_deref())?;
        Ok(json!({
            "devices": listed.devices.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
            "notes": listed.notes,
            "default": self.device.label(),
        }))
    }

    /// Every trailmap (`only`: that one, with its tools' names and its trails).
    fn trailmaps_json(&self, only: Option<&str>) -> Result<Value, String> {
        let trails = self.workspace_trails()?;
        let mut by_map: BTreeMap<String, Vec<&Listed>> = BTreeMap::new();
        for t in &trails {
            if let Some(id) = self.trailmap_of(t) {
                by_map.entry(id).or_default().push(t);
            }
        }
        let mut maps = Vec::new();
        for map in self.project.trailmaps.maps.values() {
            if only.is_some_and(|id| id != map.id) {
                continue;
            }
            let target = map.spec.target.as_ref();
            let platforms: Vec<&String> = target
                .and_then(|t| t.platforms.as_ref())
                .or(map.spec.platforms.as_ref())
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let mine = by_map.get(&map.id).map(Vec::as_slice).unwrap_or_default();
            let mut m = json!({
                "id": map.id,
                "folder": self.rel(&map.dir),
                "displayName": target.and_then(|t| t.display_name.as_ref()),
                "appIds": target.map(|t| t.all_app_ids()).unwrap_or_default(),
                "platforms": platforms,
                "app": map.app_yaml.as_deref().map(|p| self.rel(p)),
                "trails": mine.len(),
                "served": map.id == self.id,
            });
            // Its own scripted and composed tools (not the built-ins, not its dependencies').
            match self.project.catalog(&map.id) {
                Ok(catalog) => {
                    let own: Vec<&str> = catalog
                        .tools()
                        .filter(|t| t.trailmap.as_deref() == Some(map.id.as_str()))
                        .map(|t| t.name.as_str())
                        .collect();
                    m["tools"] = json!(own.len());
                    if only.is_some() {
                        m["toolNames"] = json!(own);
                    }
                }
                Err(e) => m["toolsError"] = json!(e.to_string()),
            }
            if only.is_some() {
                m["trailList"] = mine.iter().map(|t| self.trail_json(t)).collect();
            }
            maps.push(m);
        }
        Ok(match only {
            Some(_) => maps.pop().unwrap_or_default(),
            None => json!({ "root": self.trails_base().display().to_string(), "trailmaps": maps }),
        })
    }
}

/// `text` with the device name the client gave, and the part after its kind, left out: it may be a
/// secret (a `web:ws://` endpoint's token). A part shorter than four characters stays (too common).
fn without(text: &str, name: &str) -> String {
    let mut out = text.replace(name, "…");
    if let Some((_, rest)) = name.split_once(':')
        && rest.chars().count() >= 4
    {
        out = out.replace(rest, "…");
    }
    out
}

/// What `runTrail` replies: the outcome, the step that failed, the time, each step's outcome.
fn replay_json(rel: &str, report: &TrailReport) -> Value {
    let failed = report
        .steps
        .iter()
        .find(|s| matches!(s.outcome, Outcome::Failed | Outcome::Error | Outcome::NotRecorded));
    let mut v = json!({
        "path": rel,
        "id": report.id,
        "outcome": report.outcome.word(),
        "passed": report.outcome == Outcome::Passed,
        "durationMs": report.duration_ms.round() as u64,
        "steps": report.steps.iter().map(|s| json!({
            "index": s.number,
            "kind": s.kind,
            "text": s.text,
            "outcome": s.outcome.word(),
        })).collect::<Vec<_>>(),
    });
    if let Some(s) = failed {
        v["failedStep"] = json!({ "index": s.number, "text": s.text, "error": s.error });
    }
    if let Some(e) = &report.error {
        v["error"] = json!(e);
    }
    if let Outcome::Skipped { reason } = &report.outcome {
        v["skipped"] = json!(reason);
    }
    v
}

impl Live {
    /// The device this session opens: the one `switchDevice` chose, else the server's.
    pub(super) fn device_spec(&self) -> &DeviceSpec {
        self.device.as_ref().unwrap_or(&self.shared.device)
    }

    pub(super) fn list_trails(&self, args: &Value) -> Reply {
        let only = match string_arg(LIST_TRAILS, args, "trailmap", false) {
            Ok(o) => o,
            Err(e) => return Reply::error(e),
        };
        let s = &self.shared;
        if let Some(id) = &only
            && s.project.trailmaps.get(id).is_none()
        {
            let known: Vec<&str> = s.project.trailmaps.maps.keys().map(String::as_str).collect();
            return Reply::error(format!(
                "{LIST_TRAILS}: `trailmap` names no trailmap of the workspace (they are: {})",
                known.join(", ")
            ));
        }
        let trails = match s.workspace_trails() {
            Ok(t) => t,
            Err(e) => return Reply::error(format!("{LIST_TRAILS}: {e}")),
        };
        let listed: Vec<Value> = trails
            .iter()
            .filter(|t| only.is_none() || s.trailmap_of(t) == only)
            .map(|t| s.trail_json(t))
            .collect();
        let reply = json!({ "root": s.trails_base().display().to_string(), "trails": listed });
        Reply::ok(serde_json::to_string_pretty(&reply).unwrap_or_default())
    }

    pub(super) fn read_trail(&self, args: &Value) -> Reply {
        let given = match string_arg(READ_TRAIL, args, "path", true) {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => return Reply::error(e),
        };
        let (file, _) = match self.shared.trail_file(READ_TRAIL, &given) {
            Ok(f) => f,
            Err(e) => return Reply::error(e),
        };
        match std::fs::read_to_string(&file) {
            Ok(text) => Reply::ok(text),
            Err(e) => Reply::error(format!("{READ_TRAIL}: the trail cannot be read ({})", e.kind())),
        }
    }

    pub(super) fn run_trail(&mut self, args: &Value) -> Reply {
        let given = match string_arg(RUN_TRAIL, args, "path", true) {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => return Reply::error(e),
        };
        let s = self.shared.clone();
        let (file, rel) = match s.trail_file(RUN_TRAIL, &given) {
            Ok(f) => f,
            Err(e) => return Reply::error(e),
        };
        let trail = match Trail::load(&file) {
            Ok(t) => t,
            Err(errors) => {
                let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
                return Reply::error(format!("{RUN_TRAIL}: {rel} does not parse:\n{}", all.join("\n")));
            }
        };
        // This session's tools are its trailmap's: a trail of another one would find them missing.
        if let Some(target) = s.project.target_of(&trail)
            && target != s.id
            && s.project.trailmaps.get(&target).is_some()
        {
            return Reply::error(format!(
                "{RUN_TRAIL}: {rel} targets trailmap `{target}`; this session serves `{}` (run it with `trailblaze run`)",
                s.id
            ));
        }
        // The type gate first, as `trailblaze run` does: a trail it rejects is not run.
        let check = trailblaze::gates::check_native(&s.project, std::slice::from_ref(&file));
        let findings: Vec<String> = check
            .findings
            .iter()
            .filter(|f| !f.warning)
            .map(ToString::to_string)
            .collect();
        if !findings.is_empty() {
            return Reply::error(format!(
                "{RUN_TRAIL}: the type gate found {} problem(s) in {rel}; nothing was run:\n{}",
                findings.len(),
                findings.join("\n")
            ));
        }
        let seen = self.seen;
        let session = match self.session() {
            Ok(session) => session,
            Err(e) => return Reply::error(e),
        };
        let opts = trailblaze::ReplayOptions {
            // The client sees the screen by `snapshot`; pictures would cost a phone a second a step.
            screenshots: ScreenshotPolicy::None,
            ..Default::default()
        };
        let report = session.replay(&trail, &opts, &mut ());
        // The replayed calls are the trail's, not the client's: the next call's steps start after
        // them, so they never join the recording.
        let last = session.steps_after(seen).last().map_or(seen, |step| step.seq);
        self.seen = last;
        Reply::ok(serde_json::to_string_pretty(&replay_json(&rel, &report)).unwrap_or_default())
    }

    pub(super) fn switch_device(&mut self, args: &Value) -> Reply {
        let name = match string_arg(SWITCH_DEVICE, args, "device", true) {
            Ok(n) => n.unwrap_or_default(),
            Err(e) => return Reply::error(e),
        };
        let now = self.device_spec().label();
        let spec = match self.shared.workspace.device.spec_of(&name) {
            Ok(spec) => spec,
            Err(_) => {
                return Reply::error(format!(
                    "{SWITCH_DEVICE}: `device` must name a device: `sim`, `web`, `web:ws://HOST:PORT`, `android`, \
                     `android:SERIAL`, `ios`, `ios:UDID` or `ios:http://HOST:PORT` (the resource {DEVICES_URI} \
                     lists them); the session stays on {now}"
                ));
            }
        };
        // Opened once now, as `mcp` checks its device before serving: one that cannot be opened
        // leaves the session as it was.
        let s = &self.shared;
        if let Err(e) = s.project.device(&s.id, &spec) {
            return Reply::error(format!(
                "{SWITCH_DEVICE}: the device `device` names cannot be opened ({}); the session stays on {now}",
                without(&e.to_string(), &name)
            ));
        }
        // As `resetSession` ends it (its trace written), but the recording stays.
        self.end_trace();
        self.session = None;
        if let Ok(mut c) = self.cancel.lock() {
            *c = None;
        }
        let label = spec.label();
        self.device = Some(spec);
        Reply::ok(format!(
            "Switched to {label}: the next call starts a fresh session on it (the app at its start). The \
             recording is kept ({} step(s)).",
            self.recording.steps().len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace of one trailmap with one trail, a secrets file beside it, and files outside.
    fn workspace() -> (tempfile::TempDir, Shared) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("trailmaps");
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        write("trailmaps/demo/trailmap.yaml", "id: demo\n");
        write(
            "trailmaps/demo/trails/a.trail.yaml",
            "config:\n  id: demo/a\ntrail: []\n",
        );
        write("trailmaps/demo/demo.secrets", "PW=OUTSIDE-OR-NOT-A-TRAIL\n");
        write("outside.trail.yaml", "OUTSIDE-OR-NOT-A-TRAIL\n");
        let project = trailblaze::open(&root, Default::default()).expect("project");
        let catalog = project.catalog("demo").expect("catalog");
        let shared = Shared::new(
            project,
            "demo".into(),
            catalog,
            dir.path().join("out"),
            DeviceSpec::Sim,
            trailblaze::Settings::default(),
        );
        (dir, shared)
    }

    #[test]
    fn a_trail_path_must_name_a_trail_file_inside_the_workspace() {
        let (dir, s) = workspace();
        // The controls: relative, and absolute inside.
        let (file, rel) = s.trail_file("readTrail", "demo/trails/a.trail.yaml").expect("inside");
        assert_eq!(rel, "demo/trails/a.trail.yaml");
        assert!(file.is_file());
        let abs = dir.path().join("trailmaps/demo/trails/a.trail.yaml");
        let (_, rel) = s
            .trail_file("readTrail", abs.to_str().expect("utf-8"))
            .expect("absolute inside");
        assert_eq!(rel, "demo/trails/a.trail.yaml");

        let outside = dir.path().join("outside.trail.yaml");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, dir.path().join("trailmaps/demo/trails/link.trail.yaml")).expect("link");
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            dir.path().join("trailmaps/demo/demo.secrets"),
            dir.path().join("trailmaps/demo/trails/secrets.trail.yaml"),
        )
        .expect("link");
        let outside = outside.to_str().expect("utf-8").to_string();
        for given in [
            "../outside.trail.yaml",
            "demo/../../outside.trail.yaml",
            "../../etc/passwd",
            "/etc/passwd",
            outside.as_str(),
            "demo/demo.secrets",
            "demo/trailmap.yaml",
            "demo/trails/none.trail.yaml",
            "demo/trails/link.trail.yaml",
            "demo/trails/secrets.trail.yaml",
            "",
        ] {
            let e = s.trail_file("readTrail", given).expect_err(given);
            assert!(e.starts_with("readTrail: `path` "), "{given}: {e}");
            assert!(!e.contains("OUTSIDE-OR-NOT-A-TRAIL"), "{given}: {e}");
            if given.len() > 1 {
                assert!(!e.contains(given), "the error repeats the value: {e}");
            }
        }
        assert!(
            s.trail_file("readTrail", "/etc/passwd")
                .expect_err("outside")
                .contains("inside the workspace")
        );
    }

    #[test]
    fn a_device_name_is_left_out_of_an_error() {
        let e = "no device `emulator-5554` on the adb server at 127.0.0.1:5037";
        assert_eq!(
            without(e, "android:emulator-5554"),
            "no device `…` on the adb server at 127.0.0.1:5037"
        );
        // The control: a name the error does not hold changes nothing.
        assert_eq!(without(e, "android:pixel-9"), e);
        assert_eq!(without("bad ws://u:tok@h:1", "web:ws://u:tok@h:1"), "bad …");
    }

    #[test]
    fn string_arguments_are_strict_and_never_quote_a_value() {
        let secret = "hunter2-value";
        let e = string_arg("readTrail", &json!({ "path": 7 }), "path", true).unwrap_err();
        assert_eq!(e, "readTrail: `path` must be a string");
        let e = string_arg("readTrail", &json!({ "path": "x", "extra": secret }), "path", true).unwrap_err();
        assert!(e.contains("unknown argument `extra`") && !e.contains(secret), "{e}");
        let e = string_arg("readTrail", &json!({}), "path", true).unwrap_err();
        assert!(e.contains("missing required argument `path`"), "{e}");
        assert_eq!(string_arg("listTrails", &json!({}), "trailmap", false).ok(), Some(None));
        assert_eq!(
            string_arg("readTrail", &json!({ "path": secret }), "path", true).ok(),
            Some(Some(secret.to_string()))
        );
    }
}
