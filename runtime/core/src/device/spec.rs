//! Which device a command drives, as users write it: `sim` (the trailmap's simulated app),
//! `android[:SERIAL]` (a device on the adb server), `ios[:UDID][@URL]` (an iPhone or a simulator
//! behind WebDriverAgent) or `web[:ws://...]` (a page of Chromium). One parser for the CLI, MCP and
//! the run.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::DeviceError;

/// A device choice, before it is connected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The built-in simulated device running the trailmap's `app.yaml`.
    #[default]
    Sim,
    /// An Android device on the adb server at `server`; the only usable one when `serial` is `None`.
    Android { serial: Option<String>, server: SocketAddr },
    /// A page of Chromium: started by trailblaze, or in a running browser (`web:ws://...`).
    Web(WebOptions),
    /// An iPhone, an iPad or a simulator behind the WebDriverAgent at `wda`.
    Ios(IosOptions),
}

/// Which iOS device, and the WebDriverAgent that drives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IosOptions {
    /// The device's UDID, checked against the endpoint's `/status` when it tells one; `None`: the
    /// one device the endpoint serves.
    pub udid: Option<String>,
    /// WebDriverAgent's base URL (`http://127.0.0.1:8100`): one device per endpoint.
    pub wda: String,
}

/// WebDriverAgent's default endpoint (its port on a simulator, or `iproxy 8100 8100` for a phone).
pub const DEFAULT_WDA_URL: &str = "http://127.0.0.1:8100";

/// The WebDriverAgent endpoint: `flag` (`--wda-url`), else `TRAILBLAZE_WDA_URL`, else the default.
pub fn wda_url(flag: Option<&str>) -> Result<String, String> {
    let env = std::env::var("TRAILBLAZE_WDA_URL").ok().filter(|v| !v.is_empty());
    match (flag, env) {
        (Some(f), _) => check_wda_url(f).map_err(|e| format!("--wda-url: {e}")),
        (None, Some(e)) => check_wda_url(&e).map_err(|err| format!("TRAILBLAZE_WDA_URL: {err}")),
        (None, None) => Ok(DEFAULT_WDA_URL.into()),
    }
}

/// `url` without its trailing `/`, when it is an `http://` or `https://` URL with a host. The error
/// does not repeat the URL (it may carry credentials).
fn check_wda_url(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or("expected an http:// or https:// URL, e.g. http://127.0.0.1:8100")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || host.chars().any(char::is_whitespace) {
        return Err("expected a host after http://, e.g. http://127.0.0.1:8100".into());
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// A UDID as Apple writes them (`00008110-001234567890001E`, a simulator's UUID): letters, digits, `-`.
fn is_udid(text: &str) -> bool {
    !text.is_empty() && text.len() <= 64 && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// How a web device starts and what it may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOptions {
    /// `ws://HOST:PORT[/devtools/browser/ID]` of a running browser to attach to; `None` starts one.
    pub endpoint: Option<String>,
    /// Show the browser's window (for a person watching).
    pub headed: bool,
    /// The page's viewport in CSS pixels.
    pub viewport: (u32, u32),
    /// The folder relative URLs resolve against (a trail's folder); the current folder when `None`.
    pub base_dir: Option<PathBuf>,
    /// The folder served for relative URLs: no page reaches a file outside it.
    pub workspace: Option<PathBuf>,
    /// How long an action waits for its element, and a verify retries.
    pub timeout: Duration,
    /// How long a navigation waits for the page's load event, at least `timeout` (as Playwright
    /// keeps its navigation timeout apart from its action timeout: a slow page load is not a slow
    /// element, and a short action timeout must not fail every navigation on a busy machine).
    pub navigation_timeout: Duration,
    /// Files never served to a page, whatever their name or folder: the run's `--secrets` file
    /// (the project adds it when it opens the device).
    pub never_served: Vec<PathBuf>,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            endpoint: None,
            headed: false,
            viewport: (1280, 800),
            base_dir: None,
            workspace: None,
            timeout: Duration::from_secs(10),
            navigation_timeout: Duration::from_secs(30),
            never_served: Vec::new(),
        }
    }
}

/// Parses `--viewport WxH` (each 1..=10000).
pub fn parse_viewport(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}`: expected WIDTHxHEIGHT in CSS pixels, e.g. 1280x800");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(1..=10_000).contains(&w) || !(1..=10_000).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

impl DeviceSpec {
    /// Parses `sim`, `android` or `android:SERIAL`; `adb_server` is `--adb-server HOST:PORT` (the
    /// adb client's environment variables otherwise). The error is a message for the user.
    pub fn parse(text: &str, adb_server: Option<&str>) -> Result<DeviceSpec, String> {
        Self::parse_with(text, adb_server, None)
    }

    /// [`DeviceSpec::parse`], with `wda_url` the `--wda-url` flag (`TRAILBLAZE_WDA_URL` otherwise)
    /// for an `ios` device that names no endpoint of its own.
    pub fn parse_with(text: &str, adb_server: Option<&str>, wda: Option<&str>) -> Result<DeviceSpec, String> {
        if text == "ios" || text.starts_with("ios:") {
            return parse_ios(text.strip_prefix("ios").unwrap_or_default(), wda);
        }
        let (kind, serial) = match text.split_once(':') {
            Some((k, s)) => (k, Some(s)),
            None => (text, None),
        };
        match (kind, serial) {
            ("sim", None) => Ok(DeviceSpec::Sim),
            ("android", Some("")) => {
                Err("`android:` needs a serial after the colon (`trailblaze devices` lists them)".into())
            }
            ("android", serial) => Ok(DeviceSpec::Android {
                serial: serial.map(str::to_string),
                server: adb_server_address(adb_server).map_err(|e| e.to_string())?,
            }),
            ("web", None) => Ok(DeviceSpec::Web(WebOptions::default())),
            ("web", Some(endpoint)) if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") => {
                Ok(DeviceSpec::Web(WebOptions {
                    endpoint: Some(endpoint.to_string()),
                    ..WebOptions::default()
                }))
            }
            ("web", Some(_)) => Err(format!(
                "`{text}`: after `web:` give the ws:// endpoint of a running browser (e.g. web:ws://127.0.0.1:9222)"
            )),
            _ => Err(format!(
                "unknown device `{text}`: expected `sim`, `android`, `android:SERIAL`, `ios`, `ios:UDID`, \
                 `ios:http://HOST:PORT`, `web` or `web:ws://HOST:PORT`"
            )),
        }
    }

    /// The platform the device will answer to (the simulated app models an Android one).
    pub fn platform(&self) -> super::Platform {
        match self {
            DeviceSpec::Sim | DeviceSpec::Android { .. } => super::Platform::Android,
            DeviceSpec::Web(_) => super::Platform::Web,
            DeviceSpec::Ios(_) => super::Platform::Ios,
        }
    }

    /// Whether the device is one phone of its own (a pool's member, lost when it stops answering),
    /// rather than one a run can make as many of as it likes (the simulated app, a browser's page).
    pub fn is_phone(&self) -> bool {
        matches!(self, DeviceSpec::Android { .. } | DeviceSpec::Ios(_))
    }

    /// The device classifier recordings and `config.skip` are keyed by before the device is
    /// connected (`ios-iphone`); the connected device may name a closer one (`ios-ipad`).
    pub fn classifier(&self) -> Option<&'static str> {
        match self {
            DeviceSpec::Ios(_) => Some("ios-iphone"),
            _ => None,
        }
    }

    /// How reports name the device before it is connected.
    pub fn label(&self) -> String {
        match self {
            DeviceSpec::Sim => "sim".into(),
            DeviceSpec::Android { serial: None, .. } => "android".into(),
            DeviceSpec::Android { serial: Some(s), .. } => format!("android:{s}"),
            DeviceSpec::Web(WebOptions { endpoint: None, .. }) => "web".into(),
            DeviceSpec::Web(WebOptions { endpoint: Some(e), .. }) => format!("web:{e}"),
            DeviceSpec::Ios(IosOptions { udid: Some(u), .. }) => format!("ios:{u}"),
            DeviceSpec::Ios(IosOptions { udid: None, wda }) if wda == DEFAULT_WDA_URL => "ios".into(),
            DeviceSpec::Ios(IosOptions { udid: None, wda }) => format!("ios:{wda}"),
        }
    }

    /// This device for one trail: a web device resolves relative URLs against the trail's folder
    /// and serves no file outside its workspace.
    pub fn for_trail(&self, trail_file: &std::path::Path) -> DeviceSpec {
        match self {
            DeviceSpec::Web(o) => {
                let dir = trail_file.parent().map(|d| {
                    if d.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        d.to_path_buf()
                    }
                });
                let dir = dir.map(|d| std::fs::canonicalize(&d).unwrap_or(d));
                DeviceSpec::Web(WebOptions {
                    workspace: o.workspace.clone().or_else(|| dir.as_deref().map(workspace_of)),
                    base_dir: dir,
                    ..o.clone()
                })
            }
            other => other.clone(),
        }
    }
}

/// `ios`'s rest after the word: empty, `:UDID`, `:URL` or `:UDID@URL`.
fn parse_ios(rest: &str, wda: Option<&str>) -> Result<DeviceSpec, String> {
    let usage = "expected `ios`, `ios:UDID`, `ios:http://HOST:PORT` or `ios:UDID@http://HOST:PORT`";
    let rest = match rest.strip_prefix(':') {
        Some("") => {
            return Err(format!(
                "`ios:` needs a UDID or a WebDriverAgent URL after the colon: {usage}"
            ));
        }
        Some(r) => r,
        None if rest.is_empty() => "",
        None => return Err(format!("unknown device `ios{rest}`: {usage}")),
    };
    let (udid, url) = if rest.starts_with("http://") || rest.starts_with("https://") {
        (None, Some(rest))
    } else {
        match rest.split_once('@') {
            Some((u, url)) => (Some(u), Some(url)),
            None if rest.is_empty() => (None, None),
            None => (Some(rest), None),
        }
    };
    if udid.is_some_and(|u| !is_udid(u)) {
        return Err(format!("`ios:` takes a UDID of letters, digits and `-`: {usage}"));
    }
    let wda = match url {
        Some(url) => check_wda_url(url).map_err(|e| format!("ios device URL: {e}"))?,
        None => wda_url(wda)?,
    };
    Ok(DeviceSpec::Ios(IosOptions {
        udid: udid.map(str::to_string),
        wda,
    }))
}

/// The adb server's default address.
pub const DEFAULT_ADB_SERVER: &str = "127.0.0.1:5037";

/// The adb server's address: `flag` (`--adb-server HOST:PORT`), else `ADB_SERVER_SOCKET`
/// (`tcp:HOST:PORT`), else `ANDROID_ADB_SERVER_PORT`, else 127.0.0.1:5037 — as the adb client does.
pub fn adb_server_address(flag: Option<&str>) -> Result<SocketAddr, DeviceError> {
    adb_server_address_from(
        flag,
        std::env::var("ADB_SERVER_SOCKET").ok().as_deref(),
        std::env::var("ANDROID_ADB_SERVER_PORT").ok().as_deref(),
    )
}

/// `adb_server_address` with the environment passed in (testable without touching the process's).
pub fn adb_server_address_from(
    flag: Option<&str>,
    socket_env: Option<&str>,
    port_env: Option<&str>,
) -> Result<SocketAddr, DeviceError> {
    if let Some(flag) = flag {
        return resolve(flag).map_err(|e| DeviceError::Io(format!("--adb-server {flag:?}: {e}")));
    }
    if let Some(env) = socket_env.filter(|v| !v.is_empty()) {
        let hostport = env
            .strip_prefix("tcp:")
            .ok_or_else(|| DeviceError::Io(format!("ADB_SERVER_SOCKET={env:?}: expected tcp:HOST:PORT")))?;
        let hostport = if hostport.contains(':') {
            hostport.to_owned()
        } else {
            format!("127.0.0.1:{hostport}")
        };
        return resolve(&hostport).map_err(|e| DeviceError::Io(format!("ADB_SERVER_SOCKET={env:?}: {e}")));
    }
    if let Some(port) = port_env.filter(|v| !v.is_empty()) {
        let port: u16 = port
            .parse()
            .map_err(|_| DeviceError::Io(format!("ANDROID_ADB_SERVER_PORT={port:?}: expected a port number")))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    resolve(DEFAULT_ADB_SERVER).map_err(DeviceError::Io)
}

fn resolve(hostport: &str) -> Result<SocketAddr, String> {
    let (host, port) = hostport.rsplit_once(':').ok_or("expected HOST:PORT")?;
    let port: u16 = port.parse().map_err(|_| format!("bad port {port:?}"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host:?}: {e}"))?
        .find(SocketAddr::is_ipv4)
        .ok_or_else(|| format!("{host:?} has no IPv4 address (the adb client speaks IPv4)"))
}

/// The workspace a trail in `dir` belongs to: the folder that holds the original's `trails/`
/// (anchored by `trails/config/trailblaze.yaml`), else the nearest folder holding `trailmaps/`,
/// else `dir` itself.
pub fn workspace_of(dir: &std::path::Path) -> PathBuf {
    for a in dir.ancestors() {
        if a.join("trails/config/trailblaze.yaml").is_file() {
            return a.to_path_buf();
        }
        if a.join("config/trailblaze.yaml").is_file() && a.file_name().is_some_and(|n| n == "trails") {
            return a.parent().unwrap_or(a).to_path_buf();
        }
    }
    for a in dir.ancestors() {
        if a.join("trailmaps").is_dir() {
            return a.to_path_buf();
        }
    }
    dir.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_and_android_parse_and_the_rest_is_refused() {
        assert_eq!(DeviceSpec::parse("sim", None).ok(), Some(DeviceSpec::Sim));
        let a = DeviceSpec::parse("android:emulator-5554", Some("127.0.0.1:5999"));
        assert_eq!(
            a.ok(),
            Some(DeviceSpec::Android {
                serial: Some("emulator-5554".into()),
                server: "127.0.0.1:5999".parse().unwrap(),
            })
        );
        let any = DeviceSpec::parse("android", Some("127.0.0.1:5999")).unwrap();
        assert_eq!(any.label(), "android");
        assert_eq!(DeviceSpec::parse("web", None).unwrap().label(), "web");
        let attach = DeviceSpec::parse("web:ws://127.0.0.1:9222", None).unwrap();
        assert_eq!(attach.label(), "web:ws://127.0.0.1:9222");
        assert_eq!(parse_viewport("800x600"), Ok((800, 600)));
        for bad in ["800", "0x600", "x", "800x60000"] {
            assert!(parse_viewport(bad).is_err(), "{bad}");
        }
        assert!(DeviceSpec::parse("web:chrome", None).unwrap_err().contains("ws://"));
        for bad in ["sim:x", "android:", "", "SIM"] {
            let e = DeviceSpec::parse(bad, Some("127.0.0.1:5999")).unwrap_err();
            assert!(e.contains("sim") || e.contains("serial"), "{bad}: {e}");
        }
    }

    #[test]
    fn ios_takes_a_udid_an_endpoint_or_both_and_refuses_the_rest() {
        let ios = |t: &str| DeviceSpec::parse_with(t, None, Some("http://127.0.0.1:8100/"));
        let Ok(DeviceSpec::Ios(o)) = ios("ios") else {
            panic!("ios")
        };
        assert_eq!((o.udid, o.wda.as_str()), (None, "http://127.0.0.1:8100"));
        let Ok(DeviceSpec::Ios(o)) = ios("ios:00008110-0012AB") else {
            panic!("udid")
        };
        assert_eq!(o.udid.as_deref(), Some("00008110-0012AB"));
        let Ok(DeviceSpec::Ios(o)) = ios("ios:http://10.0.0.5:8101") else {
            panic!("url")
        };
        assert_eq!((o.udid, o.wda.as_str()), (None, "http://10.0.0.5:8101"));
        let Ok(DeviceSpec::Ios(o)) = ios("ios:ABC-1@http://127.0.0.1:8102") else {
            panic!("both")
        };
        assert_eq!(
            (o.udid.as_deref(), o.wda.as_str()),
            (Some("ABC-1"), "http://127.0.0.1:8102")
        );
        let spec = ios("ios:ABC-1@http://127.0.0.1:8102").unwrap();
        assert_eq!(
            (spec.platform(), spec.label().as_str()),
            (super::super::Platform::Ios, "ios:ABC-1")
        );
        assert_eq!(spec.classifier(), Some("ios-iphone"));
        assert_eq!(
            DeviceSpec::Sim.classifier(),
            None,
            "the positive control: other devices name none"
        );
        for bad in ["ios:", "iosx", "ios:a b", "ios:x@ftp://h", "ios:http://", "ios:u@"] {
            assert!(ios(bad).is_err(), "{bad}");
        }
        let e = DeviceSpec::parse_with("ios", None, Some("ftp://user:pw@h")).unwrap_err();
        assert!(e.contains("--wda-url") && !e.contains("pw"), "{e}");
    }

    #[test]
    fn a_trails_workspace_is_the_originals_root_else_the_trailmaps_folder_else_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("orig/trails/config")).unwrap();
        std::fs::write(root.join("orig/trails/config/trailblaze.yaml"), "x: 1\n").unwrap();
        std::fs::create_dir_all(root.join("orig/trails/web/t1")).unwrap();
        assert_eq!(workspace_of(&root.join("orig/trails/web/t1")), root.join("orig"));
        std::fs::create_dir_all(root.join("repo/trailmaps/m/trails")).unwrap();
        assert_eq!(workspace_of(&root.join("repo/trailmaps/m/trails")), root.join("repo"));
        std::fs::create_dir_all(root.join("lone")).unwrap();
        assert_eq!(workspace_of(&root.join("lone")), root.join("lone"));
        let spec = DeviceSpec::parse("web", None)
            .unwrap()
            .for_trail(&root.join("lone/a.trail.yaml"));
        let DeviceSpec::Web(o) = spec else { panic!("web") };
        assert_eq!(
            o.base_dir.as_deref().and_then(|d| d.file_name()),
            Some(std::ffi::OsStr::new("lone"))
        );
        assert_eq!(
            DeviceSpec::Sim.for_trail(&root.join("lone/a.trail.yaml")),
            DeviceSpec::Sim
        );
    }
}
