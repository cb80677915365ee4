//! The trail's workspace served on 127.0.0.1, for relative URLs (`web_navigate {url:
//! sample-app/index.html}`). The browser never opens `file://` pages: a page served from here can
//! reach no file outside the workspace (each path is resolved and must stay inside it, symbolic
//! links included), and an http page cannot open `file://` URLs at all.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest file served.
const MAX_FILE: u64 = 64 << 20;

pub struct Served {
    pub root: PathBuf,
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Served {
    pub fn start(root: &Path) -> std::io::Result<Served> {
        let root = std::fs::canonicalize(root)?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (root.clone(), stop.clone());
        std::thread::Builder::new()
            .name("trailblaze-web-files".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if s.load(Ordering::Acquire) {
                        break;
                    }
                    if let Ok(c) = conn {
                        let r = r.clone();
                        let _ = std::thread::Builder::new().spawn(move || serve(c, &r));
                    }
                }
            })?;
        Ok(Served { root, port, stop })
    }

    /// The URL of `file` (an absolute path inside the root), or `None` when it lies outside.
    pub fn url_of(&self, file: &Path) -> Option<String> {
        let rel = file.strip_prefix(&self.root).ok()?;
        let mut url = format!("http://127.0.0.1:{}", self.port);
        for part in rel.components() {
            url.push('/');
            url.push_str(&percent(&part.as_os_str().to_string_lossy()));
        }
        if rel.as_os_str().is_empty() {
            url.push('/');
        }
        Some(url)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&([127, 0, 0, 1], self.port).into(), Duration::from_millis(200));
    }
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

/// The file a request path names, if it lies inside `root` once every link is resolved.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let path = path.split(['?', '#']).next()?;
    let decoded = unpercent(path)?;
    let mut file = root.to_path_buf();
    for part in decoded.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => file.push(p),
        }
    }
    let real = std::fs::canonicalize(&file).ok()?;
    let real = if real.is_dir() { real.join("index.html") } else { real };
    real.starts_with(root).then_some(real)
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

fn serve(stream: TcpStream, root: &Path) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let Ok(clone) = stream.try_clone() else { return };
    let mut reader = BufReader::new(clone).take_lines();
    let Some(request) = reader.next() else { return };
    // Headers are read and ignored (up to a bound).
    for _ in 0..100 {
        match reader.next() {
            Some(l) if !l.is_empty() => continue,
            _ => break,
        }
    }
    let mut parts = request.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut out = stream;
    let file = (method == "GET" || method == "HEAD")
        .then(|| resolve(root, path))
        .flatten();
    let body = file
        .as_ref()
        .filter(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE))
        .and_then(|f| std::fs::read(f).ok());
    let _ = match (body, file) {
        (Some(body), Some(f)) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                mime(&f),
                body.len()
            );
            out.write_all(head.as_bytes())
                .and_then(|_| if method == "HEAD" { Ok(()) } else { out.write_all(&body) })
        }
        _ => out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"),
    };
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
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_the_root_are_served() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("site")).expect("dirs");
        std::fs::write(root.join("site/a b.html"), "hi").expect("file");
        std::fs::write(dir.path().join("secret.txt"), "no").expect("file");
        let root = std::fs::canonicalize(&root).expect("root");
        assert!(resolve(&root, "/site/a%20b.html").is_some());
        assert!(resolve(&root, "/site/a%20b.html?x=1#y").is_some());
        // Control and the rule: `..`, encoded or not, and a link out of the root are refused.
        assert!(resolve(&root, "/../secret.txt").is_none());
        assert!(resolve(&root, "/site/%2e%2e/%2e%2e/secret.txt").is_none());
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("site/link.txt")).expect("link");
        assert!(resolve(&root, "/site/link.txt").is_none());
        let served = Served::start(&root).expect("server");
        assert!(
            served
                .url_of(&root.join("site/a b.html"))
                .is_some_and(|u| u.ends_with("/site/a%20b.html"))
        );
        assert!(served.url_of(&dir.path().join("secret.txt")).is_none());
    }
}
