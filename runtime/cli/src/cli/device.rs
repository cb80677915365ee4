//! `--device`/`--adb-server`, shared by every command that drives a device, and `trailblaze devices`.

use anyhow::anyhow;
use clap::Args;
use trailblaze::device::DeviceSpec;
use trailblaze::device::adb::{list_devices, server_address};

use super::Failure;
use super::output::{err, out};

/// Which device a command drives.
#[derive(Args)]
pub struct DeviceArgs {
    /// `sim` (the simulated device running the trailmap's app.yaml), `android` (the only device on
    /// the adb server) or `android:SERIAL` (see `trailblaze devices`).
    #[arg(long, env = "TRAILBLAZE_DEVICE", default_value = "sim", value_name = "DEVICE")]
    pub device: String,
    #[command(flatten)]
    pub server: AdbServerArg,
}

/// `--adb-server`, for commands that talk to adb.
#[derive(Args)]
pub struct AdbServerArg {
    /// The adb server [default: ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037].
    #[arg(long, value_name = "HOST:PORT")]
    pub adb_server: Option<String>,
}

impl DeviceArgs {
    pub fn spec(&self) -> Result<DeviceSpec, Failure> {
        DeviceSpec::parse(&self.device, self.server.adb_server.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))
    }
}

#[derive(Args)]
#[command(after_help = "Examples:\n  trailblaze devices\n  trailblaze devices --adb-server 127.0.0.1:5038")]
pub struct DevicesArgs {
    #[command(flatten)]
    pub server: AdbServerArg,
}

/// Lists the Android devices the adb server knows, as `--device` takes them.
pub fn devices(a: &DevicesArgs) -> Result<(), Failure> {
    let server = server_address(a.server.adb_server.as_deref()).map_err(|e| Failure::Usage(anyhow!(e)))?;
    let list = list_devices(server).map_err(|e| Failure::Usage(anyhow!(e)))?;
    out!("sim\tthe simulated device (the trailmap's app.yaml)");
    for d in &list {
        let model = d.model.as_deref().unwrap_or("-");
        out!("android:{}\t{}\t{model}", d.serial, d.state);
    }
    if list.is_empty() {
        err!("no Android device on the adb server at {server}");
    }
    Ok(())
}
