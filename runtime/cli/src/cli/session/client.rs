//! Commands acting in a running session: what they send its process and how they print the reply
//! (as they print their own results on a fresh device), and [`Remote`], the session behind `shell`
//! and `mcp` when they join one.

use anyhow::anyhow;
use serde_json::{Value, json};

use super::Joined;
use super::wire::Request;
use crate::cli::Failure;
use crate::cli::live::{Backend, Reply};
use crate::cli::output::{err, out};

/// A reply's failure as the command's exit: 2 for a request that was wrong or a device that
/// failed, 1 for a tool that failed.
fn failure(v: &Value) -> Failure {
    let text = v["error"].as_str().unwrap_or("failed").to_string();
    if v["usage"] == true {
        Failure::Usage(anyhow!(text))
    } else {
        Failure::Failed(anyhow!(text))
    }
}

/// `trailblaze tool NAME key=value ... [--step TEXT]` in the session.
pub fn tool(j: &Joined, name: &str, pairs: &[String], step: Option<&str>, json_out: bool) -> Result<(), Failure> {
    let v = j.ask(&Request::Tool {
        name: name.into(),
        pairs: pairs.to_vec(),
        step: step.map(str::to_string),
    })?;
    if json_out {
        let shown = json!({
            "ok": v["ok"], "result": v["result"], "error": v["error"], "steps": v["steps"],
            "log": v["log"], "session": j.meta.name,
        });
        crate::cli::output::out_json!(&shown);
    } else {
        if v["ok"] == true {
            crate::cli::output::out_json!(&v["result"]);
        }
        print_steps(&v);
    }
    if v["ok"] == true { Ok(()) } else { Err(failure(&v)) }
}

/// The steps and log of a reply, on stderr, as `tool` prints them on a fresh device.
fn print_steps(v: &Value) {
    let steps = v["steps"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !steps.is_empty() {
        err!("steps:");
    }
    for s in steps {
        let mark = match s["ok"].as_bool() {
            Some(true) => "ok",
            Some(false) => "FAILED",
            None => "unfinished",
        };
        err!(
            "  {:>3} {}{} {} [{mark}, {:.1} ms]",
            s["seq"].as_u64().unwrap_or(0),
            "  ".repeat(s["depth"].as_u64().unwrap_or(0) as usize),
            s["tool"].as_str().unwrap_or(""),
            s["args"],
            s["millis"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(log) = v["log"].as_str() {
        err!("log: {log}");
    }
}

/// `trailblaze snapshot` of the session's screen: `pairs` are the `snapshot` tool's arguments
/// (`--bounds`, `--offscreen`, `--all`); `url` is opened first (`openUrl`, on the web only); the
/// picture is written by the session's process at `shot` (absolute).
pub fn snapshot(
    j: &Joined,
    json_out: bool,
    pairs: &[String],
    url: Option<&str>,
    shot: Option<&std::path::Path>,
) -> Result<(), Failure> {
    if let Some(url) = url {
        if !j.meta.device.starts_with("web") {
            return Err(crate::cli::snapshot_out::url_needs_web(&j.meta.device));
        }
        let v = j.ask(&Request::Tool {
            name: "openUrl".into(),
            pairs: vec![format!("url={url}")],
            step: None,
        })?;
        if v["ok"] != true {
            return Err(failure(&v));
        }
    }
    let v = j.ask(&Request::Tool {
        name: "snapshot".into(),
        pairs: pairs.to_vec(),
        step: None,
    })?;
    if v["ok"] != true {
        return Err(failure(&v));
    }
    if let Some(path) = shot {
        let s = j.ask(&Request::Screenshot {
            path: path.to_path_buf(),
        })?;
        if s["ok"] != true {
            return Err(failure(&s));
        }
    }
    crate::cli::snapshot_out::print_snapshot(&v["result"], json_out, shot);
    Ok(())
}

/// `step`, `ask`, `verify` with the session's LLM: the reply's text as each prints its own.
pub fn words(j: &Joined, kind: &str, text: &str, json_out: bool) -> Result<(), Failure> {
    let v = j.ask(&Request::Words {
        kind: kind.into(),
        text: text.into(),
    })?;
    if v["ok"] != true {
        return Err(failure(&v));
    }
    let said = v["text"].as_str().unwrap_or_default();
    if kind == "verify" {
        let verdict: Value = serde_json::from_str(said).unwrap_or(Value::Null);
        let holds = verdict["holds"] == true;
        let why = verdict["explanation"].as_str().unwrap_or_default();
        if json_out {
            crate::cli::output::out_json!(&json!({ "holds": holds, "explanation": why }));
        } else if holds {
            out!("✓ holds: {why}");
        } else {
            out!("✗ does not hold: {why}");
        }
        return if holds { Ok(()) } else { Err(Failure::Reported(1)) };
    }
    if json_out {
        let key = if kind == "ask" { "answer" } else { "text" };
        crate::cli::output::out_json!(&json!({ key: said }));
    } else {
        out!("{}", said.trim_end());
    }
    Ok(())
}

/// A running session as `shell` and `mcp` drive it: each call a request to its process.
pub struct Remote {
    joined: Joined,
}

impl Remote {
    pub fn new(joined: Joined) -> Remote {
        Remote { joined }
    }

    /// `req`'s reply as a shell line or an MCP result: `ok` gives `shown(reply)`, else its error.
    fn reply(&self, req: &Request, shown: impl FnOnce(&Value) -> String) -> Reply {
        match self.joined.ask(req) {
            Ok(v) if v["ok"] == true => Reply {
                text: shown(&v),
                is_error: false,
            },
            Ok(v) => Reply {
                text: v["error"]
                    .as_str()
                    .or(v["text"].as_str())
                    .unwrap_or("failed")
                    .to_string(),
                is_error: true,
            },
            Err(Failure::Usage(e) | Failure::Failed(e)) => Reply {
                text: e.to_string(),
                is_error: true,
            },
            Err(Failure::Reported(_)) => Reply {
                text: "failed".into(),
                is_error: true,
            },
        }
    }
}

/// A reply's `text`.
fn text_of(v: &Value) -> String {
    v["text"].as_str().unwrap_or_default().to_string()
}

impl Backend for Remote {
    fn call(&mut self, name: &str, args: Value) -> Reply {
        self.reply(
            &Request::Call {
                name: name.into(),
                args,
            },
            text_of,
        )
    }

    fn call_pairs(&mut self, name: &str, pairs: &[String]) -> Reply {
        let req = Request::Tool {
            name: name.into(),
            pairs: pairs.to_vec(),
            step: None,
        };
        // As `Live::call` shows a result: a snapshot's text, anything else as JSON.
        self.reply(&req, |v| {
            if name == "snapshot" {
                v["result"]["text"].as_str().unwrap_or_default().trim_end().to_string()
            } else {
                serde_json::to_string_pretty(&v["result"]).unwrap_or_default()
            }
        })
    }

    fn tools(&mut self) -> Vec<(String, String, Value)> {
        let Ok(v) = self.joined.ask(&Request::Offered) else {
            return Vec::new();
        };
        v["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["name"].as_str().unwrap_or_default().to_string(),
                    t["description"].as_str().unwrap_or_default().to_string(),
                    t["inputSchema"].clone(),
                )
            })
            .collect()
    }

    fn offer_may_change(&mut self, name: &str) -> bool {
        self.joined
            .ask(&Request::OfferMayChange { name: name.into() })
            .map_or(true, |v| v["value"] != false)
    }

    fn steps_text(&mut self) -> String {
        self.reply(&Request::Steps, text_of).text
    }

    fn canceller(&self) -> Box<dyn Fn() + Send + Sync> {
        let (name, socket, log) = (
            self.joined.meta.name.clone(),
            self.joined.files.socket.clone(),
            self.joined.files.log.clone(),
        );
        Box::new(move || {
            let _ = super::wire::ask(&name, &socket, &log, &Request::Cancel);
        })
    }
}
