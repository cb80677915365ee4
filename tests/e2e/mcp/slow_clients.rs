//! `mcp --http` under connections that never send a request, or only part of one: each is closed
//! after the header timeout, at most `--max-pending` of them wait at once (one more closes the
//! oldest), and a client with the token is served all along.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{HttpServer, MCP_TOKEN, cli, demo};

/// The server's `host:port`.
fn addr_of(server: &HttpServer) -> String {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// Whether the server closed `stream` (end of file or reset); `false` while it is still open.
fn closed(mut stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    stream
        .set_read_timeout(Some(Duration::from_millis(5)))
        .expect("timeout");
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return true,
            // A last word before it closes (a 408, say): read on to the end.
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return false,
            Err(_) => return true,
        }
    }
}

/// `n` connections that send nothing, or half a request's headers (every other one).
fn idle(addr: &str, n: usize) -> Vec<(TcpStream, Instant)> {
    (0..n)
        .map(|i| {
            let mut s = TcpStream::connect(addr).expect("connects");
            if i % 2 == 1 {
                s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bea").as_bytes())
                    .expect("half a request");
            }
            (s, Instant::now())
        })
        .collect()
}

/// A whole request with the token: the server answers `initialize` with 200.
fn served(addr: &str) -> bool {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {MCP_TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

#[test]
fn idle_and_half_sent_connections_are_closed_after_the_header_timeout_and_a_client_is_served() {
    let f = demo();
    let server = HttpServer::start_with(cli(&f).args(["mcp", "--http", "0", "--header-timeout", "2"]));
    let addr = addr_of(&server);
    let hanging = idle(&addr, 40);
    // While they hang, a client with the token is served.
    assert!(served(&addr), "{}", server.stderr());
    // Each is closed, and not before the timeout: the timeout closed it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut open: Vec<&(TcpStream, Instant)> = hanging.iter().collect();
    while !open.is_empty() && Instant::now() < deadline {
        let mut still = Vec::new();
        for c in open {
            if closed(&c.0) {
                let after = c.1.elapsed();
                assert!(
                    after >= Duration::from_millis(1900),
                    "closed after {after:?}, before the timeout"
                );
            } else {
                still.push(c);
            }
        }
        open = still;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(open.is_empty(), "{} connection(s) held past 120 s", open.len());
    // Control: a client is served after them as before.
    assert!(served(&addr));
}

#[test]
fn past_max_pending_the_oldest_waiting_connection_is_closed_and_a_client_is_still_served() {
    let f = demo();
    // A header timeout far past the test: any connection closed here was closed by the cap.
    let server =
        HttpServer::start_with(cli(&f).args(["mcp", "--http", "0", "--header-timeout", "3600", "--max-pending", "8"]));
    let addr = addr_of(&server);
    let hanging = idle(&addr, 200);
    let count_open = |conns: &[(TcpStream, Instant)]| conns.iter().filter(|c| !closed(&c.0)).count();
    let deadline = Instant::now() + Duration::from_secs(120);
    while count_open(&hanging) > 8 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(count_open(&hanging), 8, "at most --max-pending connections wait");
    // The newest wait; the oldest were closed.
    assert!(hanging[192..].iter().all(|c| !closed(&c.0)));
    // With the cap full of idle connections, a client with the token is served (its connection
    // closes the oldest waiting one) and, once trusted, counts no more: eight others still wait.
    assert!(served(&addr), "{}", server.stderr());
    assert_eq!(
        count_open(&hanging),
        7,
        "the client's connection took the oldest one's place"
    );
    assert!(served(&addr));
    assert_eq!(
        count_open(&hanging),
        7,
        "a trusted connection left its place: the next client found one free"
    );
}
