//! The web tests' own site (`tests/fixtures/web/`), served on 127.0.0.1 by a tiny server that stops
//! when dropped, and what every web test needs: Chromium (a test fails loudly without it:
//! `./test.sh` installs it), a shared browser, and a count of browser processes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use trailblaze::web::device::Browser;

/// The fixture site's folder.
pub fn site_dir() -> PathBuf {
    crate::repo_root().join("tests/fixtures/web")
}

/// A static server of the fixture site on 127.0.0.1; `/track...` answers 404 (a failed request).
pub struct Site {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Site {
    pub fn start() -> Site {
        Site::answering(serve)
    }

    /// A server on 127.0.0.1 that answers each connection with `answer` on a thread of its own,
    /// and stops when dropped.
    pub fn answering(answer: fn(TcpStream)) -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::Acquire) {
                    break;
                }
                if let Ok(c) = conn {
                    std::thread::spawn(move || answer(c));
                }
            }
        });
        Site { port, stop }
    }

    /// `http://127.0.0.1:PORT/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One request read off `stream` (bounded: 5 s, a 1 MiB body): its target (path and query) and
/// its body; `None` when it cannot be read.
pub fn read_request(stream: &TcpStream) -> Option<(String, Vec<u8>)> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    let _ = std::io::Read::read_exact(&mut reader, &mut body);
    Some((first.split_whitespace().nth(1).unwrap_or("/").to_string(), body))
}

fn serve(stream: TcpStream) {
    let Some((target, _)) = read_request(&stream) else {
        return;
    };
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let name = path.trim_start_matches('/');
    let file = site_dir().join(if name.is_empty() { "index.html" } else { name });
    let mut out = stream;
    let safe = !name.contains("..");
    match std::fs::read(&file).ok().filter(|_| safe) {
        Some(bytes) => {
            let kind = if name.ends_with(".html") || name.is_empty() {
                "text/html; charset=utf-8"
            } else {
                "text/plain"
            };
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = out.write_all(&bytes);
        }
        None => {
            let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    }
}

/// Chromium's path. A web test fails here, loudly, when there is none: `./test.sh` installs it.
pub fn require_chromium() -> PathBuf {
    match trailblaze::web::device::find_chromium() {
        Ok(p) => p,
        Err(e) => panic!(
            "the web tests need Chromium and found none ({e}); run ./test.sh, which installs Debian's `chromium`"
        ),
    }
}

/// One browser for the tests of this process; each test opens its own context in it.
pub fn shared_browser() -> Arc<Browser> {
    static BROWSER: OnceLock<Arc<Browser>> = OnceLock::new();
    BROWSER
        .get_or_init(|| {
            require_chromium();
            Browser::launch(false, (1280, 800)).expect("Chromium starts")
        })
        .clone()
}

/// Live (not zombie) processes whose environment holds `mark` (`NAME=value`): a browser and its
/// helpers inherit the environment of the trailblaze that started them.
pub fn processes_marked(mark: &str) -> Vec<u32> {
    live_processes(|pid| {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == mark.as_bytes()))
    })
}

/// Live processes in process group `pgid`.
pub fn processes_in_group(pgid: u32) -> Vec<u32> {
    live_processes(|pid| stat(pid).is_some_and(|(_, group)| group == pgid))
}

/// (state, process group) of a process, from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(char, u32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields follow the last `)`.
    let rest = &s[s.rfind(')')? + 2..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    let pgrp = f.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn live_processes(pick: impl Fn(u32) -> bool) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X'))
        .filter(|&pid| pick(pid))
        .collect()
}

/// Waits up to `within` for `count()` to reach zero; the last count.
pub fn wait_for_none(within: Duration, count: impl Fn() -> usize) -> usize {
    let until = std::time::Instant::now() + within;
    loop {
        let n = count();
        if n == 0 || std::time::Instant::now() >= until {
            return n;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
