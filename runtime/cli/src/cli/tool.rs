//! `trailblaze tool`, `tools` and `snapshot`.

use anyhow::anyhow;
use clap::Args;
use serde_json::{Map, Value, json};
use trailblaze::Settings;
use trailblaze::internals::{Catalog, NotLlmVisible, ToolDescriptor};

use super::output::{err, out};
use super::{Cli, Failure, open_project};

#[derive(Args)]
pub struct ToolArgs {
    /// The tool's name (an LLM-visible tool; see `trailblaze tools`).
    pub name: String,
    /// Arguments as `key=value`. A value is taken as a string when the tool's schema says so,
    /// otherwise as JSON when it parses (`count=3`, `flag=true`, `sel={"a":1}`) and as a string when not.
    pub args: Vec<String>,
}

#[derive(Args)]
pub struct ToolsArgs {
    /// Also print what each tool's definition (name, description, schema) costs in tokens, with the
    /// o200k tokenizer, and the total sent with every LLM request.
    #[arg(long)]
    pub tokens: bool,
}

#[derive(Args)]
pub struct SnapshotArgs {}

pub fn run_tool(cli: &Cli, a: &ToolArgs) -> Result<(), Failure> {
    let project = open_project(cli)?;
    let id = project.trailmap_id(cli.trailmap.as_deref())?;
    let catalog = project.catalog(&id)?;
    for w in &catalog.warnings {
        tracing::warn!("{w}");
    }
    let tool = llm_tool(&catalog, &a.name)?;
    let args = parse_args(&a.args, &tool.input_schema)?;
    let device = project.sim_device(&id)?;
    let session = project.session(&id, device, Some(&cli.out), Settings::default())?;
    let result = session.call(&a.name, args);
    let steps = session.steps();
    let log = session.dir().map(|d| d.join("log.jsonl"));
    if cli.json {
        let out = json!({
            "ok": result.is_ok(),
            "result": result.as_ref().ok(),
            "error": result.as_ref().err().map(|e| e.to_string()),
            "steps": steps,
            "log": log,
            "transpiled": project.transpiler.transpile_count(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        if let Ok(v) = &result {
            out!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
        }
        err!("steps:");
        for s in &steps {
            let mark = match s.ok {
                Some(true) => "ok",
                Some(false) => "FAILED",
                None => "unfinished",
            };
            err!(
                "  {:>3} {}{} {} [{mark}, {:.1} ms]",
                s.seq,
                "  ".repeat(s.depth as usize),
                s.tool,
                s.args,
                s.millis
            );
        }
        if let Some(log) = log {
            err!("log: {}", log.display());
        }
    }
    result.map(|_| ()).map_err(|e| Failure::Failed(anyhow!(e)))
}

/// The named tool if the LLM may see it; otherwise the library's answer (hidden, or the nearest
/// LLM-visible names), with how to type when `inputText` was meant.
fn llm_tool<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a ToolDescriptor, Failure> {
    catalog.llm_tool(name).map(|t| t.as_ref()).map_err(|e| {
        let hint = match &e {
            NotLlmVisible::Hidden { .. } if name == "inputText" => {
                "; to type, run `trailblaze tool type text=... [ref=...]`"
            }
            NotLlmVisible::Hidden { .. } => " (see `trailblaze tools`)",
            NotLlmVisible::Unknown { .. } | NotLlmVisible::Broken { .. } => "",
        };
        Failure::Usage(anyhow!("{e}{hint}"))
    })
}

/// `key=value` pairs into an argument object, guided by the schema's property types.
fn parse_args(pairs: &[String], schema: &Value) -> Result<Value, Failure> {
    let mut map = Map::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Failure::Usage(anyhow!(
                "argument `{}` is not key=value",
                pair.split('=').next().unwrap_or("")
            )));
        };
        let wants_string = schema["properties"][k]["type"].as_str() == Some("string");
        let value = if wants_string {
            Value::String(v.to_string())
        } else {
            serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()))
        };
        map.insert(k.to_string(), value);
    }
    Ok(Value::Object(map))
}

pub fn list_tools(cli: &Cli, a: &ToolsArgs) -> Result<(), Failure> {
    let project = open_project(cli)?;
    let id = project.trailmap_id(cli.trailmap.as_deref())?;
    let catalog = project.catalog(&id)?;
    if a.tokens {
        return print_tokens(cli, &catalog);
    }
    if cli.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&catalog.tool_definitions()).unwrap_or_default()
        );
    } else {
        for t in catalog.tool_definitions() {
            let first = t.description.lines().next().unwrap_or("");
            out!("{:<20} {first}", t.name);
        }
    }
    Ok(())
}

pub fn snapshot(cli: &Cli, _a: &SnapshotArgs) -> Result<(), Failure> {
    let project = open_project(cli)?;
    let id = project.trailmap_id(cli.trailmap.as_deref())?;
    let device = project.sim_device(&id)?;
    let session = project.session(&id, device, None, Settings::default())?;
    let v = session
        .call("snapshot", json!({}))
        .map_err(|e| Failure::Failed(anyhow!(e)))?;
    if cli.json {
        out!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        out!("{}", v["text"].as_str().unwrap_or_default().trim_end_matches('\n'));
    }
    Ok(())
}

/// Each LLM-visible tool's definition as sent to the model, counted with the o200k tokenizer.
fn print_tokens(cli: &Cli, catalog: &Catalog) -> Result<(), Failure> {
    let bpe = tiktoken_rs::o200k_base().map_err(|e| Failure::Usage(anyhow!("the tokenizer did not load: {e}")))?;
    let mut rows: Vec<(String, usize)> = catalog
        .tool_definitions()
        .into_iter()
        .map(|def| {
            let text = serde_json::to_string(&def).unwrap_or_default();
            (def.name, bpe.encode_with_special_tokens(&text).len())
        })
        .collect();
    rows.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    let total: usize = rows.iter().map(|r| r.1).sum();
    if cli.json {
        let tools: Vec<Value> = rows.iter().map(|(n, c)| json!({ "name": n, "tokens": c })).collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tokenizer": "o200k_base", "tools": tools, "total": total }))
                .unwrap_or_default()
        );
    } else {
        for (name, count) in &rows {
            out!("{count:>6}  {name}");
        }
        out!("{total:>6}  total (o200k_base), sent with every LLM request");
    }
    Ok(())
}
