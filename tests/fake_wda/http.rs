//! Just enough HTTP/1.1 for a WebDriver client: requests read one after another on a kept-alive
//! connection, bodies by Content-Length, JSON answers with their length.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

pub struct Incoming {
    pub method: String,
    /// The path without its query.
    pub path: String,
    pub query: String,
    pub body: String,
    /// The client asked to close the connection after the answer.
    pub close: bool,
}

/// The next request, or `None` when the client hung up between requests.
pub fn read(conn: &mut BufReader<TcpStream>) -> std::io::Result<Option<Incoming>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        if conn.read_until(b'\n', &mut line)? == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        if line == b"\r\n" || line == b"\n" {
            if head.is_empty() {
                continue; // a stray blank line before a request is allowed (RFC 9112 §2.2)
            }
            break;
        }
        head.push(String::from_utf8_lossy(&line).trim_end().to_owned());
        if head.iter().map(String::len).sum::<usize>() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
    }
    let mut words = head[0].split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let header = |name: &str| {
        head[1..].iter().find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    if header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        conn.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let len: usize = header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    if len > MAX_BODY {
        return Err(std::io::Error::other("request body too large"));
    }
    let mut body = vec![0; len];
    conn.read_exact(&mut body)?;
    Ok(Some(Incoming {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
        close: header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")),
    }))
}

pub fn write(conn: &mut TcpStream, status: u16, body: &str, close: bool) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    };
    // One write: a head and a body written apart would wait out Nagle and a delayed ACK (40 ms).
    let mut answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    );
    answer.push_str(body);
    conn.write_all(answer.as_bytes())?;
    conn.flush()
}

/// The value of `name` in a query string (`scope=AppiumAUT&excluded_attributes=a,b`), decoded.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = || {
            std::str::from_utf8(b.get(i + 1..i + 3)?)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        };
        match (b[i], hex()) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
