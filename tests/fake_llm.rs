//! A fake LLM provider on 127.0.0.1 (port 0) speaking OpenAI's chat completions
//! (`POST /v1/chat/completions`, `tool_calls` with JSON-string arguments) or Anthropic's messages
//! (`POST /v1/messages`, `tool_use` blocks), streaming off. Each test scripts it with a queue of
//! replies; it records every request it received (path, headers, body). It stops when dropped, and
//! by itself after [`LIFETIME`] whatever happens.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest a fake server lives, and so the longest a hanging reply hangs.
pub const LIFETIME: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    /// Every string in the body (message texts, tool results, ...), in order.
    pub fn texts(&self) -> Vec<String> {
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => out.push(s.clone()),
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                Value::Object(m) => m.values().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.json().get("messages").cloned().unwrap_or(Value::Null), &mut out);
        out
    }

    /// The ref of the last screen line that holds `needle` (`[c422] EditText hint="Email"` → `c422`).
    pub fn ref_of(&self, needle: &str) -> String {
        self.texts()
            .iter()
            .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
            .rfind(|l| l.trim_start().starts_with('[') && l.contains(needle))
            .and_then(|l| {
                let l = l.trim_start();
                l.get(1..l.find(']')?).map(str::to_string)
            })
            .unwrap_or_else(|| format!("no-ref-for-{needle}"))
    }
}

/// What the server answers next.
pub enum Reply {
    /// A model turn, in the server's wire format: text beside tool calls, and the usage it reports.
    Turn {
        text: Option<String>,
        calls: Vec<(String, Value)>,
        usage: (u64, u64),
    },
    /// A turn computed from the request (a ref read from the screen the request shows).
    Dynamic(Box<dyn Fn(&Request) -> Reply + Send>),
    /// A raw answer: status, extra headers, body.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// No answer at all, until the server stops.
    Hang,
}

/// One tool call.
pub fn call(name: &str, args: Value) -> Reply {
    calls(vec![(name, args)])
}

pub fn calls(list: Vec<(&str, Value)>) -> Reply {
    Reply::Turn {
        text: None,
        calls: list.into_iter().map(|(n, a)| (n.to_string(), a)).collect(),
        usage: (100, 20),
    }
}

/// A turn whose one call is computed from the request.
pub fn dynamic(f: impl Fn(&Request) -> (String, Value) + Send + 'static) -> Reply {
    Reply::Dynamic(Box::new(move |r| {
        let (name, args) = f(r);
        Reply::Turn {
            text: None,
            calls: vec![(name, args)],
            usage: (100, 20),
        }
    }))
}

/// `objectiveStatus` with `status`.
pub fn status(status: &str, explanation: &str) -> Reply {
    call(
        "objectiveStatus",
        json!({ "status": status, "explanation": explanation }),
    )
}

pub fn with_text(reply: Reply, text: &str) -> Reply {
    match reply {
        Reply::Turn { calls, usage, .. } => Reply::Turn {
            text: Some(text.to_string()),
            calls,
            usage,
        },
        other => other,
    }
}

pub fn with_usage(reply: Reply, input: u64, output: u64) -> Reply {
    match reply {
        Reply::Turn { text, calls, .. } => Reply::Turn {
            text,
            calls,
            usage: (input, output),
        },
        other => other,
    }
}

struct State {
    queue: VecDeque<Reply>,
    requests: Vec<Request>,
}

pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl FakeLlm {
    pub fn start(wire: Wire) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        listener.set_nonblocking(true).expect("nonblocking");
        let state = Arc::new(Mutex::new(State {
            queue: VecDeque::new(),
            requests: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        std::thread::spawn(move || {
            let born = Instant::now();
            let ids = Arc::new(AtomicU64::new(0));
            while !sp.load(Ordering::SeqCst) && born.elapsed() < LIFETIME {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (st, sp, ids) = (st.clone(), sp.clone(), ids.clone());
                        std::thread::spawn(move || serve(conn, wire, &st, &sp, &ids, born));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeLlm { addr, state, stop }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL to configure.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, reply: Reply) -> &FakeLlm {
        if let Ok(mut s) = self.state.lock() {
            s.queue.push_back(reply);
        }
        self
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().map(|s| s.requests.clone()).unwrap_or_default()
    }

    /// Replies scripted but never asked for.
    pub fn left(&self) -> usize {
        self.state.lock().map(|s| s.queue.len()).unwrap_or(0)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn read_request(conn: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len.min(64 << 20)];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn serve(mut conn: TcpStream, wire: Wire, state: &Mutex<State>, stop: &AtomicBool, ids: &AtomicU64, born: Instant) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(req) = read_request(&conn) else { return };
    let next = match state.lock() {
        Ok(mut s) => {
            s.requests.push(req.clone());
            s.queue.pop_front()
        }
        Err(_) => None,
    };
    let mut reply = next.unwrap_or(Reply::Raw {
        status: 500,
        headers: Vec::new(),
        body: json!({ "error": { "message": "the fake LLM's script ran out" } }).to_string(),
    });
    if let Reply::Dynamic(f) = reply {
        reply = f(&req);
    }
    let want = match wire {
        Wire::OpenAi => "/v1/chat/completions",
        Wire::Anthropic => "/v1/messages",
    };
    if req.path != want {
        reply = Reply::Raw {
            status: 404,
            headers: Vec::new(),
            body: json!({ "error": { "message": format!("no such endpoint {}", req.path) } }).to_string(),
        };
    }
    let (status, headers, body) = match reply {
        Reply::Hang => {
            while !stop.load(Ordering::SeqCst) && born.elapsed() < LIFETIME {
                std::thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        Reply::Raw { status, headers, body } => (status, headers, body),
        Reply::Turn { text, calls, usage } => {
            let n = ids.fetch_add(1, Ordering::SeqCst);
            (200, Vec::new(), render(wire, n, text, &calls, usage).to_string())
        }
        Reply::Dynamic(_) => (500, Vec::new(), "{}".into()),
    };
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
    let _ = conn.flush();
}

fn render(wire: Wire, n: u64, text: Option<String>, calls: &[(String, Value)], (input, output): (u64, u64)) -> Value {
    match wire {
        Wire::OpenAi => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    // A string argument is sent as it is: a test may send arguments that are not JSON.
                    let arguments = match args {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    json!({ "id": format!("call_{n}_{i}"), "type": "function",
                            "function": { "name": name, "arguments": arguments } })
                })
                .collect();
            let mut message = json!({ "role": "assistant", "content": text });
            if !tool_calls.is_empty() {
                message["tool_calls"] = Value::Array(tool_calls);
            }
            json!({
                "id": format!("chatcmpl-{n}"), "object": "chat.completion", "model": "fake",
                "choices": [{ "index": 0, "message": message,
                              "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" } }],
                "usage": { "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output }
            })
        }
        Wire::Anthropic => {
            let mut content: Vec<Value> = text.iter().map(|t| json!({ "type": "text", "text": t })).collect();
            content.extend(calls.iter().enumerate().map(|(i, (name, args))| {
                json!({ "type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": args })
            }));
            json!({
                "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": "fake",
                "content": content, "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                "usage": { "input_tokens": input, "output_tokens": output }
            })
        }
    }
}
