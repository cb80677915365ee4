//! The loop for one objective: the screen and the step to the model; each tool call it makes through
//! the one dispatcher (`Session::call_with_steps`), its result or its error back; until it calls
//! `objectiveStatus` with COMPLETED or FAILED, or a budget runs out.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::prompt::{self, Objective};
use super::provider::{ChatReply, ChatRequest, Message, Provider, ProviderError, ToolCall, UserPart};
use super::{AgentConfig, minimized};
use trailblaze_core::catalog::{Catalog, ToolDefinition};
use trailblaze_core::recording::SessionRecording;
use trailblaze_core::secret::Redaction;
use trailblaze_core::session::Session;
use trailblaze_core::state::log::LogEntry;
use trailblaze_core::tools::ToolDescriptor;

/// The tool that ends an objective.
pub const OBJECTIVE_STATUS: &str = "objectiveStatus";
/// The most of one tool result the model is sent back.
const MAX_RESULT_CHARS: usize = 8_000;

/// How an objective ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Completed {
        explanation: String,
    },
    Failed {
        explanation: String,
    },
    OutOfTurns {
        turns: u32,
    },
    OutOfTokens {
        used: u64,
        budget: u64,
    },
    Provider(ProviderError),
    /// The device failed under a call: an infrastructure error, not the model's.
    Device {
        message: String,
    },
}

impl End {
    pub fn passed(&self) -> bool {
        matches!(self, End::Completed { .. })
    }

    /// The step's error, for anything but a completion.
    pub fn error(&self) -> Option<String> {
        match self {
            End::Completed { .. } => None,
            End::Failed { explanation } => Some(format!("the agent reported the objective failed: {explanation}")),
            End::OutOfTurns { turns } => Some(format!(
                "the agent did not conclude within {turns} turns (raise --agent-max-steps)"
            )),
            End::OutOfTokens { used, budget } => Some(format!(
                "the run's token budget is spent: {used} of {budget} tokens used (raise --agent-max-tokens)"
            )),
            End::Provider(e) => Some(e.to_string()),
            End::Device { message } => Some(message.clone()),
        }
    }
}

/// One tool call the model made, and what it did.
#[derive(Debug, Clone)]
pub struct AgentCall {
    /// The model's turn it came in (1-based).
    pub turn: u32,
    pub tool: String,
    /// As the model sent them (placeholders; secret values scrubbed).
    pub args: Value,
    pub ok: bool,
    pub error: Option<String>,
    /// The result, when it succeeded.
    pub result: Option<Value>,
    /// What the dispatcher logged for it (empty when it was refused before dispatch).
    pub records: Vec<LogEntry>,
    pub duration_ms: f64,
}

/// One model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// What the model said beside its calls (scrubbed).
    pub text: Option<String>,
    pub calls: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What a trace keeps of it: the message it answered, the picture sent, the calls, its time.
    pub trace: trailblaze_core::report::TurnTrace,
}

/// The most of a turn's request a trace keeps.
const REQUEST_CHARS: usize = 16 * 1024;

/// The texts and the picture of the last message sent (what the turn answered), for a trace.
fn request_of(messages: &[Message]) -> (String, Option<(String, Vec<u8>)>) {
    let Some(Message::User(parts)) = messages.iter().rev().find(|m| matches!(m, Message::User(_))) else {
        return (String::new(), None);
    };
    let mut text = String::new();
    let mut image = None;
    for part in parts {
        match part {
            UserPart::Text(t) => text.push_str(t),
            UserPart::ToolResult { content, .. } => text.push_str(content),
            UserPart::Image(i) => image = Some((i.mime.to_string(), i.data.clone())),
        }
        text.push('\n');
    }
    if text.len() > REQUEST_CHARS {
        let mut end = REQUEST_CHARS;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    (text, image)
}

/// What running one objective did.
#[derive(Debug, Clone)]
pub struct ObjectiveRun {
    pub end: End,
    pub calls: Vec<AgentCall>,
    pub turns: Vec<Turn>,
    /// The recordable calls to write back as the step's recording, in order: what `tap`/`type`
    /// expanded into, placeholders for secrets.
    pub recording: Vec<(String, Value)>,
}

impl ObjectiveRun {
    pub fn tokens(&self) -> (u64, u64) {
        self.turns
            .iter()
            .fold((0, 0), |(i, o), t| (i + t.input_tokens, o + t.output_tokens))
    }
}

/// The agent of one run: a provider, its budgets, what it has spent.
pub struct Agent {
    provider: Box<dyn Provider>,
    max_turns: u32,
    max_run_tokens: u64,
    /// Tokens spent in this run; shared by every trail (and job) the agent serves.
    used: std::sync::atomic::AtomicU64,
    self_heal: bool,
    write_back: crate::WriteBack,
    /// The secrets: never sent, never reported.
    redact: Redaction,
    secret_names: Vec<String>,
    /// Whether the screen's picture goes with its text.
    eyes: super::vision::Eyes,
}

impl Agent {
    /// `secret_values` are scrubbed from all the model sees and says; `secret_names` are the
    /// placeholders it is told it may use.
    pub fn new(config: &AgentConfig, secret_values: &[String], secret_names: Vec<String>) -> Agent {
        Agent::with_provider(
            super::connect(&config.provider, secret_values),
            config,
            secret_values,
            secret_names,
        )
    }

    /// [`Agent::new`] with a provider of the caller's (an embedder's, a test's).
    pub fn with_provider(
        provider: Box<dyn Provider>,
        config: &AgentConfig,
        secret_values: &[String],
        secret_names: Vec<String>,
    ) -> Agent {
        // The key too: a model (or a provider's echo) must not carry it into a request body or a report.
        let mut values = secret_values.to_vec();
        values.extend(config.provider.api_key.as_ref().map(|k| k.expose().to_string()));
        Agent {
            provider,
            max_turns: config.max_turns.max(1),
            max_run_tokens: config.max_run_tokens,
            used: Default::default(),
            self_heal: config.self_heal,
            write_back: config.write_back,
            redact: Redaction::new(&values),
            secret_names,
            eyes: super::vision::Eyes::new(config.vision),
        }
    }

    pub fn model(&self) -> &str {
        self.provider.model()
    }

    pub fn provider_name(&self) -> &'static str {
        self.provider.kind().name()
    }

    /// Tokens spent so far in this run.
    pub fn tokens_used(&self) -> u64 {
        self.used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether a recorded step that fails is given to the agent too.
    pub fn self_heal(&self) -> bool {
        self.self_heal
    }

    /// Where what the agent did is written.
    pub fn write_back(&self) -> crate::WriteBack {
        self.write_back
    }

    /// Runs `objective` on `session`; `seen` is the last step seq already looked at, moved past
    /// what the agent's calls logged.
    pub fn run(&self, session: &Session, catalog: &Catalog, objective: &Objective<'_>, seen: &mut u64) -> ObjectiveRun {
        let mut run = ObjectiveRun {
            end: End::OutOfTurns { turns: self.max_turns },
            calls: Vec::new(),
            turns: Vec::new(),
            recording: Vec::new(),
        };
        let (system, mut messages) = self.opening(session, catalog, objective, seen);
        let mut recording = SessionRecording::new();
        for turn in 1..=self.max_turns {
            // Asked every turn: `setActiveToolSets` and a move to another waypoint change it.
            let tools = minimized::minimized(session.offered_tools());
            let used = self.tokens_used();
            if used >= self.max_run_tokens {
                run.end = End::OutOfTokens {
                    used,
                    budget: self.max_run_tokens,
                };
                break;
            }
            let request = ChatRequest {
                system: &system,
                tools: &tools,
                messages: &messages,
            };
            let asked = (trailblaze_core::device::trace::unix_ms_now(), std::time::Instant::now());
            let reply = match self.eyes.complete(self.provider.as_ref(), &request) {
                Ok(r) => r,
                Err(e) => {
                    run.end = End::Provider(e);
                    break;
                }
            };
            let (text, image) = request_of(&messages);
            let (calls, echoed) = self.take_reply(reply, &mut run.turns, &mut messages);
            if let Some(t) = run.turns.last_mut() {
                t.trace.unix_ms = asked.0;
                t.trace.duration_ms = asked.1.elapsed().as_secs_f64() * 1000.0;
                t.trace.request = text;
                t.trace.image = image;
                t.trace.tool_calls = calls
                    .iter()
                    .map(|c| serde_json::json!({ "tool": c.name, "args": c.args.as_ref().ok() }))
                    .collect();
            }
            if calls.is_empty() {
                messages.push(Message::User(vec![UserPart::Text(prompt::NUDGE.into())]));
                continue;
            }
            let at = Call {
                session,
                catalog,
                objective,
                tools: &tools,
                echoed: &echoed,
            };
            let (mut parts, changed, end) = self.run_calls(&at, &calls, turn, seen, &mut recording, &mut run.calls);
            if let Some(e) = end {
                run.end = e;
                break;
            }
            if changed {
                let now = screen_text(session, seen);
                parts.push(UserPart::Text(
                    self.scrub(&format!("The screen now:\n{}", now.trim_end())),
                ));
                parts.extend(self.eyes.screen(session, self.provider.kind()));
            }
            messages.push(Message::User(parts));
            if turn == self.max_turns {
                run.end = End::OutOfTurns { turns: turn };
            }
        }
        run.recording = recorded_calls(&recording, &run.end);
        run
    }

    /// The system prompt, and the first message: the objective and the screen.
    fn opening(
        &self,
        session: &Session,
        catalog: &Catalog,
        objective: &Objective<'_>,
        seen: &mut u64,
    ) -> (String, Vec<Message>) {
        let mut system = prompt::system(objective.verify, &self.secret_names);
        if let Some(about) = &catalog.system_prompt {
            system.push_str(&prompt::about_the_app(&self.scrub(about)));
        }
        let screen = screen_text(session, seen);
        let mut first = vec![UserPart::Text(self.scrub(&prompt::objective(objective, &screen)))];
        first.extend(self.eyes.screen(session, self.provider.kind()));
        (system, vec![Message::User(first)])
    }

    /// Counts a reply's tokens and keeps it as a turn and in the conversation; its calls, and the
    /// ids of those whose arguments held a secret's value.
    fn take_reply(
        &self,
        reply: ChatReply,
        turns: &mut Vec<Turn>,
        messages: &mut Vec<Message>,
    ) -> (Vec<ToolCall>, Vec<String>) {
        self.used.fetch_add(
            reply.usage.input + reply.usage.output,
            std::sync::atomic::Ordering::Relaxed,
        );
        let text = reply.text.as_deref().map(|t| self.scrub(t));
        // What the model said goes back as it was, less any secret value it might echo; a call
        // whose arguments held one is refused (it would type `***`).
        let mut echoed = Vec::new();
        let calls: Vec<ToolCall> = reply
            .calls
            .into_iter()
            .map(|mut c| {
                if let Ok(args) = &mut c.args {
                    let before = args.clone();
                    self.redact.value(args);
                    if *args != before {
                        echoed.push(c.id.clone());
                    }
                }
                c
            })
            .collect();
        turns.push(Turn {
            text: text.clone(),
            calls: calls.len(),
            input_tokens: reply.usage.input,
            output_tokens: reply.usage.output,
            trace: Default::default(),
        });
        messages.push(Message::Assistant {
            text,
            calls: calls.clone(),
        });
        (calls, echoed)
    }

    /// One turn's calls in order, each after the one that concluded the objective not run; their
    /// results for the model, whether any changed the screen, and how the objective ended.
    fn run_calls(
        &self,
        at: &Call<'_>,
        calls: &[ToolCall],
        turn: u32,
        seen: &mut u64,
        recording: &mut SessionRecording,
        done_calls: &mut Vec<AgentCall>,
    ) -> (Vec<UserPart>, bool, Option<End>) {
        let mut parts = Vec::new();
        let mut changed = false;
        let mut end = None;
        for call in calls {
            if end.is_some() {
                parts.push(result_part(call, "not run: the objective was concluded", true));
                continue;
            }
            let done = self.call(at, call, turn, seen, recording, done_calls);
            changed |= done.changed;
            end = done.end;
            parts.push(result_part(call, &self.scrub(&done.reply), !done.call.ok));
            done_calls.push(done.call);
        }
        (parts, changed, end)
    }

    pub(super) fn provider(&self) -> &dyn Provider {
        &*self.provider
    }

    pub(super) fn eyes(&self) -> &super::vision::Eyes {
        &self.eyes
    }

    /// The run's spent tokens, which every request adds to.
    pub(super) fn spent(&self) -> &std::sync::atomic::AtomicU64 {
        &self.used
    }

    pub(super) fn max_run_tokens(&self) -> u64 {
        self.max_run_tokens
    }

    pub(super) fn scrub(&self, text: &str) -> String {
        self.redact.text(text).into_owned()
    }

    /// One tool call: refused (unknown, hidden, not read-only in a check, a secret's value in its
    /// arguments, a check concluded with no assertion) or dispatched; what the model is told back.
    fn call(
        &self,
        at: &Call<'_>,
        call: &ToolCall,
        turn: u32,
        seen: &mut u64,
        recording: &mut SessionRecording,
        before: &[AgentCall],
    ) -> Done {
        let started = Instant::now();
        let mut done = Done {
            call: AgentCall {
                turn,
                tool: call.name.clone(),
                args: call.args.clone().unwrap_or(Value::Null),
                ok: false,
                error: None,
                result: None,
                records: Vec::new(),
                duration_ms: 0.0,
            },
            reply: String::new(),
            changed: false,
            end: None,
        };
        let (tool, args, status) = match admit(at, call, before) {
            Ok(admitted) => admitted,
            Err(why) => {
                done.call.error = Some(why.clone());
                done.reply = why;
                done.call.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
                return done;
            }
        };
        let (result, steps) = at.session.call_with_steps(&tool.name, args.clone(), *seen);
        *seen = steps.last().map_or(*seen, |s| s.seq);
        recording.add_call(at.catalog, &tool.name, &args, &steps);
        done.call.args = args.clone();
        done.call.records = steps;
        done.call.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.conclude(&mut done, &tool, &args, status.as_deref(), result);
        done
    }

    /// Sets what a dispatched call did in `done`: its result or error, and whether it ended the
    /// objective (`status`: the `objectiveStatus` it asked for, if it was that).
    fn conclude(
        &self,
        done: &mut Done,
        tool: &ToolDescriptor,
        args: &Value,
        status: Option<&str>,
        result: Result<Value, trailblaze_core::dispatch::CallError>,
    ) {
        match result {
            Ok(v) => {
                done.call.ok = true;
                done.changed = !tool.flags.read_only;
                done.reply = reply_text(&tool.name, &v);
                done.call.result = Some(v);
                if status == Some("COMPLETED") {
                    done.end = Some(End::Completed {
                        explanation: self.scrub(args.get("explanation").and_then(Value::as_str).unwrap_or_default()),
                    });
                }
            }
            Err(e) => {
                let text = self.scrub(&e.to_string());
                if e.is_device_failure() {
                    done.end = Some(End::Device { message: text.clone() });
                }
                if status == Some("FAILED") && matches!(e, trailblaze_core::dispatch::CallError::Failed { .. }) {
                    done.end = Some(End::Failed {
                        explanation: self.scrub(args.get("explanation").and_then(Value::as_str).unwrap_or_default()),
                    });
                }
                done.call.error = Some(text.clone());
                done.reply = format!("error: {text}");
            }
        }
    }
}

/// A call the model may make here: its tool, its arguments (nulls the schema does not take
/// dropped) and the status it concludes with, if it is `objectiveStatus`; or why it is refused.
fn admit(
    at: &Call<'_>,
    call: &ToolCall,
    before: &[AgentCall],
) -> Result<(Arc<ToolDescriptor>, Value, Option<String>), String> {
    let mut args = match &call.args {
        Ok(v) => v.clone(),
        Err(why) => return Err(format!("{}: {why}", call.name)),
    };
    let tool = match at.catalog.llm_tool(&call.name) {
        Ok(t) => t.clone(),
        Err(e) => return Err(e.to_string()),
    };
    if !at.tools.iter().any(|t| t.name == tool.name) {
        return Err(format!("`{}` is not offered here", tool.name));
    }
    if at.objective.verify && !tool.flags.read_only {
        return Err(format!(
            "`{}` acts on the device, and this step is a check: use read-only tools \
             (snapshot, assertVisible, assertNotVisibleWithText, ...), then objectiveStatus",
            tool.name
        ));
    }
    if at.echoed.contains(&call.id) {
        return Err(
            "the arguments hold a secret's value: type a secret as its placeholder, `{{secret:NAME}}`".to_string(),
        );
    }
    minimized::strip_nulls(&tool.advertised_schema(), &mut args);
    let status = (tool.name == OBJECTIVE_STATUS)
        .then(|| args.get("status").and_then(Value::as_str).map(str::to_string))
        .flatten();
    if at.objective.verify
        && status.as_deref() == Some("COMPLETED")
        && !before.iter().any(|c| c.ok && recorded_something(at.catalog, c))
    {
        return Err(
            "a check is concluded after an assertion that proves it (assertVisible with the ref of \
             the node that shows it, or assertNotVisibleWithText), so a replay checks it again"
                .to_string(),
        );
    }
    Ok((tool, args, status))
}

/// The recordable calls of an objective's run, less `objectiveStatus`; a completion with none
/// is recorded as its `objectiveStatus`.
fn recorded_calls(recording: &SessionRecording, end: &End) -> Vec<(String, Value)> {
    let calls: Vec<(String, Value)> = recording
        .steps()
        .iter()
        .flat_map(|s| s.calls.iter().cloned())
        .filter(|(tool, _)| tool != OBJECTIVE_STATUS)
        .collect();
    if calls.is_empty()
        && let End::Completed { explanation } = end
    {
        // The goal held already: the replay reports the same, so the step counts as recorded.
        return vec![(
            OBJECTIVE_STATUS.to_string(),
            json!({ "explanation": explanation, "status": "COMPLETED" }),
        )];
    }
    calls
}

/// What one call needs to know about where it runs.
struct Call<'a> {
    session: &'a Session,
    catalog: &'a Catalog,
    objective: &'a Objective<'a>,
    tools: &'a [ToolDefinition],
    /// The calls whose arguments held a secret's value (scrubbed on the way in), by id.
    echoed: &'a [String],
}

struct Done {
    call: AgentCall,
    reply: String,
    changed: bool,
    end: Option<End>,
}

/// Whether a call left a recordable step besides `objectiveStatus` (an assertion, in a check).
fn recorded_something(catalog: &Catalog, c: &AgentCall) -> bool {
    trailblaze_core::recording::recordable_calls(catalog, &c.records)
        .iter()
        .any(|(t, _)| t != OBJECTIVE_STATUS)
}

fn result_part(call: &ToolCall, content: &str, is_error: bool) -> UserPart {
    UserPart::ToolResult {
        call_id: call.id.clone(),
        content: content.to_string(),
        is_error,
    }
}

/// A result as the model reads it: the screen's text for `snapshot`, compact JSON otherwise.
fn reply_text(tool: &str, v: &Value) -> String {
    let text = match v.get("text").and_then(Value::as_str) {
        Some(t) if tool == "snapshot" => t.trim_end().to_string(),
        _ => v.to_string(),
    };
    match text.char_indices().nth(MAX_RESULT_CHARS) {
        Some((at, _)) => format!("{}… (cut)", &text[..at]),
        None => text,
    }
}

/// The screen's compact text, through the dispatcher (`snapshot`: read-only, recorded nowhere).
fn screen_text(session: &Session, seen: &mut u64) -> String {
    let (result, steps) = session.call_with_steps("snapshot", json!({}), *seen);
    *seen = steps.last().map_or(*seen, |s| s.seq);
    match result {
        Ok(v) => v.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
        Err(e) => format!("(the screen could not be read: {e})"),
    }
}
