//! A fake Android device behind the real adb protocol: a server on 127.0.0.1 (port 0) speaking the
//! adb server's smart-socket protocol (`host:version`, `host:features`, `host:devices(-l)`, the
//! transport requests, `shell:`, `shell,v2,...:`, `exec:` and `sync:`), whose one device runs a simulated app
//! (see `phone`). It stops when the `FakeAdb` is dropped.
//!
//! Wire format: a request is 4 hex digits of length then the text; the answer is `OKAY` or `FAIL` +
//! 4 hex length + message. `host:` answers carry 4 hex length + body. After a transport request the
//! connection belongs to the device; its service's bytes then flow raw (shell v2 as packets: 1 byte
//! id, u32 LE length, data; 1 stdout, 2 stderr, 3 exit code).

pub mod extras;
mod phone;
mod png;
mod sh;
mod sync;
pub mod xml;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use trailblaze::device::sim::SimDevice;

pub use phone::{Phone, Sent, decode_base64};
pub use png::crc32;

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
}

pub struct FakeAdb {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl FakeAdb {
    /// Serves `sim` as device `serial`.
    pub fn start(serial: &str, sim: SimDevice) -> FakeAdb {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            phone: Mutex::new(Phone::new(sim)),
            serial: serial.to_owned(),
            gone: AtomicBool::new(false),
            drop_on: Mutex::new(None),
            delay: Mutex::new(Duration::ZERO),
            dump_delay: Mutex::new(Duration::ZERO),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
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
        FakeAdb { addr, shared, stop }
    }

    /// The demo app on a device named `serial`.
    pub fn demo(serial: &str) -> FakeAdb {
        let path = crate::repo_root().join("trailmaps/demo/app.yaml");
        FakeAdb::start(serial, SimDevice::from_app_file(&path).expect("demo app.yaml loads"))
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
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

fn serve(mut conn: TcpStream, s: &Shared) -> std::io::Result<()> {
    let mut bound = false;
    while let Some(req) = read_request(&mut conn)? {
        let gone = s.gone.load(Ordering::SeqCst);
        // `host-serial:<serial>:<what>` and friends address one device's host service.
        let host = req
            .strip_prefix("host-serial:")
            .and_then(|r| r.strip_prefix(&format!("{}:", s.serial)).map(|w| format!("host:{w}")))
            .or_else(|| {
                req.strip_prefix("host-transport-id:")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, w)| format!("host:{w}"))
            })
            .or_else(|| {
                req.strip_prefix("host-usb:")
                    .or(req.strip_prefix("host-local:"))
                    .map(|w| format!("host:{w}"))
            })
            .unwrap_or_else(|| req.clone());
        // A host service answers once and the server closes the connection (the real client
        // waits for that close after `host:version`); only a transport request keeps it open.
        let answer = match host.as_str() {
            "host:version" => Some(format!("{SERVER_VERSION:04x}")),
            "host:features" | "host:host-features" => Some(FEATURES.to_owned()),
            "host:devices" => Some(if gone {
                String::new()
            } else {
                format!("{}\tdevice\n", s.serial)
            }),
            "host:devices-l" => Some(if gone {
                String::new()
            } else {
                format!(
                    "{:<22} device product:sdk_gphone64_x86_64 model:Pixel_7 device:emu64xa transport_id:1\n",
                    s.serial
                )
            }),
            "host:get-serialno" => Some(s.serial.clone()),
            "host:get-state" => Some(if gone { "offline" } else { "device" }.to_owned()),
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
                if gone {
                    let who = wanted.unwrap_or(&s.serial);
                    fail(&mut conn, &format!("device '{who}' not found"))?;
                    return Ok(());
                }
                if wanted.is_some_and(|w| w != s.serial) {
                    fail(&mut conn, &format!("device '{}' not found", wanted.unwrap_or_default()))?;
                    return Ok(());
                }
                conn.write_all(b"OKAY")?;
                if t.starts_with("host:tport:") {
                    conn.write_all(&1u64.to_le_bytes())?; // the transport id
                }
                bound = true;
            }
            h if h.starts_with("host:") => {
                fail(&mut conn, &format!("unknown host service '{h}'"))?;
                return Ok(());
            }
            "sync:" if bound => return sync::serve(conn, s),
            service if bound => return device_service(conn, s, service),
            other => {
                fail(
                    &mut conn,
                    &format!("no device bound for '{other}': send host:transport first"),
                )?;
                return Ok(());
            }
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
        return conn.shutdown(std::net::Shutdown::Both);
    }
    let run = s.phone.lock().unwrap_or_else(|p| p.into_inner()).run(cmd);
    if v2 {
        packet(&mut conn, 1, &run.stdout)?;
        packet(&mut conn, 2, &run.stderr)?;
        packet(&mut conn, 3, &[run.exit])?;
    } else {
        conn.write_all(&run.stdout)?;
        conn.write_all(&run.stderr)?;
    }
    conn.flush()?;
    conn.shutdown(std::net::Shutdown::Write)?;
    // Read what the client still sends (a close-stdin packet) until it hangs up: closing with
    // unread bytes would reset the connection and could cost the client the end of the output.
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut sink = [0u8; 256];
    while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
    Ok(())
}

fn packet(conn: &mut TcpStream, id: u8, data: &[u8]) -> std::io::Result<()> {
    if data.is_empty() && id != 3 {
        return Ok(());
    }
    conn.write_all(&[id])?;
    conn.write_all(&(data.len() as u32).to_le_bytes())?;
    conn.write_all(data)
}
