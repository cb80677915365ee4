//! A project: the trailmaps folder, the compiled-in host functions, the secrets and the transpiler,
//! opened once. The CLI, tests and embedders start sessions from here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use trailblaze_host_functions::{HostFunctionEntry, HostRegistry, SecretStore};

use crate::catalog::{Catalog, CatalogError};
use crate::device::{Device, DeviceError, DeviceSpec, sim};
use crate::parts::Parts;
use crate::script::transpile::Transpiler;
use crate::session::{Session, SessionConfig, SessionError, Settings, WarmPool};
use crate::trailmap::{LoadErrors, Trailmaps};

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("{0}")]
    Load(#[from] LoadErrors),
    #[error("{0}")]
    Catalog(#[from] CatalogError),
    #[error("{0}")]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Session(#[from] SessionError),
    #[error("{0}")]
    Usage(String),
    /// The run's results could not be written (a full disk, a file-size limit, a read-only folder).
    #[error("{0}")]
    Output(String),
}

pub struct Project {
    pub trailmaps: Trailmaps,
    pub registry: Arc<HostRegistry>,
    pub secrets: Arc<SecretStore>,
    pub transpiler: Arc<Transpiler>,
    /// Catalogs by trailmap id, built on first use: sessions only read them.
    catalogs: std::sync::Mutex<std::collections::HashMap<String, Arc<Catalog>>>,
    /// What parts made of each catalog ([`Project::memo`]: the gates' typed surface), with the
    /// catalog it was made from.
    memos: std::sync::Mutex<std::collections::HashMap<(std::any::TypeId, String), Memo>>,
    /// Each trailmap's app, parsed once; every session gets a fresh copy.
    apps: std::sync::Mutex<std::collections::HashMap<String, sim::SimDevice>>,
    /// Session threads whose engines are made before they are asked for.
    warm: WarmPool,
    /// The first trails [`Project::device_for_trails`] parsed, for the run that follows: a command
    /// parses each of those files once (a 2,000-step trail took ~30 ms to parse). A few only, so a
    /// suite of web trails (all read to choose) does not stay in memory.
    kept: std::sync::Mutex<Vec<KeptTrail>>,
    /// The secrets file the project was opened with: a web device never serves it to a page.
    secrets_file: Option<PathBuf>,
    parts: Parts,
}

/// A parsed trail and what its file was when it was read.
struct KeptTrail {
    stamp: Option<(u64, std::time::SystemTime)>,
    trail: crate::trail::Trail,
}

/// How many parsed trails [`Project::device_for_trails`] keeps.
const KEPT_TRAILS: usize = 4;

/// A file's length and modification time: a kept parse is used only while both are unchanged.
fn stamp(file: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(file).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// A value made of a catalog, with the catalog it was made from (a rebuilt catalog makes a new one).
type Memo = (Arc<Catalog>, Arc<dyn std::any::Any + Send + Sync>);

/// How to open a project.
#[derive(Debug, Clone, Default)]
pub struct ProjectOptions {
    /// The cache folder (transpiled scripts, and the native check's results under `check/`); `None`
    /// uses the default (`$TRAILBLAZE_CACHE_DIR`, then the user's cache folder).
    pub cache_dir: Option<PathBuf>,
    /// A `NAME=value` secrets file besides the `TRAILBLAZE_SECRET_*` environment.
    pub secrets_file: Option<PathBuf>,
    /// What the optional crates add (devices, tools, `ctx.fetch`); `trailblaze::all_parts()` has them all.
    pub parts: Parts,
}

impl Project {
    pub fn open(root: &Path, opts: ProjectOptions) -> Result<Project, ProjectError> {
        let trailmaps = Trailmaps::discover(root)?;
        let secrets = SecretStore::from_env_and_file(opts.secrets_file.as_deref())
            .map_err(|e| ProjectError::Usage(e.to_string()))?;
        let cache = opts.cache_dir.or_else(Transpiler::default_cache_dir);
        Ok(Project {
            trailmaps,
            registry: Arc::new(HostRegistry::builtin()),
            secrets: Arc::new(secrets),
            transpiler: Arc::new(Transpiler::new(cache)),
            catalogs: Default::default(),
            memos: Default::default(),
            apps: Default::default(),
            warm: WarmPool::default(),
            kept: Default::default(),
            secrets_file: opts.secrets_file,
            parts: opts.parts,
        })
    }

    /// `id`, or the only trailmap when `id` is `None`.
    pub fn trailmap_id(&self, id: Option<&str>) -> Result<String, ProjectError> {
        if let Some(id) = id {
            return Ok(id.to_string());
        }
        let ids: Vec<&String> = self.trailmaps.maps.keys().collect();
        match ids.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(ProjectError::Usage(format!(
                "no trailmap found under {}",
                self.trailmaps.root.display()
            ))),
            many => Err(ProjectError::Usage(format!(
                "several trailmaps: pass --trailmap ID (found: {})",
                many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// [`Project::trailmap_id`] for a command that drives `device`: a page needs no trailmap, so
    /// with none at all the web runs with the built-in tools alone.
    /// Of several trailmaps, the only one made for the device (an `app.yaml` for the simulated one,
    /// a `web` platform for a page) is taken.
    pub fn trailmap_for(&self, id: Option<&str>, device: &DeviceSpec) -> Result<String, ProjectError> {
        let web = matches!(device, DeviceSpec::Web(_));
        if id.is_none() && self.trailmaps.maps.is_empty() && web {
            return Ok(NO_TARGET.to_string());
        }
        if id.is_none() && self.trailmaps.maps.len() > 1 {
            let fits: Vec<&String> = self
                .trailmaps
                .maps
                .iter()
                .filter(|(_, m)| {
                    let has = |platform: &str| {
                        m.spec
                            .target
                            .as_ref()
                            .and_then(|t| t.platforms.as_ref())
                            .is_some_and(|p| p.contains_key(platform))
                    };
                    match device {
                        DeviceSpec::Sim => m.app_yaml.is_some(),
                        DeviceSpec::Web(_) => has("web"),
                        DeviceSpec::Ios(_) => has("ios"),
                        DeviceSpec::Android { .. } => false,
                    }
                })
                .map(|(id, _)| id)
                .collect();
            if let [one] = fits.as_slice() {
                return Ok((*one).clone());
            }
        }
        self.trailmap_id(id)
    }

    /// The catalog of trailmap `id` (`NO_TARGET`: the built-ins alone), built once per project.
    pub fn catalog(&self, id: &str) -> Result<Arc<Catalog>, ProjectError> {
        if let Some(c) = self.catalogs.lock().ok().and_then(|m| m.get(id).cloned()) {
            return Ok(c);
        }
        let mut built = if id == NO_TARGET {
            Catalog::builtins_only(&self.trailmaps.root)
        } else {
            Catalog::for_trailmap(&self.trailmaps, id, self.registry.clone())?
        };
        for entries in &self.parts.tools {
            for entry in entries() {
                built.register_builtin(entry);
            }
        }
        built.fetch = self.parts.fetch.clone();
        built.painter = self.parts.painter.clone();
        let built = Arc::new(built);
        if let Ok(mut m) = self.catalogs.lock() {
            m.insert(id.to_string(), built.clone());
        }
        Ok(built)
    }

    /// Reads the trailmaps folder again after trailmaps `changed` changed on disk (`run --watch`):
    /// the catalog of every trailmap that sees one of them, and their apps, are built afresh on next
    /// use; the rest stays warm (other catalogs and their warm sessions, the transpile cache, the
    /// secrets, the host functions). A folder that no longer loads is an error, and then nothing
    /// cached is kept.
    pub fn reload(&mut self, changed: &std::collections::BTreeSet<String>) -> Result<(), ProjectError> {
        let fresh = Trailmaps::discover(&self.trailmaps.root);
        let stale: Box<dyn Fn(&str) -> bool> = match &fresh {
            Ok(maps) => Box::new(move |id: &str| {
                id != NO_TARGET && (maps.get(id).is_none() || maps.closure(id).iter().any(|m| changed.contains(&m.id)))
            }),
            Err(_) => Box::new(|_: &str| true),
        };
        if let Ok(mut c) = self.catalogs.lock() {
            c.retain(|id, _| !stale(id));
        }
        if let Ok(mut s) = self.memos.lock() {
            s.retain(|(_, id), _| !stale(id));
        }
        if let Ok(mut a) = self.apps.lock() {
            a.retain(|id, _| !stale(id));
        }
        drop(stale);
        self.trailmaps = fresh?;
        Ok(())
    }

    /// What `make` makes of trailmap `id`'s catalog, made once per catalog (a part's own cache: the
    /// gates' typed surface, whose schemas cost a check a few milliseconds to clone).
    pub fn memo<T: std::any::Any + Send + Sync>(
        &self,
        id: &str,
        make: impl FnOnce(&Catalog) -> T,
    ) -> Result<Arc<T>, ProjectError> {
        let catalog = self.catalog(id)?;
        let key = (std::any::TypeId::of::<T>(), id.to_string());
        let mut memos = self.memos.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((of, made)) = memos.get(&key)
            && Arc::ptr_eq(of, &catalog)
            && let Ok(made) = made.clone().downcast::<T>()
        {
            return Ok(made);
        }
        let made = Arc::new(make(&catalog));
        memos.insert(key, (catalog, made.clone()));
        Ok(made)
    }

    /// The cache folder: the transpile cache's entries, and `check/` for the native gate's results.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.transpiler.cache_dir()
    }

    /// The same project with other default secrets for its sessions (tests, embedders).
    pub fn with_secrets(self, secrets: SecretStore) -> Project {
        Project {
            secrets: Arc::new(secrets),
            ..self
        }
    }

    /// The same project keeping `n` warm session threads per catalog (0: none; the default is
    /// `$TRAILBLAZE_WARM_SESSIONS`, else 2).
    pub fn with_warm_sessions(self, n: usize) -> Project {
        Project {
            warm: WarmPool::with_size(n),
            ..self
        }
    }

    /// The project's warm session threads.
    pub fn warm_sessions(&self) -> &WarmPool {
        &self.warm
    }

    /// The simulated device for trailmap `id`, from its `app.yaml`.
    pub fn sim_device(&self, id: &str) -> Result<Box<dyn Device>, ProjectError> {
        if id == NO_TARGET {
            return Err(ProjectError::Usage(
                "the trail targets no loaded trailmap, so the simulated device has no app to run: \
                 run it on a phone (`--device android`) or set `config.target` to a trailmap with an app.yaml"
                    .into(),
            ));
        }
        let map = self
            .trailmaps
            .get(id)
            .ok_or_else(|| ProjectError::Usage(format!("unknown trailmap `{id}`")))?;
        let app = map.app_yaml.as_ref().ok_or_else(|| {
            ProjectError::Usage(format!(
                "trailmap `{id}` has no app.yaml, so the simulated device has no app to run"
            ))
        })?;
        if let Some(device) = self.apps.lock().ok().and_then(|m| m.get(id).cloned()) {
            return Ok(Box::new(device));
        }
        let device = sim::SimDevice::from_app_file(app)?;
        if let Ok(mut m) = self.apps.lock() {
            m.insert(id.to_string(), device.clone());
        }
        Ok(Box::new(device))
    }

    /// Adds an embedder's host function ([`HostFunctionEntry::dynamic`]) to this project's registry.
    /// A trailmap offers it to its scripts with `host/<name>.host.yaml` (`id` and `class`: the name),
    /// as for compiled-in ones. Catalogs built before are rebuilt on next use.
    pub fn add_host_function(&mut self, entry: HostFunctionEntry) -> Result<(), ProjectError> {
        Arc::make_mut(&mut self.registry)
            .add(entry)
            .map_err(ProjectError::Usage)?;
        if let Ok(mut c) = self.catalogs.lock() {
            c.clear();
        }
        Ok(())
    }

    /// The device `spec` names, for trailmap `id`: its simulated app, or one a part connects.
    pub fn device(&self, id: &str, spec: &DeviceSpec) -> Result<Box<dyn Device>, ProjectError> {
        let spec = match spec {
            DeviceSpec::Sim => return self.sim_device(id),
            DeviceSpec::Web(opts) => {
                let mut opts = opts.clone();
                opts.never_served.extend(self.secrets_file.iter().cloned());
                DeviceSpec::Web(opts)
            }
            other => other.clone(),
        };
        match self.parts.connect(&spec) {
            Some(device) => Ok(device?),
            None => Err(ProjectError::Usage(crate::parts::not_built(&spec))),
        }
    }

    /// The parts the project was opened with.
    pub fn parts(&self) -> &Parts {
        &self.parts
    }

    /// Which trailmap a trail targets: `config.target`, else the trailmap whose folder holds it.
    pub fn target_of(&self, trail: &crate::trail::Trail) -> Option<String> {
        if let Some(t) = &trail.config.target {
            return Some(t.clone());
        }
        self.trailmap_holding(&trail.file)
    }

    /// Builds the catalogs of the trailmaps that hold `files`, which their check and their sessions
    /// use, and names those trailmaps: `run` has it done on another core while it reads the trails
    /// (a trail's `config.target` is known only once it is read; a trail that names another is
    /// served when asked). A trailmap that does not load is left for its check to report.
    pub fn load_tools_for(&self, files: &[PathBuf]) -> Vec<String> {
        let ids: std::collections::BTreeSet<String> = files.iter().filter_map(|f| self.trailmap_holding(f)).collect();
        ids.into_iter().filter(|id| self.catalog(id).is_ok()).collect()
    }

    /// The trailmap whose folder holds `file`, by its path.
    fn trailmap_holding(&self, file: &Path) -> Option<String> {
        // Both as given first: making them absolute asks the system for the working folder twice.
        let root = &self.trailmaps.root;
        let rel = match file.strip_prefix(root) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => std::path::absolute(file)
                .ok()?
                .strip_prefix(std::path::absolute(root).ok()?)
                .ok()?
                .to_path_buf(),
        };
        rel.components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .filter(|id| self.trailmaps.get(id).is_some())
    }

    /// The device `files` ask for when the user names none: the web when every trail names only a
    /// web device (`config.devices: {web: ...}`, as the original's web trails do) or targets a
    /// trailmap whose only platform is web; `None` (the simulated device) otherwise.
    pub fn device_for_trails(&self, files: &[PathBuf]) -> Option<DeviceSpec> {
        let web_only = |file: &PathBuf| {
            let stamp = stamp(file);
            let Ok(trail) = crate::trail::load_trail(file) else {
                return false;
            };
            let keys: Vec<&str> = trail.config.devices.iter().map(|(k, _)| k.as_str()).collect();
            let web = if !keys.is_empty() {
                keys.iter().all(|k| *k == "web" || k.starts_with("web-"))
            } else {
                let platforms = self
                    .target_of(&trail)
                    .and_then(|id| self.trailmaps.get(&id))
                    .and_then(|m| m.spec.target.as_ref())
                    .and_then(|t| t.platforms.as_ref())
                    .map(|p| p.keys().cloned().collect::<Vec<_>>())
                    .unwrap_or_default();
                platforms == ["web"]
            };
            if let Ok(mut kept) = self.kept.lock()
                && kept.len() < KEPT_TRAILS
            {
                kept.push(KeptTrail { stamp, trail });
            }
            web
        };
        (!files.is_empty() && files.iter().all(web_only))
            .then(|| DeviceSpec::Web(crate::device::spec::WebOptions::default()))
    }

    /// Runs `f` on the parse of `file` that [`Project::device_for_trails`] kept, when the file has
    /// not changed since, and keeps it again for the run: `run`'s type gate, when its cache has no
    /// result for the file, checks that parse instead of reading and parsing the file a second time.
    /// `None`: none is kept (or the file changed), and `f` did not run.
    pub fn with_kept_trail<R>(&self, file: &Path, f: impl FnOnce(&crate::trail::Trail) -> R) -> Option<R> {
        let kept = self.kept.lock().ok().and_then(|mut kept| {
            let at = kept.iter().position(|k| k.trail.file == file)?;
            Some(kept.swap_remove(at))
        })?;
        if kept.stamp.is_none() || kept.stamp != stamp(file) {
            return None;
        }
        let r = f(&kept.trail);
        if let Ok(mut all) = self.kept.lock() {
            all.push(kept);
        }
        Some(r)
    }

    /// Trail `file` parsed: the parse [`Project::device_for_trails`] kept when the file has not
    /// changed since (each is handed out once), else a fresh one.
    pub(crate) fn load_trail(&self, file: &Path) -> Result<crate::trail::Trail, Vec<crate::yaml::YamlError>> {
        let kept = self.kept.lock().ok().and_then(|mut kept| {
            let at = kept.iter().position(|k| k.trail.file == file)?;
            Some(kept.swap_remove(at))
        });
        match kept {
            Some(k) if k.stamp.is_some() && k.stamp == stamp(file) => Ok(k.trail),
            _ => crate::trail::load_trail(file),
        }
    }

    /// Starts making the script engine of a session [`open_session`](Self::open_session) will soon
    /// start on trailmap `id` with `settings`, on a thread of its own while the caller goes on (makes
    /// the device, reads arguments): a one-shot command whose call runs a script saves the engine's
    /// ~3 ms from its path. Without a session to take it, the thread ends once its engine is made.
    pub fn prepare_session(&self, id: &str, settings: &Settings) -> Result<(), ProjectError> {
        Session::prepare(
            self.catalog(id)?,
            self.transpiler.clone(),
            settings.limits.clone(),
            &self.warm,
        );
        Ok(())
    }

    /// Every session of a project starts here: the trailmap's shared catalog, the device (the
    /// trailmap's simulated app unless one is given), the project's secrets unless others are given.
    pub fn open_session(&self, id: &str, opts: SessionOptions) -> Result<Session, ProjectError> {
        let device = match opts.device {
            Some(d) => d,
            None => self.sim_device(id)?,
        };
        let catalog = match opts.catalog {
            Some(c) => c,
            None => self.catalog(id)?,
        };
        Ok(Session::start_warm(
            SessionConfig {
                catalog,
                device,
                secrets: opts.secrets.unwrap_or_else(|| self.secrets.clone()),
                out_dir: opts.out_dir,
                settings: opts.settings,
                transpiler: self.transpiler.clone(),
                id: opts.id,
            },
            &self.warm,
        )?)
    }
}

/// The target id of a trail that names no loaded trailmap (none, or an app's package id, as the
/// original allows): its session has the built-in tools alone.
pub const NO_TARGET: &str = "";

/// How to open one session ([`Project::open_session`]); every field has a default.
#[derive(Default)]
pub struct SessionOptions {
    /// `None`: the trailmap's simulated device.
    pub device: Option<Box<dyn Device>>,
    /// The session writes `<out_dir>/<id>/log.jsonl`; `None` writes no files.
    pub out_dir: Option<PathBuf>,
    pub settings: Settings,
    /// A fixed session id (reports name it); generated when `None`.
    pub id: Option<String>,
    /// `None`: the project's secrets.
    pub secrets: Option<Arc<SecretStore>>,
    /// `None`: the trailmap's catalog (its tools, the parts' and the host functions). A catalog of
    /// the caller's own: the trailmap's with built-ins of its own ([`Catalog::register_builtin`]).
    pub catalog: Option<Arc<Catalog>>,
}

#[cfg(test)]
mod kept_tests {
    use super::*;

    /// The tools of the trailmap holding a trail are built ahead and kept for its check and
    /// session. Control: a file outside every trailmap builds none.
    #[test]
    fn the_tools_of_the_trailmap_holding_a_trail_are_built_ahead() {
        let (dir, project, file) = one_trail("Alpha");
        let built = |p: &Project| {
            p.catalogs
                .lock()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        let elsewhere = dir.path().join("a.trail.yaml");
        std::fs::write(&elsewhere, trail("Alpha")).expect("write");
        assert!(project.load_tools_for(std::slice::from_ref(&elsewhere)).is_empty());
        assert!(built(&project).is_empty(), "{:?}", built(&project));
        assert_eq!(project.load_tools_for(&[file.clone(), file]), ["t"]);
        assert_eq!(built(&project), ["t"]);
    }

    fn trail(step: &str) -> String {
        format!(
            "config:\n  id: t/a\ntrail:\n  - step: {step}\n    recording:\n      tools:\n        - pressKey: {{ keyCode: BACK }}\n"
        )
    }

    /// A project of one trailmap holding one trail whose first step is `step`.
    fn one_trail(step: &str) -> (tempfile::TempDir, Project, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let map = dir.path().join("trailmaps/t");
        std::fs::create_dir_all(map.join("trails")).expect("mkdir");
        std::fs::write(map.join("trailmap.yaml"), "id: t\n").expect("write");
        let file = map.join("trails/a.trail.yaml");
        std::fs::write(&file, trail(step)).expect("write");
        let project = Project::open(&dir.path().join("trailmaps"), ProjectOptions::default()).expect("project");
        (dir, project, file)
    }

    /// Rewrites `file` with a step of the same length, its time set back: a change its stamp
    /// cannot see.
    fn rewrite_keeping_stamp(file: &Path, step: &str) {
        let time = std::fs::metadata(file).and_then(|m| m.modified()).expect("mtime");
        std::fs::write(file, trail(step)).expect("write");
        std::fs::File::options()
            .write(true)
            .open(file)
            .and_then(|f| f.set_modified(time))
            .expect("set mtime");
    }

    fn first_step(t: &crate::trail::Trail) -> String {
        t.steps.first().map(|s| s.text.clone()).unwrap_or_default()
    }

    /// The run reads the parse the device choice kept only while the file is as it was then: a file
    /// changed in between (its length or its time) is read again. Control: a change that keeps both
    /// (same length, time set back) is not seen, so the kept parse is what was used.
    #[test]
    fn a_kept_parse_is_used_once_and_only_for_an_unchanged_file() {
        let (_dir, project, file) = one_trail("Alpha");
        let files = vec![file.clone()];

        // Changed in between (another length): the new text is read.
        assert!(project.device_for_trails(&files).is_none());
        std::fs::write(&file, trail("Beta, longer")).expect("write");
        assert_eq!(first_step(&project.load_trail(&file).expect("parses")), "Beta, longer");

        // Control: the same length and the old time hide the change, so the kept parse is used...
        assert!(project.device_for_trails(&files).is_none());
        rewrite_keeping_stamp(&file, "Gamma, longr");
        assert_eq!(first_step(&project.load_trail(&file).expect("parses")), "Beta, longer");
        // ...once: the next read is the file's.
        assert_eq!(first_step(&project.load_trail(&file).expect("parses")), "Gamma, longr");
    }

    /// The type gate of `run` checks the parse the device choice kept and leaves it for the run; a
    /// file changed in between is not checked from it (and not kept).
    #[test]
    fn the_type_gate_borrows_the_kept_parse_and_the_run_still_gets_it() {
        let (_dir, project, file) = one_trail("Alpha");
        let files = vec![file.clone()];

        // Nothing kept yet: nothing borrowed.
        assert_eq!(project.with_kept_trail(&file, first_step), None);
        assert!(project.device_for_trails(&files).is_none());
        // Borrowed, then the run gets the same parse: a change that keeps the stamp (same length,
        // the old time) shows it was not read again.
        assert_eq!(project.with_kept_trail(&file, first_step).as_deref(), Some("Alpha"));
        rewrite_keeping_stamp(&file, "Omega");
        assert_eq!(first_step(&project.load_trail(&file).expect("parses")), "Alpha");

        // Control: a file changed in between (another length) is not borrowed from the kept parse.
        assert!(project.device_for_trails(&files).is_none());
        std::fs::write(&file, trail("Beta, longer")).expect("write");
        assert_eq!(project.with_kept_trail(&file, first_step), None);
        assert_eq!(first_step(&project.load_trail(&file).expect("parses")), "Beta, longer");
    }
}
