//! One live session, an MCP client's or `trailblaze shell`'s: the device session (started on the first
//! call), what it recorded, and the session tools (`saveTrail`, `resetSession`). Everything here
//! blocks; the MCP server runs it off the async threads.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use trailblaze::device::DeviceSpec;
use trailblaze::recording::{self, SessionRecording, TrailMeta};
use trailblaze::{CancelHandle, Project, Session, Settings};
use trailblaze::{Catalog, Redaction};

use super::{Cli, Failure, MapArg, SessionArgs, open_project, out_dir, warn_all};

// How `shell` and `mcp` reach a session.
mod backend;
// The tools over the workspace's trails and devices, and MCP's resources.
mod workspace;
pub use backend::{Backend, Canceller, steps_text};
use workspace::{LIST_TRAILS, READ_TRAIL, RUN_TRAIL, SWITCH_DEVICE};

/// What every client of one server shares: the project, its trailmap and catalog.
pub struct Shared {
    project: Project,
    id: String,
    pub catalog: Arc<Catalog>,
    out: PathBuf,
    device: DeviceSpec,
    settings: Settings,
    /// A second guard on every reply: the dispatcher already redacts results and errors.
    redact: Redaction,
    /// The LLM (`mcp --llm-model ...`): runs `blaze` and judges `ask` / `verify`.
    llm: Option<Arc<trailblaze::agent::Agent>>,
    /// Whether each session records a trace, written in its folder when it ends (docs/trace.md).
    trace: bool,
    /// Where the trails are and how device names read, for the tools in live/workspace.rs.
    workspace: workspace::Workspace,
}

/// `--trace` for a live session (`mcp`, `shell`).
#[derive(clap::Args)]
pub struct TraceArg {
    /// Record each session's trace (each call's screens, trees, selector and time; docs/trace.md),
    /// written in its folder when the session ends, for `trailblaze report DIR`: `on` or `off`.
    #[arg(long = "trace", value_enum, default_value = "on", value_name = "WHEN")]
    pub trace: OnOff,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl Shared {
    pub fn new(
        project: Project,
        id: String,
        catalog: Arc<Catalog>,
        out: PathBuf,
        device: DeviceSpec,
        settings: Settings,
    ) -> Shared {
        let redact = Redaction::new(&project.secrets.values_to_redact());
        Shared {
            trace: false,
            project,
            id,
            catalog,
            out,
            device,
            settings,
            redact,
            llm: None,
            workspace: Default::default(),
        }
    }

    /// The trailmap's id.
    pub fn trailmap(&self) -> &str {
        &self.id
    }

    /// The same, with an LLM for `blaze`, `ask` and `verify` (and `assertWithAi` in the session).
    fn traced(mut self, trace: bool) -> Shared {
        self.trace = trace;
        self
    }

    fn with_llm(mut self, config: Option<trailblaze::agent::AgentConfig>) -> Shared {
        if let Some(c) = config {
            let agent = Arc::new(trailblaze::agent::Agent::new(
                &c,
                &self.project.secrets.values_to_redact(),
                self.project.secrets.names(),
            ));
            self.settings.judge = Some(trailblaze::agent::judge_handle(agent.clone()));
            self.llm = Some(agent);
        }
        self
    }
}

/// What `mcp` and `shell` share: the project, the trailmap's catalog, the device to open sessions
/// on (checked now, not at the first call: no app.yaml, no adb device), logs and budgets.
pub fn open_shared(
    cli: &Cli,
    map: &MapArg,
    session: &SessionArgs,
    llm: Option<&super::llm::LlmArgs>,
    trace: &TraceArg,
) -> Result<Arc<Shared>, Failure> {
    let spec = session.device.spec()?;
    let (project, located) = open_project(cli, Some(&session.secrets))?;
    let shared = open_shared_with(project, &located, spec, map, session, llm, trace.trace == OnOff::On)?;
    // Checked now, not at the first call: no app.yaml, no adb device.
    drop(shared.project.device(&shared.id, &shared.device)?);
    Ok(shared)
}

/// [`open_shared`] on a project already open (a session's own process opens it with the secrets
/// it was handed), the device not opened: a session's process opens it at once (a check first
/// would start a browser twice).
pub fn open_shared_with(
    project: Project,
    located: &super::Located,
    spec: DeviceSpec,
    map: &MapArg,
    session: &SessionArgs,
    llm: Option<&super::llm::LlmArgs>,
    trace: bool,
) -> Result<Arc<Shared>, Failure> {
    let id = project.trailmap_for(map.trailmap.as_deref(), &spec)?;
    let catalog = project.catalog(&id)?;
    warn_all(&catalog.warnings);
    let out = out_dir(located, &session.out);
    let settings = session.limits.settings();
    let llm = match llm {
        Some(l) => l.config(super::llm::workspace_llm(located)?.as_ref())?,
        None => None,
    };
    Ok(Arc::new(
        Shared::new(project, id, catalog, out, spec, settings)
            .with_llm(llm)
            .traced(trace)
            .in_workspace(workspace::Workspace::new(located.trails.clone(), &session.device)),
    ))
}

/// What one tool call gave: its result or error (redacted by the dispatcher), and its steps.
pub struct Called {
    pub result: Result<Value, Refused>,
    pub steps: Vec<trailblaze::state::log::LogEntry>,
}

/// Why a call gave no result: refused before it ran (not offered now, no session), or its error.
pub enum Refused {
    NotRun(String),
    Call(trailblaze::CallError),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NotRun(why) => f.write_str(why),
            Refused::Call(e) => e.fmt(f),
        }
    }
}

impl Called {
    fn failed(why: String) -> Called {
        Called {
            result: Err(Refused::NotRun(why)),
            steps: Vec::new(),
        }
    }
}

/// A reply: text for the model, and whether it is a tool error.
pub struct Reply {
    pub text: String,
    pub is_error: bool,
}

impl Reply {
    fn ok(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: false,
        }
    }
    fn error(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: true,
        }
    }
}

pub const SAVE_TRAIL: &str = "saveTrail";
pub const RESET_SESSION: &str = "resetSession";
pub const BLAZE: &str = "blaze";
pub const ASK: &str = "ask";
pub const VERIFY: &str = "verify";

/// The session tools' definitions, beside the catalog's; `blaze`, `ask` and `verify` when the
/// server has an LLM.
pub fn session_tool_definitions(llm: bool) -> Vec<(&'static str, &'static str, Value)> {
    let text = |what: &str| {
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": what } },
            "required": ["text"],
            "additionalProperties": false
        })
    };
    let mut defs = if llm {
        vec![
            (
                BLAZE,
                "Delegates one objective to trailblaze's own agent (e.g. `open settings`), which acts on this \
                 session's device until it is done; returns the calls it made as a trail step to paste. They \
                 join this session's recording.",
                text("The objective, in words."),
            ),
            (
                ASK,
                "Answers a question from the screen (e.g. `what is the first subject?`), acting on nothing.",
                text("The question, in words."),
            ),
            (
                VERIFY,
                "Judges a statement about the screen (e.g. `the inbox shows 3 messages`): `holds` true or \
                 false with the reason. One that holds joins this session's recording as `assertWithAi`.",
                text("The statement, in words."),
            ),
        ]
    } else {
        Vec::new()
    };
    defs.extend(vec![
        (
            SAVE_TRAIL,
            "Saves this session's recorded steps as `trails/<name>.trail.yaml` in the trailmap: one \
             step per tool call that acted on the device, secrets as `{{secret:NAME}}` placeholders. \
             An existing file is kept unless `overwrite` is true.",
            json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The file name: letters, digits, `-` and `_`." },
                    "title": { "type": "string", "description": "The trail's title (default: the name)." },
                    "overwrite": { "type": "boolean", "description": "Replace an existing trail of that name." }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        (
            RESET_SESSION,
            "Starts over: a fresh device at the app's start screen and an empty recording.",
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        ),
    ]);
    defs.extend(workspace::definitions());
    defs
}

/// One client's state.
pub struct Live {
    shared: Arc<Shared>,
    session: Option<Session>,
    recording: SessionRecording,
    /// The last step seq already looked at: steps after it belong to the next call.
    seen: u64,
    /// Shared with the async side, which cancels the running call when the client asks.
    cancel: Arc<Mutex<Option<CancelHandle>>>,
    /// What this session last saved at each path: an overwrite of a file edited since is refused.
    saved: std::collections::HashMap<PathBuf, String>,
    /// The device `switchDevice` chose, over the server's (`Shared` is every client's).
    device: Option<DeviceSpec>,
}

impl Live {
    pub fn new(shared: Arc<Shared>, cancel: Arc<Mutex<Option<CancelHandle>>>) -> Live {
        Live {
            shared,
            session: None,
            recording: SessionRecording::new(),
            seen: 0,
            cancel,
            saved: Default::default(),
            device: None,
        }
    }

    /// The tool definitions the client is offered now: the session's (its active toolsets, the
    /// shortcuts where the screen is), or what a session starts with before the first call.
    pub fn offered(&mut self) -> Vec<trailblaze::tools::ToolDefinition> {
        // Which shortcuts are offered depends on the screen: look at it, starting the session now.
        if self.session.is_none() && self.shared.catalog.has_shortcuts() {
            let _ = self.session();
        }
        match &self.session {
            Some(s) => s.offered_tools(),
            None => self.shared.catalog.offered_at_start(self.device_spec().platform()),
        }
    }

    /// Whether a call of `name` may change what the client is offered: choosing toolsets, starting
    /// over, or any call when a shortcut's offer depends on the screen.
    pub fn offer_may_change(&self, name: &str) -> bool {
        name == "setActiveToolSets"
            || name == RESET_SESSION
            || name == SWITCH_DEVICE
            || name == RUN_TRAIL
            || self.shared.catalog.has_shortcuts()
    }

    /// Writes the session's trace in its folder (when it records one): at a reset and at the end.
    fn end_trace(&mut self) {
        let Some(session) = &self.session else { return };
        match session.write_session_trace() {
            Ok(Some(path)) => tracing::info!("the session's trace: {}", path.display()),
            Ok(None) => {}
            Err(e) => tracing::warn!("the session's trace could not be written: {e}"),
        }
    }

    /// `key=value` words read into `name`'s arguments with its schema, as `trailblaze tool` reads
    /// them; a usage error when the tool is not offered or a word is not `key=value`.
    pub fn read_pairs(&self, name: &str, pairs: &[String]) -> Result<Value, String> {
        let text = |f: Failure| match f {
            Failure::Usage(e) | Failure::Failed(e) => e.to_string(),
            Failure::Reported(_) => "refused".into(),
        };
        let schema = super::call_args::llm_tool(&self.shared.catalog, name).map_err(text)?;
        super::call_args::parse_args(pairs, &schema.input_schema).map_err(text)
    }

    /// What stops the call running now.
    pub fn cancel_handle(&self) -> Canceller {
        Canceller(self.cancel.clone())
    }

    /// What the session recorded so far, step by step.
    pub fn recording(&self) -> &SessionRecording {
        &self.recording
    }

    pub fn call(&mut self, name: &str, args: Value) -> Reply {
        let reply = match name {
            SAVE_TRAIL => self.save_trail(&args),
            RESET_SESSION => self.reset(),
            LIST_TRAILS => self.list_trails(&args),
            READ_TRAIL => self.read_trail(&args),
            RUN_TRAIL => self.run_trail(&args),
            SWITCH_DEVICE => self.switch_device(&args),
            BLAZE | ASK | VERIFY if self.shared.llm.is_some() => self.in_words(name, &args),
            _ => self.call_tool(name, args),
        };
        let text = self.shared.redact.text(&reply.text).into_owned();
        Reply { text, ..reply }
    }

    pub fn session(&mut self) -> Result<&Session, String> {
        if self.session.is_none() {
            let s = &self.shared;
            let device = s.project.device(&s.id, self.device_spec()).map_err(|e| e.to_string())?;
            let session = s
                .project
                .open_session(
                    &s.id,
                    trailblaze::SessionOptions {
                        device: Some(device),
                        out_dir: Some(s.out.clone()),
                        settings: s.settings.clone(),
                        ..Default::default()
                    },
                )
                .map_err(|e| e.to_string())?;
            if let Ok(mut c) = self.cancel.lock() {
                *c = Some(session.cancel_handle());
            }
            if s.trace {
                session.trace_begin(trailblaze::trace::TraceSettings {
                    trace: trailblaze::trace::TracePolicy::On,
                    video: trailblaze::trace::TracePolicy::Off,
                });
            }
            self.seen = 0;
            self.session = Some(session);
        }
        self.session
            .as_ref()
            .ok_or_else(|| "the session did not start".to_string())
    }

    fn call_tool(&mut self, name: &str, args: Value) -> Reply {
        let called = self.call_in_step(name, args, None);
        match called.result {
            Ok(v) if name == "snapshot" => Reply::ok(v["text"].as_str().unwrap_or_default().trim_end()),
            Ok(v) => Reply::ok(serde_json::to_string_pretty(&v).unwrap_or_default()),
            Err(e) => Reply::error(e.to_string()),
        }
    }

    /// One LLM-visible tool's call, recorded under `step` when given (calls with the same text in a
    /// row form one step): its result or error, and the steps it logged.
    pub fn call_in_step(&mut self, name: &str, args: Value, step: Option<&str>) -> Called {
        // Only what the model is offered may be called, with the same answer as `trailblaze tool`.
        if let Err(e) = self.shared.catalog.llm_tool(name) {
            return Called::failed(e.to_string());
        }
        let seen = self.seen;
        let session = match self.session() {
            Ok(s) => s,
            Err(e) => return Called::failed(e),
        };
        // Nor a tool of a toolset that is not active (the list a client got did not hold it).
        if let Err(why) = session.offered_now(name) {
            return Called::failed(why);
        }
        let (result, steps) = session.call_with_steps(name, args.clone(), seen);
        self.seen = steps.last().map_or(seen, |s| s.seq);
        self.recording
            .add_call_in(&self.shared.catalog, name, &args, &steps, step);
        Called {
            result: result.map_err(Refused::Call),
            steps,
        }
    }

    /// Whether the session tools include `blaze`, `ask` and `verify`.
    pub fn has_llm(&self) -> bool {
        self.shared.llm.is_some()
    }

    /// `blaze`, `ask`, `verify`: the agent's loop, `rememberWithAi`, `assertWithAi` on this session.
    fn in_words(&mut self, name: &str, args: &Value) -> Reply {
        let text = match args.as_object().map(|o| (o.len(), o.get("text"))) {
            Some((1, Some(Value::String(t)))) if !t.trim().is_empty() => t.clone(),
            Some((_, Some(Value::String(_)))) | Some((_, None)) | None => {
                return Reply::error(format!("{name}: expected one argument `text` (a non-empty string)"));
            }
            Some(_) => return Reply::error(format!("{name}: `text` must be a string")),
        };
        let Some(agent) = self.shared.llm.clone() else {
            return Reply::error(format!("{name}: no LLM is configured (mcp --llm-model NAME)"));
        };
        let seen = self.seen;
        let catalog = self.shared.catalog.clone();
        let session = match self.session() {
            Ok(s) => s,
            Err(e) => return Reply::error(e),
        };
        match name {
            BLAZE => {
                let mut seen = seen;
                let objective = trailblaze::agent::Objective {
                    text: &text,
                    ..Default::default()
                };
                let run = agent.run(session, &catalog, &objective, &mut seen);
                for c in &run.calls {
                    self.recording.add_call(&catalog, &c.tool, &c.args, &c.records);
                }
                self.seen = seen;
                let (input, output) = run.tokens();
                let cost = format!("{} LLM request(s), {input} tokens in, {output} out", run.turns.len());
                let yaml = recording::step_yaml(false, &text, &run.recording).unwrap_or_default();
                match run.end.error() {
                    None => Reply::ok(format!("Completed ({cost}). The recorded calls:\n{yaml}")),
                    Some(e) => Reply::error(format!("{e} ({cost})")),
                }
            }
            ASK => {
                let (result, steps) =
                    session.call_with_steps("rememberWithAi", json!({ "prompt": text, "variable": "answer" }), seen);
                self.seen = steps.last().map_or(seen, |s| s.seq);
                match result {
                    Ok(v) => Reply::ok(v.get("value").and_then(Value::as_str).unwrap_or_default()),
                    Err(e) => Reply::error(e.to_string()),
                }
            }
            _ => {
                let call_args = json!({ "prompt": text });
                let (result, steps) = session.call_with_steps("assertWithAi", call_args.clone(), seen);
                self.seen = steps.last().map_or(seen, |s| s.seq);
                self.recording.add_call(&catalog, "assertWithAi", &call_args, &steps);
                match result {
                    Ok(v) => Reply::ok(json!({ "holds": true, "explanation": v["explanation"] }).to_string()),
                    Err(e) => match e.to_string().split_once(trailblaze::judge::DOES_NOT_HOLD) {
                        Some((_, why)) if !e.is_device_failure() => Reply::ok(
                            json!({ "holds": false, "explanation": why.trim_start_matches(':').trim() }).to_string(),
                        ),
                        _ => Reply::error(e.to_string()),
                    },
                }
            }
        }
    }

    fn reset(&mut self) -> Reply {
        self.end_trace();
        // Dropping the handle ends the session's thread (and its log) before a new one starts.
        self.session = None;
        if let Ok(mut c) = self.cancel.lock() {
            *c = None;
        }
        self.recording = SessionRecording::new();
        Reply::ok("A fresh session: the device is at the app's start screen and the recording is empty.")
    }

    fn save_trail(&mut self, args: &Value) -> Reply {
        let save = match SaveArgs::from(args) {
            Ok(a) => a,
            Err(e) => return Reply::error(format!("{SAVE_TRAIL}: {e}")),
        };
        let s = &self.shared;
        let Some(map) = s.project.trailmaps.get(&s.id) else {
            return Reply::error(format!("unknown trailmap `{}`", s.id));
        };
        let written = recording::trail_path(&map.dir.join("trails"), &save.name).and_then(|path| {
            self.save_to(
                &path,
                Some(save.title.unwrap_or_else(|| save.name.clone())),
                save.overwrite,
            )
        });
        match written {
            Ok(path) => Reply::ok(format!(
                "Saved {} ({} steps). Replay it with `trailblaze run {}`.",
                path.display(),
                self.recording.steps().len(),
                path.display()
            )),
            Err(e) => Reply::error(format!("{SAVE_TRAIL}: {e}")),
        }
    }

    /// Writes the recording as a trail at `path` (its id: the trailmap's and the file's name), an
    /// existing file kept unless `overwrite`, one edited since this session saved it never replaced.
    pub fn save_to(
        &mut self,
        path: &std::path::Path,
        title: Option<String>,
        overwrite: bool,
    ) -> Result<PathBuf, recording::RecordingError> {
        let s = &self.shared;
        let name = path
            .file_name()
            .and_then(|f| f.to_str())
            .map(|f| f.strip_suffix(".trail.yaml").unwrap_or(f))
            .unwrap_or("trail");
        let meta = TrailMeta {
            id: format!("{}/{name}", s.id),
            target: s.id.clone(),
            title: Some(title.unwrap_or_else(|| name.to_string())),
            key: self.session.as_ref().and_then(|s| s.classifier()).map(str::to_string),
        };
        let text = self.recording.to_trail_yaml(&meta)?;
        // Secret values are placeholders by construction (a step that could not say one was
        // refused above); a secret in a step's description is still never written.
        let text = s.redact.text(&text).into_owned();
        let path = path.to_path_buf();
        if let Some(before) = self.saved.get(&path)
            && std::fs::read_to_string(&path).is_ok_and(|now| now != *before)
        {
            return Err(recording::RecordingError::Changed(path));
        }
        recording::write_trail(&path, &text, overwrite)?;
        self.saved.insert(path.clone(), text);
        Ok(path)
    }

    /// The second guard on what leaves the session (the dispatcher redacts results and errors).
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.shared.redact.text(text)
    }

    /// The trailmap the session runs in, and the device it drives.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Writes the session's trace now (when it records one), for `session report`.
    pub fn write_trace(&self) -> Result<Option<PathBuf>, String> {
        match &self.session {
            Some(s) => s.write_session_trace_so_far().map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
}

struct SaveArgs {
    name: String,
    title: Option<String>,
    overwrite: bool,
}

impl SaveArgs {
    /// Strict, like every tool's decoding; errors name the key and the type, never the value.
    fn from(args: &Value) -> Result<SaveArgs, String> {
        let obj = args.as_object().ok_or("the arguments must be an object")?;
        if let Some(k) = obj
            .keys()
            .find(|k| !["name", "title", "overwrite"].contains(&k.as_str()))
        {
            return Err(format!("unknown argument `{k}` (expected name, title, overwrite)"));
        }
        let string = |k: &str| match obj.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{k}` must be a string")),
        };
        let name = string("name")?.ok_or("missing required argument `name`")?;
        let overwrite = match obj.get("overwrite") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err("`overwrite` must be a boolean".into()),
        };
        Ok(SaveArgs {
            name,
            title: string("title")?,
            overwrite,
        })
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.end_trace();
    }
}
