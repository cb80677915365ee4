//! Which device a command drives, as users write it: `sim` (the trailmap's simulated app) or
//! `android[:SERIAL]` (a device on the adb server). One parser for the CLI, MCP and the run.

use std::net::SocketAddr;

#[cfg(feature = "adb")]
use super::DeviceError;
#[cfg(feature = "adb")]
use super::adb::{self, AdbDevice, AdbOptions};

/// A device choice, before it is connected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The built-in simulated device running the trailmap's `app.yaml`.
    #[default]
    Sim,
    /// An Android device on the adb server at `server`; the only usable one when `serial` is `None`.
    Android { serial: Option<String>, server: SocketAddr },
}

impl DeviceSpec {
    /// Parses `sim`, `android` or `android:SERIAL`; `adb_server` is `--adb-server HOST:PORT` (the
    /// adb client's environment variables otherwise). The error is a message for the user.
    pub fn parse(text: &str, adb_server: Option<&str>) -> Result<DeviceSpec, String> {
        let (kind, serial) = match text.split_once(':') {
            Some((k, s)) => (k, Some(s)),
            None => (text, None),
        };
        match (kind, serial) {
            ("sim", None) => Ok(DeviceSpec::Sim),
            ("android", Some("")) => {
                Err("`android:` needs a serial after the colon (`trailblaze devices` lists them)".into())
            }
            #[cfg(feature = "adb")]
            ("android", serial) => Ok(DeviceSpec::Android {
                serial: serial.map(str::to_string),
                server: adb::server_address(adb_server).map_err(|e| e.to_string())?,
            }),
            #[cfg(not(feature = "adb"))]
            ("android", _) => {
                let _ = adb_server;
                Err("this build of trailblaze has no Android support (it was built without the `adb` feature)".into())
            }
            _ => Err(format!(
                "unknown device `{text}`: expected `sim`, `android` or `android:SERIAL`"
            )),
        }
    }

    /// The platform the device will answer to (the simulated app models an Android one).
    pub fn platform(&self) -> super::Platform {
        match self {
            DeviceSpec::Sim | DeviceSpec::Android { .. } => super::Platform::Android,
        }
    }

    /// How reports name the device before it is connected.
    pub fn label(&self) -> String {
        match self {
            DeviceSpec::Sim => "sim".into(),
            DeviceSpec::Android { serial: None, .. } => "android".into(),
            DeviceSpec::Android { serial: Some(s), .. } => format!("android:{s}"),
        }
    }

    /// Connects to an Android device; `None` for the simulated device, which needs the trailmap
    /// (see `Project::device`).
    #[cfg(feature = "adb")]
    pub fn connect_android(&self) -> Result<Option<AdbDevice>, DeviceError> {
        match self {
            DeviceSpec::Sim => Ok(None),
            DeviceSpec::Android { serial, server } => {
                AdbDevice::connect(*server, serial.as_deref(), AdbOptions::default()).map(Some)
            }
        }
    }
}

#[cfg(all(test, feature = "adb"))]
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
        for bad in ["ios", "sim:x", "android:", "", "SIM"] {
            let e = DeviceSpec::parse(bad, Some("127.0.0.1:5999")).unwrap_err();
            assert!(e.contains("sim") || e.contains("serial"), "{bad}: {e}");
        }
    }
}
