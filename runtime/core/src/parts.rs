//! What the optional crates add to a project, through one value the core knows only by its traits:
//! device kinds (`android`, `web`), built-in tools (the `web_*` tools' runners), `ctx.fetch`'s HTTP
//! client, what paints over secret fields in a PNG, and what a run writes once its trails are done
//! (the storyboard). The core names none of them; `trailblaze::all_parts()` gathers those a build
//! has, and an embedder may add its own.

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

use crate::device::{Device, DeviceError, DeviceSpec};
pub use crate::network::Fetch;
pub use crate::replay::{AgentHandle, Replayer, StepAgent, TrailAgent};
pub use crate::snapshot::{Painter, SECRET_MASK};
use crate::tool::BuiltinEntry;
use crate::trail::TrailReport;

/// A kind of device a crate can connect (`DeviceSpec::Android`, `DeviceSpec::Web`).
pub trait DeviceKind: Send + Sync {
    /// Connects the device `spec` names, or `None` when `spec` is not of this kind.
    fn connect(&self, spec: &DeviceSpec) -> Option<Result<Box<dyn Device>, DeviceError>>;
    /// After a trail failed on `spec`'s device: whether the device is gone (it no longer answers),
    /// so a pool runs the trail again elsewhere. Devices that cannot tell say `false`.
    fn lost(&self, spec: &DeviceSpec) -> bool {
        let _ = spec;
        false
    }
    /// What a run holds while its trails run (one browser shared by a run's web trails).
    fn hold_for_run(&self) -> Option<Box<dyn Any>> {
        None
    }
}

/// Files a run adds beside its reports once every trail is done (each trail's storyboard).
pub trait RunFiles: Send + Sync {
    fn write(&self, trails: &mut [TrailReport], run_dir: &Path);
}

/// The parts a project is opened with ([`crate::ProjectOptions::parts`]). The default has none:
/// the simulated device, QuickJS and Node, no `ctx.fetch`.
#[derive(Clone, Default)]
pub struct Parts {
    pub(crate) devices: Vec<Arc<dyn DeviceKind>>,
    pub(crate) tools: Vec<fn() -> Vec<BuiltinEntry>>,
    pub(crate) fetch: Option<Arc<dyn Fetch>>,
    pub(crate) run_files: Vec<Arc<dyn RunFiles>>,
    pub(crate) painter: Option<Arc<dyn Painter>>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("devices", &self.devices.len())
            .field("tools", &self.tools.len())
            .field("fetch", &self.fetch.is_some())
            .field("run_files", &self.run_files.len())
            .field("painter", &self.painter.is_some())
            .finish()
    }
}

impl Parts {
    pub fn device(mut self, kind: impl DeviceKind + 'static) -> Self {
        self.devices.push(Arc::new(kind));
        self
    }
    /// Built-in tools every catalog of the project has; one of a name already there replaces it
    /// (a tool the core declares for a device it cannot drive).
    pub fn tools(mut self, entries: fn() -> Vec<BuiltinEntry>) -> Self {
        self.tools.push(entries);
        self
    }
    pub fn fetch(mut self, client: impl Fetch + 'static) -> Self {
        self.fetch = Some(Arc::new(client));
        self
    }
    pub fn run_files(mut self, files: impl RunFiles + 'static) -> Self {
        self.run_files.push(Arc::new(files));
        self
    }
    pub fn painter(mut self, painter: impl Painter + 'static) -> Self {
        self.painter = Some(Arc::new(painter));
        self
    }
    /// Both sets: `other`'s fetch client and painter win when both have one.
    pub fn with(mut self, other: Parts) -> Self {
        self.devices.extend(other.devices);
        self.tools.extend(other.tools);
        self.fetch = other.fetch.or(self.fetch);
        self.run_files.extend(other.run_files);
        self.painter = other.painter.or(self.painter);
        self
    }

    /// Connects `spec` through the first kind that knows it; `None` when no part does.
    pub(crate) fn connect(&self, spec: &DeviceSpec) -> Option<Result<Box<dyn Device>, DeviceError>> {
        self.devices.iter().find_map(|k| k.connect(spec))
    }

    pub(crate) fn lost(&self, spec: &DeviceSpec) -> bool {
        self.devices.iter().any(|k| k.lost(spec))
    }

    pub(crate) fn hold_for_run(&self) -> Vec<Box<dyn Any>> {
        self.devices.iter().filter_map(|k| k.hold_for_run()).collect()
    }
}

/// Why a device of `spec`'s kind cannot be had from this build.
pub(crate) fn not_built(spec: &DeviceSpec) -> String {
    let (what, feature) = match spec {
        DeviceSpec::Web(_) => ("`--device web`", "web"),
        DeviceSpec::Ios(_) => ("iOS support", "ios"),
        _ => ("Android support", "adb"),
    };
    format!("this build of trailblaze has no {what} (it was built without the `{feature}` feature)")
}
