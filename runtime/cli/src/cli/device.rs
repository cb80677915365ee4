//! `--device`/`--adb-server`/`--headed`/`--viewport`, shared by every command that drives a device,
//! and `trailblaze devices`.

use anyhow::anyhow;
use clap::Args;
use trailblaze::android::list_devices;
use trailblaze::device::DeviceSpec;
use trailblaze::device::spec::adb_server_address as server_address;
use trailblaze::device::spec::parse_viewport;

use super::Failure;
use super::output::{err, out};

mod simulators;

/// Which device a command drives.
#[derive(Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct DeviceArgs {
    /// `sim` (the simulated device running the trailmap's app.yaml; the default), `android` (the
    /// only device on the adb server), `android:SERIAL` (see `trailblaze devices`), `ios` (the
    /// iPhone or simulator behind WebDriverAgent at --wda-url), `ios:UDID`, `ios:http://HOST:PORT`
    /// or `ios:UDID@http://HOST:PORT` (docs/ios.md), `web` (a page of headless Chromium) or
    /// `web:ws://HOST:PORT` (a running browser). `run` picks `web` by itself for trails that name
    /// only a web device. `run` takes several phones (`--device android:A --device android:B`,
    /// `android:all`: every device the adb server lists, or iOS devices each with its own
    /// WebDriverAgent) as its pool.
    #[arg(long, env = "TRAILBLAZE_DEVICE", value_name = "DEVICE")]
    pub device: Vec<String>,
    #[command(flatten)]
    pub server: AdbServerArg,
    #[command(flatten)]
    pub wda: WdaArg,
    /// Show the browser's window (`--device web`), for a person watching.
    #[arg(long)]
    pub headed: bool,
    /// The page's viewport in CSS pixels (`--device web`) [default: 1280x800].
    #[arg(long, value_name = "WxH", value_parser = parse_viewport)]
    pub viewport: Option<(u32, u32)>,
}

/// `--adb-server`, for commands that talk to adb.
#[derive(Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct AdbServerArg {
    /// The adb server [default: ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037].
    #[arg(long, value_name = "HOST:PORT")]
    pub adb_server: Option<String>,
}

/// `--wda-url`, for commands that talk to WebDriverAgent.
#[derive(Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct WdaArg {
    /// WebDriverAgent's URL for `--device ios` [default: TRAILBLAZE_WDA_URL, else http://127.0.0.1:8100].
    #[arg(long, value_name = "URL")]
    pub wda_url: Option<String>,
}

impl DeviceArgs {
    pub fn spec(&self) -> Result<DeviceSpec, Failure> {
        if self.device.len() > 1 {
            return Err(Failure::Usage(anyhow!(
                "--device was given {} times: only `run` takes a pool of several devices",
                self.device.len()
            )));
        }
        self.parse(self.device.first().map_or("sim", String::as_str))
    }

    fn parse(&self, text: &str) -> Result<DeviceSpec, Failure> {
        let spec = DeviceSpec::parse_with(text, self.server.adb_server.as_deref(), self.wda.wda_url.as_deref())
            .map_err(|e| Failure::Usage(anyhow!(e)))?;
        self.with_browser_flags(spec)
    }

    /// `run`'s devices: one, or a pool of phones (`android:all` becomes every device the adb
    /// server lists as ready). Phones only: a pool of sims or browsers is `--jobs`.
    pub fn pool(&self) -> Result<Vec<DeviceSpec>, Failure> {
        if self.device.len() <= 1 && self.device.first().is_none_or(|d| d != "android:all") {
            return Ok(vec![self.spec()?]);
        }
        let mut pool = Vec::new();
        for text in &self.device {
            if text == "android:all" {
                let server =
                    server_address(self.server.adb_server.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))?;
                let ready = list_devices(server).map_err(|e| Failure::Usage(anyhow!(e)))?;
                let ready: Vec<_> = ready.into_iter().filter(|d| d.state == "device").collect();
                if ready.is_empty() {
                    return Err(Failure::Usage(anyhow!(
                        "`android:all`: the adb server at {server} lists no device ready to use (`trailblaze devices`)"
                    )));
                }
                for d in ready {
                    pool.push(self.parse(&format!("android:{}", d.serial))?);
                }
                continue;
            }
            let spec = self.parse(text)?;
            if let DeviceSpec::Ios(o) = &spec
                && pool.iter().any(|p| matches!(p, DeviceSpec::Ios(q) if q.wda == o.wda))
            {
                return Err(Failure::Usage(anyhow!(
                    "`{text}` in a pool: another iOS device of the pool has the same WebDriverAgent; each \
                     needs its own (`ios:UDID@http://HOST:PORT`, docs/ios.md)"
                )));
            }
            if !matches!(spec, DeviceSpec::Android { serial: Some(_), .. } | DeviceSpec::Ios(_)) {
                return Err(Failure::Usage(anyhow!(
                    "`{text}` in a pool: a pool holds phones named by serial (`android:SERIAL`, `android:all`) \
                     or iOS devices each with its own WebDriverAgent; for several simulated devices or browsers use --jobs"
                )));
            }
            if !pool.contains(&spec) {
                pool.push(spec);
            }
        }
        Ok(pool)
    }

    /// Whether the user named a device (flag or `TRAILBLAZE_DEVICE`).
    pub fn given(&self) -> bool {
        !self.device.is_empty()
    }

    /// `--headed` and `--viewport` applied to a web device; refused for any other.
    pub fn with_browser_flags(&self, spec: DeviceSpec) -> Result<DeviceSpec, Failure> {
        match spec {
            DeviceSpec::Web(mut o) => {
                o.headed |= self.headed;
                if let Some(v) = self.viewport {
                    o.viewport = v;
                }
                if let Some(t) = std::env::var("TRAILBLAZE_WEB_TIMEOUT")
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    && t > 0.0
                    && t <= 3600.0
                {
                    o.timeout = std::time::Duration::from_secs_f64(t);
                }
                Ok(DeviceSpec::Web(o))
            }
            other if self.headed || self.viewport.is_some() => Err(Failure::Usage(anyhow!(
                "--headed and --viewport apply to `--device web`, not `{}`",
                other.label()
            ))),
            other => Ok(other),
        }
    }
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze devices\n  trailblaze devices --adb-server 127.0.0.1:5038\n  trailblaze devices --wda-url http://127.0.0.1:8101"
)]
pub struct DevicesArgs {
    #[command(flatten)]
    pub server: AdbServerArg,
    #[command(flatten)]
    pub wda: WdaArg,
}

/// Lists the devices `--device` can name: the simulated one, the web, the WebDriverAgent's iPhone
/// (and on macOS the booted simulators), and the adb server's.
pub fn devices(a: &DevicesArgs) -> Result<(), Failure> {
    let server = server_address(a.server.adb_server.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))?;
    let wda = trailblaze::device::spec::wda_url(a.wda.wda_url.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))?;
    out!("sim\tthe simulated device (the trailmap's app.yaml)");
    match trailblaze::web::device::find_chromium() {
        Ok(path) => out!("web\ta page of headless Chromium ({})", path.display()),
        Err(_) => out!("web\tunavailable: no Chromium found (install Debian's `chromium`, or set TRAILBLAZE_CHROMIUM)"),
    }
    ios_devices(&wda);
    // No adb server is no error: the sim and the web still work (exit 0, a note on stderr).
    let list = match list_devices(server) {
        Ok(list) => list,
        Err(e) => {
            err!("note: no Android devices listed: the adb server at {server} cannot be reached ({e})");
            return Ok(());
        }
    };
    for d in &list {
        let model = d.model.as_deref().unwrap_or("-");
        out!("android:{}\t{}\t{model}", d.serial, d.state);
    }
    if list.is_empty() {
        err!("note: no Android device on the adb server at {server}");
    }
    Ok(())
}

/// The WebDriverAgent endpoint's device, and the booted simulators (macOS) with which has no WDA.
fn ios_devices(wda: &str) {
    let served = match trailblaze::ios::status(wda) {
        Ok(s) => {
            let name = s
                .udid
                .as_deref()
                .map_or_else(|| format!("ios:{wda}"), |u| format!("ios:{u}"));
            let kind = if s.simulator { "simulator" } else { "device" };
            let state = if s.ready { "ready" } else { "not ready" };
            out!(
                "{name}\t{state}\tiOS {} {} {kind} ({wda})",
                s.os_version.as_deref().unwrap_or("?"),
                s.device.as_deref().unwrap_or("-")
            );
            s.udid
        }
        Err(e) => {
            err!("note: no iOS device listed: no WebDriverAgent answers at {wda} ({e}); docs/ios.md starts one");
            None
        }
    };
    for sim in simulators::list() {
        if served.as_deref() == Some(sim.udid.as_str()) {
            continue;
        }
        out!(
            "ios:{}\tno WebDriverAgent\t{} {} simulator (start WDA on it: docs/ios.md)",
            sim.udid,
            sim.runtime,
            sim.name
        );
    }
}
