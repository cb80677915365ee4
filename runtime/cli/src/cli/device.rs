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
#[derive(Args, Clone, Default, serde::Serialize, serde::Deserialize)]
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
#[derive(Args, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct AdbServerArg {
    /// The adb server [default: ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037].
    #[arg(long, value_name = "HOST:PORT")]
    pub adb_server: Option<String>,
}

/// `--wda-url`, for commands that talk to WebDriverAgent.
#[derive(Args, Clone, Default, serde::Serialize, serde::Deserialize)]
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

    /// The device `text` names, read as `--device` is (with this command's `--adb-server` and
    /// `--wda-url`): MCP's `switchDevice`. The browser flags apply to a web device only, since the
    /// server was started with them for another device perhaps.
    pub fn spec_of(&self, text: &str) -> Result<DeviceSpec, Failure> {
        let spec = DeviceSpec::parse_with(text, self.server.adb_server.as_deref(), self.wda.wda_url.as_deref())
            .map_err(|e| Failure::Usage(anyhow!(e)))?;
        match spec {
            DeviceSpec::Web(_) => self.with_browser_flags(spec),
            other => Ok(other),
        }
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
    let listed =
        list(a.server.adb_server.as_deref(), a.wda.wda_url.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))?;
    for d in &listed.devices {
        out!("{}", d.line());
    }
    for n in &listed.notes {
        err!("note: {n}");
    }
    Ok(())
}

/// One device `--device` can name, as `trailblaze devices` and MCP's `trailblaze://devices` list it.
pub struct Listed {
    /// What `--device` takes: `sim`, `web`, `android:SERIAL`, `ios:UDID`.
    pub name: String,
    pub platform: &'static str,
    /// `ready`, `unavailable`, adb's state (`device`, `offline`, `unauthorized`), `not ready` or
    /// `no WebDriverAgent`.
    pub state: String,
    /// What it is: the Chromium found, the phone's model, the iPhone's OS and kind.
    pub about: String,
}

impl Listed {
    /// Its line in `trailblaze devices`: the sim's and the web's without a state when they are ready.
    fn line(&self) -> String {
        match (self.name.as_str(), self.state.as_str()) {
            ("sim" | "web", "ready") => format!("{}\t{}", self.name, self.about),
            ("sim" | "web", state) => format!("{}\t{state}: {}", self.name, self.about),
            (name, state) => format!("{name}\t{state}\t{}", self.about),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "name": self.name, "platform": self.platform, "state": self.state, "about": self.about })
    }
}

/// The devices, and notes on what could not be asked (no adb server, no WebDriverAgent): neither
/// is an error, the sim and the web still work.
pub struct DeviceList {
    pub devices: Vec<Listed>,
    pub notes: Vec<String>,
}

/// The devices `--device` can name, asking the adb server at `adb_server` and the WebDriverAgent at
/// `wda_url` (the defaults when `None`); an address that does not parse is the error.
pub fn list(adb_server: Option<&str>, wda_url: Option<&str>) -> Result<DeviceList, String> {
    let server = server_address(adb_server).map_err(|e| e.to_string())?;
    let wda = trailblaze::device::spec::wda_url(wda_url).map_err(|e| e.to_string())?;
    let mut listed = DeviceList {
        devices: vec![Listed {
            name: "sim".into(),
            platform: "android",
            state: "ready".into(),
            about: "the simulated device (the trailmap's app.yaml)".into(),
        }],
        notes: Vec::new(),
    };
    listed.devices.push(match trailblaze::web::device::find_chromium() {
        Ok(path) => Listed {
            name: "web".into(),
            platform: "web",
            state: "ready".into(),
            about: format!("a page of headless Chromium ({})", path.display()),
        },
        Err(_) => Listed {
            name: "web".into(),
            platform: "web",
            state: "unavailable".into(),
            about: "no Chromium found (install Debian's `chromium`, or set TRAILBLAZE_CHROMIUM)".into(),
        },
    });
    ios_devices(&wda, &mut listed);
    match list_devices(server) {
        Ok(list) => {
            if list.is_empty() {
                listed
                    .notes
                    .push(format!("no Android device on the adb server at {server}"));
            }
            listed.devices.extend(list.into_iter().map(|d| Listed {
                name: format!("android:{}", d.serial),
                platform: "android",
                state: d.state,
                about: d.model.unwrap_or_else(|| "-".into()),
            }));
        }
        Err(e) => listed.notes.push(format!(
            "no Android devices listed: the adb server at {server} cannot be reached ({e})"
        )),
    }
    Ok(listed)
}

/// The WebDriverAgent endpoint's device, and the booted simulators (macOS) with which has no WDA.
fn ios_devices(wda: &str, listed: &mut DeviceList) {
    let served = match trailblaze::ios::status(wda) {
        Ok(s) => {
            let name = s
                .udid
                .as_deref()
                .map_or_else(|| format!("ios:{wda}"), |u| format!("ios:{u}"));
            let kind = if s.simulator { "simulator" } else { "device" };
            listed.devices.push(Listed {
                name,
                platform: "ios",
                state: if s.ready { "ready" } else { "not ready" }.into(),
                about: format!(
                    "iOS {} {} {kind} ({wda})",
                    s.os_version.as_deref().unwrap_or("?"),
                    s.device.as_deref().unwrap_or("-")
                ),
            });
            s.udid
        }
        Err(e) => {
            listed.notes.push(format!(
                "no iOS device listed: no WebDriverAgent answers at {wda} ({e}); docs/ios.md starts one"
            ));
            None
        }
    };
    for sim in simulators::list() {
        if served.as_deref() == Some(sim.udid.as_str()) {
            continue;
        }
        listed.devices.push(Listed {
            name: format!("ios:{}", sim.udid),
            platform: "ios",
            state: "no WebDriverAgent".into(),
            about: format!("{} {} simulator (start WDA on it: docs/ios.md)", sim.runtime, sim.name),
        });
    }
}
