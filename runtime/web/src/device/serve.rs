//! The trail's pages served on 127.0.0.1, for relative URLs (`web_navigate {url: site/index.html}`).
//! The browser never opens `file://` pages. What is served is only what a page may load:
//!
//! - the **site folders**: the folder of each page the trail opened (its files and subfolders), not
//!   the rest of the workspace; a URL's path is the file's path in the workspace, so `../` from a site
//!   folder names a file outside it, which is refused;
//! - never a secrets file (`*.secrets`, or the run's `--secrets` file by whatever name) or a dotfile
//!   (`.env`, `.git/...`), wherever it lies, symbolic links resolved first (a link may not reach out
//!   of a site folder or into a dotfile);
//! - only to a request whose `Host` is this server's (`127.0.0.1:PORT` or `localhost:PORT`: a
//!   DNS-rebinding page sends its own name) and whose path starts with the server's random token
//!   (another local user can connect to the port, but cannot guess the token).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::cdp::lock;

/// The largest file served.
const MAX_FILE: u64 = 64 << 20;
/// Connections answered at once; more are closed unanswered (a page loads a handful at a time).
const MAX_CONNECTIONS: usize = 64;

/// Why a file is not served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotServed {
    #[error("it lies outside the trail's workspace")]
    Outside,
    #[error(
        "it is a secrets file (`*.secrets`, or the run's `--secrets` file) or a dotfile, or lies in a \
         dot-folder: those are never served"
    )]
    Private,
}

pub struct Served {
    rules: Arc<Rules>,
    stop: Arc<AtomicBool>,
}

/// What the request handler reads: the server's own, shared with the accept loop.
struct Rules {
    /// The workspace: URL paths are paths in it.
    root: PathBuf,
    port: u16,
    /// The first segment of every served path (random hex, per server).
    token: String,
    /// The site folders (canonical, inside `root`): only files in one of them are served.
    sites: Mutex<Vec<PathBuf>>,
    /// Files never served whatever their name or path, by identity (device, inode): a hard link
    /// to one under another name is the same file.
    never: Vec<(u64, u64)>,
}

impl Served {
    /// A server for the pages of workspace `root`; it serves nothing until [`Served::url_of`] adds
    /// a site folder, and never one of the files `never` (a file that does not exist is skipped).
    pub fn start(root: &Path, never: &[PathBuf]) -> std::io::Result<Served> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let rules = Arc::new(Rules {
            root: std::fs::canonicalize(root)?,
            port: listener.local_addr()?.port(),
            token: trailblaze_core::secret::token::random_hex(16)?,
            sites: Mutex::default(),
            never: never
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| identity(&m))
                .collect(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, r) = (stop.clone(), rules.clone());
        std::thread::Builder::new()
            .name("trailblaze-web-files".into())
            .spawn(move || {
                let live = Arc::new(AtomicUsize::new(0));
                for conn in listener.incoming() {
                    if s.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(c) = conn else { continue };
                    // Held by the connection's thread; given back when it ends (or never starts).
                    let slot = Slot(live.clone());
                    if live.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                        continue;
                    }
                    let rules = r.clone();
                    let _ = std::thread::Builder::new().spawn(move || {
                        let _slot = slot;
                        serve(c, &rules);
                    });
                }
            })?;
        Ok(Served { rules, stop })
    }

    /// The URL of page `file` (canonical), whose folder becomes a site folder; refused when it lies
    /// outside the workspace or is private.
    pub fn url_of(&self, file: &Path) -> Result<String, NotServed> {
        let r = &self.rules;
        let rel = file.strip_prefix(&r.root).map_err(|_| NotServed::Outside)?;
        let meta = std::fs::metadata(file).ok();
        if is_private(rel) || meta.as_ref().is_some_and(|m| r.is_never(m)) {
            return Err(NotServed::Private);
        }
        let dir = meta.is_some_and(|m| m.is_dir());
        let site = if dir {
            file.to_path_buf()
        } else {
            file.parent().unwrap_or(&r.root).to_path_buf()
        };
        {
            let mut sites = lock(&r.sites);
            if !sites.iter().any(|s| site.starts_with(s)) {
                sites.push(site);
            }
        }
        let mut url = format!("http://127.0.0.1:{}/{}", r.port, r.token);
        for part in rel.components() {
            url.push('/');
            url.push_str(&percent(&part.as_os_str().to_string_lossy()));
        }
        if rel.as_os_str().is_empty() || dir {
            url.push('/');
        }
        Ok(url)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&([127, 0, 0, 1], self.rules.port).into(), Duration::from_millis(200));
    }
}

/// A live connection's place under [`MAX_CONNECTIONS`].
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A file's identity: the same for every path and hard link that reaches it.
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// A name never served: a dotfile or dot-folder (`.env`, `.env.local`, `.git`) or a secrets file.
fn is_private_name(name: &str) -> bool {
    name.starts_with('.') || name.to_ascii_lowercase().ends_with(".secrets")
}

/// Whether any part of `rel` (a path inside the workspace) is private.
fn is_private(rel: &Path) -> bool {
    rel.components().any(|c| match c {
        Component::Normal(n) => is_private_name(&n.to_string_lossy()),
        _ => false,
    })
}

fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unpercent(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a request gets.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    File(PathBuf),
    /// The `Host` is not this server's.
    Forbidden,
    NotFound,
    NotAllowed,
}

impl Rules {
    /// The answer to a request line and its headers.
    fn answer(&self, method: &str, target: &str, headers: &[String]) -> Answer {
        if !self.host_ok(headers) {
            return Answer::Forbidden;
        }
        if method != "GET" && method != "HEAD" {
            return Answer::NotAllowed;
        }
        self.resolve(target).map_or(Answer::NotFound, Answer::File)
    }

    /// Exactly one `Host` header, naming this server by its loopback address or `localhost`.
    fn host_ok(&self, headers: &[String]) -> bool {
        let mut hosts = headers.iter().filter_map(|h| {
            let (name, value) = h.split_once(':')?;
            name.trim().eq_ignore_ascii_case("host").then(|| value.trim())
        });
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return false;
        };
        let port = self.port.to_string();
        host.rsplit_once(':')
            .is_some_and(|(name, p)| p == port && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost")))
    }

    /// The file a request path names: after the token, a path in the workspace that lies in a site
    /// folder and is not private, once every link is resolved.
    fn resolve(&self, target: &str) -> Option<PathBuf> {
        let path = target.split(['?', '#']).next()?;
        let rest = path.strip_prefix('/')?;
        let (token, rest) = rest.split_once('/').unwrap_or((rest, ""));
        if !trailblaze_core::secret::token::same(token.as_bytes(), self.token.as_bytes()) {
            return None;
        }
        let decoded = unpercent(rest)?;
        let mut file = self.root.clone();
        for part in decoded.split('/') {
            match part {
                "" | "." => {}
                ".." => return None,
                p if p.contains('\0') || is_private_name(p) => return None,
                p => file.push(p),
            }
        }
        let mut real = std::fs::canonicalize(&file).ok()?;
        if real.is_dir() {
            // The folder's page, itself resolved: a link named index.html is checked like any file.
            real = std::fs::canonicalize(real.join("index.html")).ok()?;
        }
        let rel = real.strip_prefix(&self.root).ok()?;
        let in_site = lock(&self.sites).iter().any(|s| real.starts_with(s));
        (in_site && !is_private(rel)).then_some(real)
    }

    /// Whether the file `m` describes is one never served.
    fn is_never(&self, m: &std::fs::Metadata) -> bool {
        self.never.contains(&identity(m))
    }
}

fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn serve(stream: TcpStream, rules: &Rules) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let Ok(clone) = stream.try_clone() else { return };
    let mut reader = BufReader::new(clone).take_lines();
    let Some(request) = reader.next() else { return };
    let mut headers = Vec::new();
    for _ in 0..100 {
        match reader.next() {
            Some(l) if !l.is_empty() => headers.push(l),
            _ => break,
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut out = stream;
    let answer = match rules.answer(method, target, &headers) {
        Answer::File(f) => {
            // The file's kind, size and identity are asked of the open file: what is read is what
            // was checked, and a FIFO put in its place does not hold the connection.
            let body = trailblaze_core::files::open_bounded(&f, MAX_FILE)
                .ok()
                .filter(|(_, m)| !rules.is_never(m))
                .and_then(|(file, m)| trailblaze_core::files::read_bounded(file, &m, MAX_FILE).ok());
            match body {
                Some(body) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                        mime(&f),
                        body.len()
                    );
                    let _ = out
                        .write_all(head.as_bytes())
                        .and_then(|_| if method == "HEAD" { Ok(()) } else { out.write_all(&body) });
                    return;
                }
                None => Answer::NotFound,
            }
        }
        other => other,
    };
    let status: &[u8] = match answer {
        Answer::Forbidden => b"HTTP/1.1 403 Forbidden\r\nContent-Length: 9\r\nConnection: close\r\n\r\nforbidden",
        Answer::NotAllowed => {
            b"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Length: 11\r\nConnection: close\r\n\r\nnot allowed"
        }
        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
    };
    let _ = out.write_all(status);
}

/// Lines of an HTTP request head, each at most 8 KiB, without their line ends.
trait TakeLines {
    fn take_lines(self) -> Box<dyn Iterator<Item = String>>;
}

impl<R: BufRead + 'static> TakeLines for R {
    fn take_lines(self) -> Box<dyn Iterator<Item = String>> {
        Box::new(
            std::io::Read::take(self, 64 << 10)
                .lines()
                .map_while(Result::ok)
                .map(|l| {
                    let l = l.trim_end_matches('\r');
                    l.chars().take(8192).collect()
                }),
        )
    }
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
