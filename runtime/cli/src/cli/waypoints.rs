//! `trailblaze waypoints`: the trailmap's waypoints, and which of them the device's screen is at.

use clap::Args;
use serde_json::json;

use super::device::DeviceArgs;
use super::output::{err, out};
use super::{Cli, Failure, MapArg, SecretsArg, open_project, warn_all};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze waypoints\n  trailblaze waypoints --device android --json\n  trailblaze waypoints --no-screen     list them without looking at a device"
)]
pub struct WaypointsArgs {
    /// As JSON: each waypoint with `here: true` when the screen is at it.
    #[arg(long)]
    pub json: bool,
    /// Only list them: open no device.
    #[arg(long)]
    pub no_screen: bool,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub secrets: SecretsArg,
    #[command(flatten)]
    pub device: DeviceArgs,
}

pub fn waypoints(cli: &Cli, a: &WaypointsArgs) -> Result<(), Failure> {
    let (project, _) = open_project(cli, Some(&a.secrets))?;
    let id = project.trailmap_id(a.map.trailmap.as_deref())?;
    let catalog = project.catalog(&id)?;
    warn_all(&catalog.warnings);
    let list = catalog.waypoint_list();
    // Where the screen is: the snapshot names the waypoints it is at.
    let here: Option<Vec<String>> = if a.no_screen || list.is_empty() {
        None
    } else {
        let snap = super::tool::snapshot_on(&project, &id, &a.device.spec()?)?;
        Some(
            snap["waypoints"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        )
    };
    let at = |w: &str| here.as_ref().map(|h| h.iter().any(|x| x == w));
    if a.json {
        let rows: Vec<_> = list
            .iter()
            .map(|w| {
                json!({
                    "id": w.id, "description": w.description, "file": w.file,
                    "classifiers": w.classifiers, "here": at(&w.id),
                })
            })
            .collect();
        super::output::out_json!(&rows);
        return Ok(());
    }
    if list.is_empty() {
        err!("trailmap `{id}` has no waypoints (`waypoints/*.waypoint.yaml`)");
        return Ok(());
    }
    for w in &list {
        let mark = match at(&w.id) {
            Some(true) => "* ",
            _ => "  ",
        };
        let blocks = w.classifiers.join(", ");
        out!("{mark}{}  [{blocks}]", w.id);
        if let Some(d) = w.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            out!("    {}", d.lines().next().unwrap_or(d));
        }
    }
    match &here {
        Some(h) if h.is_empty() => err!("the screen is at none of the {} waypoint(s)", list.len()),
        Some(h) => err!("* the screen is at: {}", h.join(", ")),
        None => {}
    }
    Ok(())
}
