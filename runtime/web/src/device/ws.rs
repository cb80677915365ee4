//! The WebSocket transport, for `web:ws://HOST:PORT/...` (a browser that is already running). One
//! thread owns the socket and multiplexes both directions with poll(2): callers hand it messages
//! through a channel and wake it through a pipe, so a read never holds up a write.

use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use tungstenite::{Message, WebSocket};

use super::cdp::{Connection, Sink};

/// How long connecting and the WebSocket handshake may take.
const CONNECT: Duration = Duration::from_secs(10);

/// Connects to the browser at `endpoint`: a `ws://` URL of a browser target, or `ws://HOST:PORT` (no
/// path), whose browser URL is asked of its `/json/version`.
pub(crate) fn connect(endpoint: &str) -> Result<Arc<Connection>, String> {
    let rest = endpoint
        .strip_prefix("ws://")
        .ok_or_else(|| format!("`{endpoint}`: only ws:// endpoints are supported (wss:// needs TLS; use a tunnel)"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let url = if path == "/" {
        discover(authority)?
    } else {
        endpoint.to_string()
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("`{authority}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{authority}`: no address"))?;
    let stream =
        TcpStream::connect_timeout(&addr, CONNECT).map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let _ = stream.set_read_timeout(Some(CONNECT));
    let _ = stream.set_write_timeout(Some(CONNECT));
    let _ = stream.set_nodelay(true);
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(256 << 20))
        .max_frame_size(Some(256 << 20));
    let (ws, _) = tungstenite::client::client_with_config(url.as_str(), stream, Some(config))
        .map_err(|e| format!("WebSocket handshake with {authority} failed: {e}"))?;
    ws.get_ref().set_nonblocking(true).map_err(|e| e.to_string())?;
    let (wake_r, wake_w) = pipe()?;
    let (tx, rx) = channel::<Vec<u8>>();
    let sink = WsSink { tx, wake: wake_w };
    Ok(Connection::start(Box::new(sink), move |conn| {
        pump(ws, rx, wake_r, conn)
    }))
}

/// The browser's WebSocket URL from `http://HOST:PORT/json/version`.
fn discover(authority: &str) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(CONNECT))
        .build()
        .into();
    let body = agent
        .get(&format!("http://{authority}/json/version"))
        .call()
        .map_err(|e| format!("cannot ask {authority} for its browser endpoint: {e}"))?
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .map_err(|e| format!("{authority}/json/version: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| format!("{authority}/json/version: {e}"))?;
    v.get("webSocketDebuggerUrl")
        .and_then(|u| u.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{authority}/json/version names no webSocketDebuggerUrl"))
}

struct WsSink {
    tx: Sender<Vec<u8>>,
    wake: std::fs::File,
}

impl Sink for WsSink {
    fn send(&mut self, message: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        self.tx
            .send(message.to_vec())
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the socket thread ended"))?;
        match self.wake.write(&[1]) {
            Ok(_) => Ok(()),
            // A full pipe already holds a wake-up.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn pipe() -> Result<(std::fs::File, std::fs::File), String> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two new descriptors into the array we own.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) })
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock)
}

/// The socket's thread: writes what callers queued, reads and dispatches what the browser sent.
fn pump(mut ws: WebSocket<TcpStream>, rx: Receiver<Vec<u8>>, mut wake: std::fs::File, conn: Arc<Connection>) {
    use std::io::Read;
    let sock = ws.get_ref().as_raw_fd();
    let mut unflushed = false;
    let why = loop {
        let mut fds = [
            libc::pollfd {
                fd: sock,
                events: libc::POLLIN | if unflushed { libc::POLLOUT } else { 0 },
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll reads and writes only the two pollfd entries we own.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, 1000) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break format!("poll failed: {e}");
        }
        if conn.is_closed() {
            break "closed".to_string();
        }
        if fds[1].revents != 0 {
            let mut drain = [0u8; 256];
            while matches!(wake.read(&mut drain), Ok(n) if n > 0) {}
        }
        let mut failed = None;
        while let Ok(msg) = rx.try_recv() {
            let text = String::from_utf8_lossy(&msg).into_owned();
            match ws.write(Message::text(text)) {
                Ok(()) => unflushed = true,
                Err(e) if would_block(&e) => unflushed = true,
                Err(e) => {
                    failed = Some(format!("write failed: {e}"));
                    break;
                }
            }
        }
        if let Some(f) = failed {
            break f;
        }
        if unflushed {
            match ws.flush() {
                Ok(()) => unflushed = false,
                Err(e) if would_block(&e) => {}
                Err(e) => break format!("write failed: {e}"),
            }
        }
        if fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            let ended = loop {
                match ws.read() {
                    Ok(Message::Text(t)) => conn.dispatch(t.as_bytes()),
                    Ok(Message::Binary(b)) => conn.dispatch(&b),
                    Ok(Message::Close(_)) => break Some("the browser closed the WebSocket".to_string()),
                    Ok(_) => {}
                    Err(e) if would_block(&e) => break None,
                    Err(e) => break Some(format!("read failed: {e}")),
                }
            };
            if let Some(why) = ended {
                break why;
            }
        }
    };
    conn.close(&why);
}
