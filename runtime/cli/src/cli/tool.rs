//! `trailblaze tool`, `tools` and `snapshot`.

use anyhow::anyhow;
use clap::Args;
use serde_json::{Value, json};
use trailblaze::CallError;
use trailblaze::Catalog;
use trailblaze::tools::ToolDescriptor;

use super::call_args::{llm_tool, parse_args};
use super::device::DeviceArgs;
use super::output::{err, out};
use super::snapshot_out::{print_snapshot, screenshot_mime, url_needs_web, write_screenshot};
use super::{Cli, Failure, MapArg, SecretsArg, SessionArgs, open_project, out_dir, warn_all};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze tool tap ref=c422\n  trailblaze tool type text=hello\n  trailblaze tool signIn account=demo --json"
)]
pub struct ToolArgs {
    /// The tool's name (an LLM-visible tool; see `trailblaze tools`).
    pub name: String,
    /// Arguments as `key=value`. A value is taken as a string when the tool's schema says so,
    /// otherwise as JSON when it parses (`count=3`, `flag=true`, `sel={"a":1}`) and as a string when not.
    pub args: Vec<String>,
    /// Print the result, the error and the steps as JSON.
    #[arg(long)]
    pub json: bool,
    /// In a session: file the call under a step with this text in its recording (calls given the
    /// same text in a row form one step).
    #[arg(long, short = 's', value_name = "TEXT")]
    pub step: Option<String>,
    #[command(flatten)]
    pub join: super::session::JoinArg,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze tools\n  trailblaze tools tap          one tool in full, hidden ones too\n  trailblaze tools --tokens     what the definitions cost per LLM request\n  trailblaze tools --tokens --agent   the same as `run --agent` sends them, and its first request"
)]
pub struct ToolsArgs {
    /// Show this tool in full: its description and arguments (LLM-visible or not).
    pub name: Option<String>,
    /// Also print what each tool's definition (name, description, schema) costs in tokens, with the
    /// o200k tokenizer, and the total sent with every LLM request.
    #[arg(long)]
    pub tokens: bool,
    /// With --tokens: count the definitions as the agent sends them (minimized schemas, see
    /// docs/agent.md), and the agent's whole first request for one step on the start screen.
    #[arg(long, requires = "tokens")]
    pub agent: bool,
    /// The definitions as JSON (what an LLM is sent).
    #[arg(long)]
    pub json: bool,
    /// Every tool the trailmap's trails and scripts can call, hidden ones and other platforms'
    /// included, each with its arguments and flags.
    #[arg(long, conflicts_with_all = ["name", "tokens"])]
    pub all: bool,
    /// The toolsets: which are active when a session starts, and their tools (`setActiveToolSets`
    /// changes the choice within a session).
    #[arg(long, conflicts_with_all = ["name", "tokens", "all"])]
    pub toolsets: bool,
    #[command(flatten)]
    pub map: MapArg,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  trailblaze snapshot                      the simulated app's first screen, one line per element\n  trailblaze snapshot --json               the same as a tree\n  trailblaze snapshot --device android     the phone's screen (`trailblaze devices` lists them)\n  trailblaze snapshot --device web         a headless Chromium's page\n  trailblaze snapshot --bounds --offscreen  each node's {x,y,w,h}, and the nodes scrolled out of view\n  trailblaze snapshot --all                every node, layout containers included\n  trailblaze snapshot --screenshot s.svg   also the screen's picture (the simulator's is SVG)\n  trailblaze snapshot --device web --url https://example.com   open the page, then snapshot it"
)]
pub struct SnapshotArgs {
    /// The snapshot as JSON.
    #[arg(long)]
    pub json: bool,
    /// Each line also gives the node's bounds, `{x,y,w,h}` in pixels.
    #[arg(long)]
    pub bounds: bool,
    /// Also the nodes outside the visible screen (scrolling reaches them), each marked `offscreen`.
    #[arg(long)]
    pub offscreen: bool,
    /// Every node, static labels and layout containers included (the tree
    /// `requestDetailedViewHierarchy` lists).
    #[arg(long)]
    pub all: bool,
    /// Also write the screen's picture to FILE, in the format the device gives: `.png` (Android,
    /// iOS, the web), `.jpg`/`.jpeg` or `.svg` (the simulator); another extension is refused.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<std::path::PathBuf>,
    /// On the web (`--device web`): open this page first, then snapshot it.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    #[command(flatten)]
    pub join: super::session::JoinArg,
    #[command(flatten)]
    pub map: MapArg,
    #[command(flatten)]
    pub secrets: SecretsArg,
    #[command(flatten)]
    pub device: DeviceArgs,
}

pub fn run_tool(cli: &Cli, a: &ToolArgs) -> Result<(), Failure> {
    // In a session, nothing is loaded here: the session's process reads the arguments.
    if let Some(j) = super::session::join(&a.join, !a.session.device.device.is_empty())? {
        return super::session::client::tool(&j, &a.name, &a.args, a.step.as_deref(), a.json);
    }
    if a.step.is_some() {
        return Err(super::usage_help(
            "--step files a call under a step of a session's recording: there is no session here",
            "start one with `trailblaze session start`, then pass --session NAME",
        ));
    }
    precompile_unless_builtin(a.name.clone());
    let (project, located) = open_project(cli, Some(&a.session.secrets))?;
    let spec = a.session.device.spec()?;
    let id = project.trailmap_for(a.map.trailmap.as_deref(), &spec)?;
    let catalog = project.catalog(&id)?;
    warn_all(&catalog.warnings);
    let tool = llm_tool(&catalog, &a.name)?;
    let settings = a.session.limits.settings();
    // Its engine is made while the arguments are read and the device is made.
    if catalog.may_run_scripts(&a.name) {
        project.prepare_session(&id, &settings)?;
    }
    let args = parse_args(&a.args, &tool.input_schema)?;
    let device = project.device(&id, &spec)?;
    let out = out_dir(&located, &a.session.out);
    let session = project.open_session(
        &id,
        trailblaze::SessionOptions {
            device: Some(device),
            out_dir: Some(out.to_path_buf()),
            settings,
            ..Default::default()
        },
    )?;
    let result = session.call(&a.name, args);
    let steps = session.steps();
    let log = session.dir().map(|d| d.join("log.jsonl"));
    if a.json {
        let out = json!({
            "ok": result.is_ok(),
            "result": result.as_ref().ok(),
            "error": result.as_ref().err().map(|e| e.to_string()),
            "steps": steps,
            "log": log,
            "transpiled": project.transpiler.transpile_count(),
        });
        super::output::out_json!(&out);
    } else {
        print_call(result.as_ref().ok(), &steps, log.as_deref());
    }
    result.map(|_| ()).map_err(|e| match e {
        // The call never ran: bad usage, exit 2.
        CallError::Args { .. } | CallError::UnknownTool { .. } | CallError::Platform { .. } => {
            Failure::Usage(anyhow!(e))
        }
        // The device failed: not the tool's fault, exit 2 as for `run`.
        CallError::Device { .. } => Failure::Usage(anyhow!(e)),
        _ => Failure::Failed(anyhow!(e)),
    })
}

/// Starts compiling the script engine's modules on another thread, unless `name` is a built-in tool.
fn precompile_unless_builtin(name: String) {
    // A tool that is not built in runs a script: the engine's own modules (the SDK, its glue)
    // compile on a second thread while the trailmaps load, and the session's engine loads them.
    std::thread::spawn(move || {
        if trailblaze::Catalog::builtins_only(std::path::Path::new(""))
            .tool(&name)
            .is_none()
        {
            let _ = trailblaze::scripting::precompile_engine_modules();
        }
    });
}

/// A call's result (on stdout) and its steps and log (on stderr), for people.
fn print_call(result: Option<&Value>, steps: &[trailblaze::state::log::LogEntry], log: Option<&std::path::Path>) {
    if let Some(v) = result {
        super::output::out_json!(v);
    }
    if !steps.is_empty() {
        err!("steps:");
    }
    for s in steps {
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

pub fn list_tools(cli: &Cli, a: &ToolsArgs) -> Result<(), Failure> {
    let (project, _) = open_project(cli, None)?;
    let id = project.trailmap_for(a.map.trailmap.as_deref(), &trailblaze::device::DeviceSpec::Sim)?;
    let catalog = project.catalog(&id)?;
    warn_all(&catalog.warnings);
    if let Some(name) = &a.name {
        return show_tool(&catalog, name, a.json);
    }
    if a.tokens && a.agent {
        return print_agent_tokens(&project, &id, a.json, &catalog);
    }
    if a.tokens {
        return print_tokens(a.json, &catalog);
    }
    if a.all {
        return list_all(&catalog, a.json);
    }
    // What a session starts with: `tools` and `mcp` drive Android devices (the simulated one too).
    let platform = trailblaze::device::Platform::Android;
    if a.toolsets {
        return super::toolsets::list(&catalog, platform, a.json);
    }
    let definitions = catalog.offered_at_start(platform);
    if a.json {
        super::output::out_json!(&definitions);
    } else {
        let width = definitions.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in &definitions {
            out!("{:<width$}  {}", t.name, first_sentence(&t.description));
        }
        super::toolsets::footer(&catalog, platform);
        err!("`trailblaze tools NAME` shows a tool in full");
    }
    Ok(())
}

/// `tools --all`: every tool, two lines each: its call shape and flags, then its first sentence.
fn list_all(catalog: &Catalog, json_out: bool) -> Result<(), Failure> {
    let mut tools: Vec<&ToolDescriptor> = catalog.tools().map(|t| t.as_ref()).collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    if json_out {
        let all: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "flags": t.flags,
                    "platform": platform_of(t),
                    "trailmap": t.trailmap,
                    "inputSchema": t.advertised_schema(),
                })
            })
            .collect();
        super::output::out_json!(&all);
        return Ok(());
    }
    for t in tools {
        let schema = &t.input_schema;
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let args: Vec<String> = schema["properties"]
            .as_object()
            .map(|p| {
                p.keys()
                    .map(|k| {
                        if required.contains(&k.as_str()) {
                            k.clone()
                        } else {
                            format!("{k}?")
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut flags = vec![if t.flags.surface_to_llm {
            "LLM-visible"
        } else {
            "hidden"
        }];
        if t.flags.is_recordable {
            flags.push("recorded");
        }
        if t.flags.read_only {
            flags.push("read-only");
        }
        let platform = platform_of(t).map(|p| format!(", {p} only")).unwrap_or_default();
        out!("{} {{{}}}  [{}{platform}]", t.name, args.join(", "), flags.join(", "));
        out!("    {}", first_sentence(&t.description));
    }
    Ok(())
}

/// The platform a tool is limited to, when it is.
fn platform_of(t: &ToolDescriptor) -> Option<String> {
    let p = t.platforms();
    (!p.is_empty()).then(|| p.join("/"))
}

/// A description's first sentence, whole (never cut mid-sentence): up to the first `. ` or the
/// first blank line.
fn first_sentence(text: &str) -> String {
    let para = text
        .split("\n\n")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // A sentence ends at `. ` before a capital letter (so `e.g. \`y778\`` does not end one).
    let ends = para
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| para[i + 2..].chars().next().is_some_and(char::is_uppercase));
    match ends {
        Some(i) => para[..=i].to_string(),
        None => para,
    }
}

/// One tool in full: visibility, description, arguments from its schema.
fn show_tool(catalog: &Catalog, name: &str, json_out: bool) -> Result<(), Failure> {
    let tool = match catalog.tool(name) {
        Some(t) => t,
        // Not in the catalog: the library's nearest names.
        None => return llm_tool(catalog, name).map(|_| ()),
    };
    if json_out {
        let v = json!({
            "name": tool.name,
            "description": tool.description,
            "llmVisible": tool.flags.surface_to_llm,
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
        });
        super::output::out_json!(&v);
        return Ok(());
    }
    let seen = if tool.flags.surface_to_llm {
        "LLM-visible"
    } else {
        "hidden from the LLM (trails and scripts call it)"
    };
    out!("{} · {seen}", tool.name);
    out!("");
    out!("{}", tool.description.trim());
    let schema = &tool.input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema["properties"].as_object().filter(|p| !p.is_empty()) {
        out!("");
        out!("arguments:");
        for (k, p) in props {
            let kind = type_words(p);
            let need = if required.contains(&k.as_str()) {
                "required"
            } else {
                "optional"
            };
            out!("  {k}: {kind} ({need})");
            if let Some(d) = p["description"].as_str() {
                out!("      {}", d.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
    } else {
        out!("");
        out!("arguments: none");
    }
    Ok(())
}

/// A property's type in words: `string`, `integer`, `one of: A, B`, `object`.
fn type_words(p: &Value) -> String {
    if let Some(e) = p["enum"].as_array() {
        let names: Vec<String> = e
            .iter()
            .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
            .collect();
        return format!("one of: {}", names.join(", "));
    }
    match &p["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ if p.get("$ref").is_some() => p["$ref"]
            .as_str()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string(),
        _ => "any".into(),
    }
}

/// The `snapshot` of the device `spec` names, in a session of its own on trailmap `id`.
pub(super) fn snapshot_on(
    project: &trailblaze::Project,
    id: &str,
    spec: &trailblaze::device::DeviceSpec,
) -> Result<serde_json::Value, Failure> {
    let device = project.device(id, spec)?;
    let session = project.open_session(
        id,
        trailblaze::SessionOptions {
            device: Some(device),
            ..Default::default()
        },
    )?;
    session
        .call("snapshot", json!({}))
        .map_err(|e| Failure::Failed(anyhow!(e)))
}

impl SnapshotArgs {
    /// The `snapshot` tool's arguments for these flags, as `key=value`: nodes off the screen are
    /// left out unless `--offscreen` asks for them.
    fn tool_pairs(&self) -> Vec<String> {
        let mut pairs = vec![format!("offscreen={}", self.offscreen)];
        if self.bounds {
            pairs.push("bounds=true".into());
        }
        if self.all {
            pairs.push("all=true".into());
        }
        pairs
    }
}

pub fn snapshot(cli: &Cli, a: &SnapshotArgs) -> Result<(), Failure> {
    if let Some(path) = &a.screenshot {
        screenshot_mime(path)?;
    }
    if let Some(j) = super::session::join(&a.join, !a.device.device.is_empty())? {
        let shot = a
            .screenshot
            .as_deref()
            .map(std::path::absolute)
            .transpose()
            .map_err(|e| Failure::Usage(anyhow!("--screenshot: {e}")))?;
        return super::session::client::snapshot(&j, a.json, &a.tool_pairs(), a.url.as_deref(), shot.as_deref());
    }
    let spec = a.device.spec()?;
    if a.url.is_some() && !matches!(spec, trailblaze::device::DeviceSpec::Web(_)) {
        let named = if a.device.device.is_empty() {
            "sim".to_string()
        } else {
            a.device.device.join(",")
        };
        return Err(url_needs_web(&named));
    }
    let (project, _) = open_project(cli, Some(&a.secrets))?;
    let id = project.trailmap_for(a.map.trailmap.as_deref(), &spec)?;
    let device = project.device(&id, &spec)?;
    let session = project.open_session(
        &id,
        trailblaze::SessionOptions {
            device: Some(device),
            ..Default::default()
        },
    )?;
    if let Some(url) = &a.url {
        session
            .call("openUrl", json!({ "url": url }))
            .map_err(|e| Failure::Failed(anyhow!("--url {url}: {e}")))?;
    }
    let args = parse_args(&a.tool_pairs(), &Value::Null)?;
    let v = session
        .call("snapshot", args)
        .map_err(|e| Failure::Failed(anyhow!(e)))?;
    if let Some(path) = &a.screenshot {
        let shot = session
            .screenshot()
            .map_err(|e| Failure::Failed(anyhow!("--screenshot: {e}")))?;
        write_screenshot(path, shot.mime, &shot.bytes)?;
    }
    print_snapshot(&v, a.json, a.screenshot.as_deref());
    Ok(())
}

/// Each LLM-visible tool's definition as sent to the model, counted with the o200k tokenizer.
fn print_tokens(json_out: bool, catalog: &Catalog) -> Result<(), Failure> {
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
    if json_out {
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

/// `tools --tokens --agent`: the minimized definitions `run --agent` sends, each beside its full
/// form, and the whole first request for one step on the start screen (OpenAI's wire format).
fn print_agent_tokens(
    project: &trailblaze::Project,
    id: &str,
    json_out: bool,
    catalog: &Catalog,
) -> Result<(), Failure> {
    use trailblaze::agent::{Objective, ProviderKind, first_request, minimized};
    let bpe = tiktoken_rs::o200k_base().map_err(|e| Failure::Usage(anyhow!("the tokenizer did not load: {e}")))?;
    let count = |text: String| bpe.encode_with_special_tokens(&text).len();
    let json_text = |d: &trailblaze::tools::ToolDefinition| serde_json::to_string(d).unwrap_or_default();
    let full = catalog.tool_definitions();
    let min = minimized::definitions_for_model(catalog);
    let mut rows: Vec<(String, usize, usize)> = full
        .iter()
        .zip(&min)
        .map(|(f, m)| (m.name.clone(), count(json_text(m)), count(json_text(f))))
        .collect();
    rows.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    // The start screen of the trailmap's simulated app, as the first request would show it.
    let session = project
        .sim_device(id)
        .and_then(|d| {
            project.open_session(
                id,
                trailblaze::SessionOptions {
                    device: Some(d),
                    ..Default::default()
                },
            )
        })
        .ok();
    let screen = session
        .as_ref()
        .and_then(|s| s.call("snapshot", json!({})).ok())
        .and_then(|v| v["text"].as_str().map(str::to_string))
        .unwrap_or_else(|| "(no simulated screen for this trailmap)".into());
    // The picture `--agent-vision` adds to it, counted by each provider's published rule.
    let picture = session
        .as_ref()
        .and_then(|s| trailblaze::agent::vision::screen_image(s, ProviderKind::OpenAi).ok());
    let objective = Objective {
        text: "Sign in with the demo account",
        trail_title: Some("Sign in"),
        ..Objective::default()
    };
    let request = first_request(
        ProviderKind::OpenAi,
        catalog,
        &objective,
        &screen,
        &project.secrets.names(),
    );
    let request_tokens = count(request.to_string());
    if json_out {
        print_agent_tokens_json(&rows, request_tokens, picture.as_ref());
    } else {
        print_agent_tokens_text(&rows, request_tokens, picture.as_ref());
    }
    Ok(())
}

/// `tools --tokens --agent --json`: `rows` are each tool's name, minimized and full cost.
fn print_agent_tokens_json(
    rows: &[(String, usize, usize)],
    request_tokens: usize,
    picture: Option<&trailblaze::agent::vision::Image>,
) {
    use trailblaze::agent::ProviderKind;
    let (total_min, total_full): (usize, usize) = rows.iter().fold((0, 0), |(a, b), r| (a + r.1, b + r.2));
    let image = picture.map(|p| {
        json!({
            "width": p.width, "height": p.height, "pngBytes": p.data.len(),
            "base64Chars": p.data.len().div_ceil(3) * 4,
            "openaiTokens": p.tokens(ProviderKind::OpenAi),
            "anthropicTokens": p.tokens(ProviderKind::Anthropic),
        })
    });
    let tools: Vec<Value> = rows
        .iter()
        .map(|(n, m, f)| json!({ "name": n, "tokens": m, "fullTokens": f }))
        .collect();
    out!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "tokenizer": "o200k_base", "tools": tools, "total": total_min, "fullTotal": total_full,
            "firstRequest": request_tokens, "firstRequestImage": image,
        }))
        .unwrap_or_default()
    );
}

/// `tools --tokens --agent` for people: `rows` are each tool's name, minimized and full cost.
fn print_agent_tokens_text(
    rows: &[(String, usize, usize)],
    request_tokens: usize,
    picture: Option<&trailblaze::agent::vision::Image>,
) {
    use trailblaze::agent::ProviderKind;
    let (total_min, total_full): (usize, usize) = rows.iter().fold((0, 0), |(a, b), r| (a + r.1, b + r.2));
    for (name, m, f) in rows {
        out!("{m:>6}  {name} (full: {f})");
    }
    out!("{total_min:>6}  total as the agent sends them (full: {total_full}), o200k_base");
    out!(
        "{request_tokens:>6}  the agent's first request for one step on the start screen (system prompt, tools, step, screen)"
    );
    if let Some(p) = picture {
        out!(
            "{:>6}  with the screen's picture ({}×{} PNG, {} bytes): +{} tokens at OpenAI (85 + 170 a 512-px tile), +{} at Anthropic (w×h/750)",
            request_tokens as u64 + p.tokens(ProviderKind::OpenAi),
            p.width,
            p.height,
            p.data.len(),
            p.tokens(ProviderKind::OpenAi),
            p.tokens(ProviderKind::Anthropic)
        );
    }
}
