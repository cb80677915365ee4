//! A fake Android device behind the real adb protocol: a server on 127.0.0.1 (port 0) speaking the
//! adb server's smart-socket protocol (`host:version`, `host:features`, `host:devices(-l)`, the
//! transport requests, `shell:`, `shell,v2,...:`, `exec:` and `sync:`), whose devices (one, or
//! several with [`FakeAdb::many`], each with its own state) each run a simulated app (see `phone`).
//! It stops when the `FakeAdb` is dropped. `FakeAdb` derefs to its first device.
//!
//! Wire format: a request is 4 hex digits of length then the text; the answer is `OKAY` or `FAIL` +
//! 4 hex length + message. `host:` answers carry 4 hex length + body. After a transport request the
//! connection belongs to the device; its service's bytes then flow raw (shell v2 as packets: 1 byte
//! id, u32 LE length, data; 1 stdout, 2 stderr, 3 exit code).

pub mod extras;
mod phone;
mod phone_trace;
mod png;
mod sh;
mod sync;
pub mod trace;
pub mod xml;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use trailblaze::device::sim::SimDevice;

pub use phone::{Phone, Sent, decode_base64};
pub use png::{crc32, render as render_png};
pub use trace::{LogEntry, MP4_HEAD, MP4_MOOV};

/// The adb server protocol version Debian's adb 1.0.41 client expects (`host:version`).
const SERVER_VERSION: u32 = 41;

/// What a real device's adbd advertises (a subset): shell v2 makes clients use packets with exit
/// codes; without `stat_v2`/`sendrecv_v2` they use the sync protocol's v1 requests, the fake's.
const FEATURES: &str = "shell_v2,cmd,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,abb_exec,remount_shell,track_app,openscreen_mdns";

struct Shared {
    phone: Mutex<Phone>,
    serial: String,
    gone: AtomicBool,
    /// A command starting with this makes the device vanish mid-command.
    drop_on: Mutex<Option<String>>,
    /// How long each shell command takes.
    delay: Mutex<Duration>,
    /// How much longer `uiautomator dump` takes (a real dump waits for the screen to be idle).
    dump_delay: Mutex<Duration>,
    /// Shell commands running now, and the most ever at once: more than one means two clients
    /// drove the phone at the same time.
    busy: AtomicUsize,
    most_busy: AtomicUsize,
    /// The transport id `host:tport:` answers (1-based, the device's place).
    transport_id: u64,
}

pub struct FakeAdb {
    addr: SocketAddr,
    devices: Vec<FakeDevice>,
    stop: Arc<AtomicBool>,
}

/// One device of a [`FakeAdb`]: its phone and the faults it can be told to have.
pub struct FakeDevice {
    shared: Arc<Shared>,
}

impl std::ops::Deref for FakeAdb {
    type Target = FakeDevice;
    fn deref(&self) -> &FakeDevice {
        &self.devices[0]
    }
}

impl FakeAdb {
    /// Serves `sim` as device `serial`.
    pub fn start(serial: &str, sim: SimDevice) -> FakeAdb {
        FakeAdb::many(vec![(serial.to_owned(), sim)])
    }

    /// Serves several devices at once, each with its own phone.
    pub fn many(devices: Vec<(String, SimDevice)>) -> FakeAdb {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared: Vec<Arc<Shared>> = devices
            .into_iter()
            .enumerate()
            .map(|(i, (serial, sim))| {
                Arc::new(Shared {
                    phone: Mutex::new(Phone::new(sim)),
                    serial,
                    gone: AtomicBool::new(false),
                    drop_on: Mutex::new(None),
                    delay: Mutex::new(Duration::ZERO),
                    dump_delay: Mutex::new(Duration::ZERO),
                    busy: AtomicUsize::new(0),
                    most_busy: AtomicUsize::new(0),
                    transport_id: i as u64 + 1,
                })
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::new(shared.clone()), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(conn, &s);
                });
            }
        });
        let devices = shared.into_iter().map(|shared| FakeDevice { shared }).collect();
        FakeAdb { addr, devices, stop }
    }

    /// The demo app on a device named `serial`.
    pub fn demo(serial: &str) -> FakeAdb {
        FakeAdb::demo_many(&[serial])
    }

    /// The demo app on each of `serials`, each device with its own state.
    pub fn demo_many(serials: &[&str]) -> FakeAdb {
        let path = crate::repo_root().join("trailmaps/demo/app.yaml");
        let sim = SimDevice::from_app_file(&path).expect("demo app.yaml loads");
        FakeAdb::many(serials.iter().map(|s| (s.to_string(), sim.clone())).collect())
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every device, in the order given.
    pub fn devices(&self) -> &[FakeDevice] {
        &self.devices
    }

    /// The device named `serial`.
    pub fn device(&self, serial: &str) -> &FakeDevice {
        self.devices
            .iter()
            .find(|d| d.shared.serial == serial)
            .expect("a device of this fake")
    }
}

impl FakeDevice {
    pub fn serial(&self) -> &str {
        &self.shared.serial
    }

    /// The most shell commands this device ever ran at once (1 when one client at a time drove it).
    pub fn most_at_once(&self) -> usize {
        self.shared.most_busy.load(Ordering::SeqCst)
    }

    pub fn phone(&self) -> MutexGuard<'_, Phone> {
        self.shared.phone.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device vanishes (closing the connection) when it receives a command starting with `prefix`.
    pub fn drop_on(&self, prefix: &str) {
        *self.shared.drop_on.lock().expect("lock") = Some(prefix.to_owned());
    }

    /// Each shell command takes `d` before it answers.
    pub fn set_delay(&self, d: Duration) {
        *self.shared.delay.lock().expect("lock") = d;
    }

    /// Each `uiautomator dump` takes `d` more before it answers.
    pub fn set_dump_delay(&self, d: Duration) {
        *self.shared.dump_delay.lock().expect("lock") = d;
    }

    pub fn is_gone(&self) -> bool {
        self.shared.gone.load(Ordering::SeqCst)
    }
}

impl Drop for FakeAdb {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect(self.addr);
    }
}

fn read_request(conn: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut len = [0u8; 4];
    match conn.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("x"), 16)
        .map_err(|_| std::io::Error::other("bad request length"))?;
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body)?;
    Ok(Some(String::from_utf8_lossy(&body).into_owned()))
}

fn okay_with(conn: &mut TcpStream, body: &str) -> std::io::Result<()> {
    conn.write_all(format!("OKAY{:04x}{body}", body.len()).as_bytes())
}

fn fail(conn: &mut TcpStream, msg: &str) -> std::io::Result<()> {
    conn.write_all(format!("FAIL{:04x}{msg}", msg.len()).as_bytes())
}

/// The device a request names: `host-serial:<serial>:...`, `host-transport-id:<id>:...`, or none.
fn addressed<'a>(req: &str, devices: &'a [Arc<Shared>]) -> Option<(Option<&'a Arc<Shared>>, String)> {
    if let Some(r) = req.strip_prefix("host-serial:") {
        let d = devices.iter().find(|d| r.starts_with(&format!("{}:", d.serial)))?;
        return Some((Some(d), format!("host:{}", &r[d.serial.len() + 1..])));
    }
    if let Some((id, what)) = req.strip_prefix("host-transport-id:").and_then(|r| r.split_once(':')) {
        let d = devices.iter().find(|d| d.transport_id.to_string() == id)?;
        return Some((Some(d), format!("host:{what}")));
    }
    if let Some(w) = req.strip_prefix("host-usb:").or(req.strip_prefix("host-local:")) {
        return Some((None, format!("host:{w}")));
    }
    Some((None, req.to_owned()))
}

fn serve(mut conn: TcpStream, devices: &[Arc<Shared>]) -> std::io::Result<()> {
    let mut bound: Option<&Arc<Shared>> = None;
    while let Some(req) = read_request(&mut conn)? {
        let Some((named, host)) = addressed(&req, devices) else {
            fail(&mut conn, "device not found")?;
            return Ok(());
        };
        let live: Vec<&Arc<Shared>> = devices.iter().filter(|d| !d.gone.load(Ordering::SeqCst)).collect();
        // The one device a request without a serial means (as the real server: only when there is one).
        let only = named.or(if devices.len() == 1 { devices.first() } else { None });
        // A host service answers once and the server closes the connection (the real client
        // waits for that close after `host:version`); only a transport request keeps it open.
        let answer = match host.as_str() {
            "host:version" => Some(format!("{SERVER_VERSION:04x}")),
            "host:features" | "host:host-features" => Some(FEATURES.to_owned()),
            "host:devices" => Some(live.iter().map(|d| format!("{}\tdevice\n", d.serial)).collect()),
            "host:devices-l" => Some(
                live.iter()
                    .map(|d| {
                        format!(
                            "{:<22} device product:sdk_gphone64_x86_64 model:Pixel_7 device:emu64xa transport_id:{}\n",
                            d.serial, d.transport_id
                        )
                    })
                    .collect(),
            ),
            "host:get-serialno" => only.map(|d| d.serial.clone()),
            "host:get-state" => only.map(|d| {
                if d.gone.load(Ordering::SeqCst) {
                    "offline"
                } else {
                    "device"
                }
                .to_owned()
            }),
            _ => None,
        };
        if let Some(body) = answer {
            okay_with(&mut conn, &body)?;
            return Ok(());
        }
        match host.as_str() {
            t if t.starts_with("host:transport") || t.starts_with("host:tport:") => {
                let wanted = t
                    .strip_prefix("host:transport:")
                    .or_else(|| t.strip_prefix("host:tport:serial:"));
                let device = match wanted {
                    Some(w) => devices.iter().find(|d| d.serial == w),
                    None if live.len() > 1 && named.is_none() => {
                        fail(&mut conn, "more than one device/emulator")?;
                        return Ok(());
                    }
                    None => named.or(live.first().copied()),
                };
                let Some(device) = device.filter(|d| !d.gone.load(Ordering::SeqCst)) else {
                    let who = wanted.unwrap_or("any");
                    fail(&mut conn, &format!("device '{who}' not found"))?;
                    return Ok(());
                };
                conn.write_all(b"OKAY")?;
                if t.starts_with("host:tport:") {
                    conn.write_all(&device.transport_id.to_le_bytes())?;
                }
                bound = Some(device);
            }
            h if h.starts_with("host:") => {
                fail(&mut conn, &format!("unknown host service '{h}'"))?;
                return Ok(());
            }
            service => match bound {
                Some(d) if service == "sync:" => return sync::serve(conn, d),
                Some(d) => return device_service(conn, d, service),
                None => {
                    fail(
                        &mut conn,
                        &format!("no device bound for '{service}': send host:transport first"),
                    )?;
                    return Ok(());
                }
            },
        }
    }
    Ok(())
}

/// Runs `shell:`, `shell,<args>:` or `exec:` and closes the connection, as adbd does.
fn device_service(mut conn: TcpStream, s: &Shared, service: &str) -> std::io::Result<()> {
    let (v2, cmd) = if let Some(c) = service.strip_prefix("exec:").or(service.strip_prefix("shell:")) {
        (false, c)
    } else if let Some(rest) = service.strip_prefix("shell,") {
        let (args, c) = rest.split_once(':').unwrap_or((rest, ""));
        (args.split(',').any(|a| a == "v2"), c)
    } else {
        return fail(&mut conn, &format!("unsupported service '{service}'"));
    };
    if cmd.is_empty() {
        return fail(&mut conn, "the fake device has no interactive shell");
    }
    conn.write_all(b"OKAY")?;
    // Busy from the command's start to its last byte (not while the client hangs up).
    let busy = s.busy.fetch_add(1, Ordering::SeqCst) + 1;
    s.most_busy.fetch_max(busy, Ordering::SeqCst);
    let answered = answer(&mut conn, s, v2, cmd);
    s.busy.fetch_sub(1, Ordering::SeqCst);
    if !answered? {
        return Ok(());
    }
    conn.shutdown(std::net::Shutdown::Write)?;
    // Read what the client still sends (a close-stdin packet) until it hangs up: closing with
    // unread bytes would reset the connection and could cost the client the end of the output.
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut sink = [0u8; 256];
    while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
    Ok(())
}

/// Runs the command and writes its output; `false` when the device vanished instead.
fn answer(conn: &mut TcpStream, s: &Shared, v2: bool, cmd: &str) -> std::io::Result<bool> {
    let mut delay = *s.delay.lock().expect("lock");
    if cmd.starts_with("uiautomator dump") {
        delay += *s.dump_delay.lock().expect("lock");
    }
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    let drop_now = s
        .drop_on
        .lock()
        .expect("lock")
        .as_deref()
        .is_some_and(|p| cmd.starts_with(p));
    if drop_now || s.gone.load(Ordering::SeqCst) {
        // The cable is pulled: the stream ends with no exit status.
        s.gone.store(true, Ordering::SeqCst);
        conn.shutdown(std::net::Shutdown::Both)?;
        return Ok(false);
    }
    let mut run = s.phone.lock().unwrap_or_else(|p| p.into_inner()).run(cmd);
    if v2 {
        packet(conn, 1, &run.stdout)?;
        packet(conn, 2, &run.stderr)?;
    } else {
        conn.write_all(&run.stdout)?;
        conn.write_all(&run.stderr)?;
    }
    conn.flush()?;
    if let Some(pid) = run.hold {
        match hold(s, pid) {
            Some(exit) => run.exit = exit,
            None => {
                conn.shutdown(std::net::Shutdown::Both)?;
                return Ok(false);
            }
        }
    }
    if v2 {
        packet(conn, 3, &[run.exit])?;
    }
    conn.flush()?;
    Ok(true)
}

/// Waits while process `pid` (a recording) runs; its exit status, or `None` when the device vanished.
fn hold(s: &Shared, pid: u32) -> Option<u8> {
    // A process in the background is not a client driving the phone.
    s.busy.fetch_sub(1, Ordering::SeqCst);
    let exit = loop {
        if s.gone.load(Ordering::SeqCst) {
            break None;
        }
        match s.phone.lock().unwrap_or_else(|p| p.into_inner()).recording(pid) {
            Ok(()) => std::thread::sleep(Duration::from_millis(10)),
            Err(exit) => break Some(exit),
        }
    };
    s.busy.fetch_add(1, Ordering::SeqCst);
    exit
}

fn packet(conn: &mut TcpStream, id: u8, data: &[u8]) -> std::io::Result<()> {
    if data.is_empty() && id != 3 {
        return Ok(());
    }
    conn.write_all(&[id])?;
    conn.write_all(&(data.len() as u32).to_le_bytes())?;
    conn.write_all(data)
}
