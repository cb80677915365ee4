//! The original's tools about the app and the screen as a whole: stopping the app, typing a unique
//! value and remembering it, waiting for the screen to change and settle, and the whole view tree.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::results;
use super::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

/// Stops (kills) the app with this id, e.g. when it is in a bad state; `launchApp` starts it again.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StopApp {
    /// The app's id (its Android package name).
    pub app_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Stopped {
    pub stopped: String,
}

impl BuiltinTool for StopApp {
    fn result_schema() -> Option<Value> {
        results::schema::<Stopped>()
    }
    const NAME: &'static str = "stopApp";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        cx.screen.with_device(|d| d.stop_app(&self.app_id))?;
        results::done(Stopped { stopped: self.app_id })
    }
}

/// Types a fresh unique value (a prefix and random digits, e.g. `TBZ-481732`) into the focused field
/// and remembers it as `variable`, so a later step finds what this run created with `{{variable}}`.
/// Tap the field first; the keyboard is hidden afterwards unless `hideKeyboardAfter` is false.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InputTextRandom {
    /// The name to remember the value under (recall it as `{{variable}}`).
    pub variable: String,
    /// The text before the digits (default `TBZ-`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// How many random digits follow it (default 6, at most 64).
    #[serde(default)]
    pub digit_count: Option<u32>,
    /// Hide the keyboard after typing (default true).
    #[serde(default)]
    pub hide_keyboard_after: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RandomTyped {
    pub variable: String,
    pub value: String,
}

impl BuiltinTool for InputTextRandom {
    fn result_schema() -> Option<Value> {
        results::schema::<RandomTyped>()
    }
    const NAME: &'static str = "inputTextRandom";
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let digits = self.digit_count.unwrap_or(6);
        if !(1..=64).contains(&digits) {
            return Err("`digitCount` must be between 1 and 64".into());
        }
        let value = format!("{}{}", self.prefix.as_deref().unwrap_or("TBZ-"), random_digits(digits));
        // Checked before typing: a name that cannot be remembered must not leave typed text behind.
        let mut scratch = cx.memory.borrow().clone();
        scratch.remember(&self.variable, &value)?;
        cx.screen.with_device(|d| d.input_text(&value))?;
        cx.memory.borrow_mut().remember(&self.variable, &value)?;
        if self.hide_keyboard_after.unwrap_or(true) {
            cx.screen.with_device(|d| d.hide_keyboard())?;
        }
        results::done(RandomTyped {
            variable: self.variable,
            value,
        })
    }
}

/// `n` decimal digits from the standard library's randomly keyed hasher (no seed shared between
/// processes, nothing to install).
fn random_digits(n: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let state = std::collections::hash_map::RandomState::new();
    let mut out = String::with_capacity(n as usize);
    while out.len() < n as usize {
        let mut h = state.build_hasher();
        h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        let mut x = h.finish();
        // 19 digits of a u64 are uniform enough for a label; take them one at a time.
        for _ in 0..19 {
            if out.len() == n as usize {
                break;
            }
            out.push(char::from(b'0' + (x % 10) as u8));
            x /= 10;
        }
    }
    out
}

/// Waits until the screen has changed and then stayed still for `quietWindowMs`, e.g. after an
/// action that loads a screen; better than a fixed `wait`. It cannot wait for a change that has not
/// started yet: for that, assert the element you expect. On a device whose screen only changes when
/// a tool acts (the simulated one) the screen is settled already.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitForChange {
    /// The longest wait, in milliseconds (default 8000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// How long the screen must stay unchanged to count as settled, in milliseconds (default 300).
    #[serde(default)]
    pub quiet_window_ms: Option<u64>,
    /// When true (the default), no change within `timeoutMs` is a failure; when false it is a
    /// settled screen.
    #[serde(default)]
    pub require_change: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Settled {
    /// Whether the screen changed while it was watched.
    pub changed: bool,
    pub waited_ms: u64,
}

impl BuiltinTool for WaitForChange {
    fn result_schema() -> Option<Value> {
        results::schema::<Settled>()
    }
    const NAME: &'static str = "waitForChange";
    // Not read-only: the screen it returns on is a new one.
    const FLAGS: ToolFlags = ToolFlags::DEFAULT;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let timeout = self.timeout_ms.unwrap_or(8000);
        let quiet = self.quiet_window_ms.unwrap_or(300);
        if timeout == 0 || quiet == 0 {
            return Err("`timeoutMs` and `quietWindowMs` must be above 0".into());
        }
        let started = Instant::now();
        let waited = |started: Instant| started.elapsed().as_millis() as u64;
        if !cx.screen.with_device(|d| Ok(d.changes_on_its_own()))? {
            return results::done(Settled {
                changed: false,
                waited_ms: 0,
            });
        }
        let slice = Duration::from_millis(quiet.min(250));
        let until = started + Duration::from_millis(timeout);
        let mut last = cx.recapture()?;
        let mut changed = false;
        let mut still_since = Instant::now();
        while Instant::now() < until {
            cx.sleep(slice.min(until.saturating_duration_since(Instant::now())))?;
            let now = cx.recapture()?;
            if now.same_screen(&last) {
                if changed && still_since.elapsed() >= Duration::from_millis(quiet) {
                    return results::done(Settled {
                        changed: true,
                        waited_ms: waited(started),
                    });
                }
            } else {
                changed = true;
                still_since = Instant::now();
                last = now;
            }
        }
        match (changed, self.require_change.unwrap_or(true)) {
            (true, _) => Err(format!("the screen was still changing after {timeout} ms (`timeoutMs`)").into()),
            (false, true) => Err(format!("the screen did not change within {timeout} ms (`timeoutMs`)").into()),
            (false, false) => results::done(Settled {
                changed: false,
                waited_ms: waited(started),
            }),
        }
    }
}

/// Lists the whole view tree: every node, static labels and layout containers included, each with
/// its ref, class, texts, id and bounds. Use it when the element you expect is not in the snapshot's
/// compact list; tap what you find by ref as usual.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequestDetailedViewHierarchy {
    /// Why (recordings of the original carry it; it changes nothing).
    #[serde(default)]
    #[allow(dead_code)]
    pub reasoning: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Hierarchy {
    pub text: String,
}

impl BuiltinTool for RequestDetailedViewHierarchy {
    fn result_schema() -> Option<Value> {
        results::schema::<Hierarchy>()
    }
    const NAME: &'static str = "requestDetailedViewHierarchy";
    const FLAGS: ToolFlags = ToolFlags {
        surface_to_llm: true,
        is_recordable: false,
        read_only: true,
    };
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let snap = cx.screen.snapshot()?;
        let mut text = String::new();
        for n in &snap.nodes {
            let class = n.class_name.rsplit('.').next().unwrap_or(&n.class_name);
            let mut line = format!("{}[{}] {class}", "  ".repeat(n.depth), n.r#ref);
            let q = |s: &str| cx.redact.text(s).replace('"', "\\\"");
            for (key, v) in [
                ("text", &n.text),
                ("hint", &n.hint_text),
                ("desc", &n.content_description),
                ("id", &n.resource_id),
            ] {
                if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                    line.push_str(&format!(" {key}=\"{}\"", q(v)));
                }
            }
            let b = n.bounds;
            line.push_str(&format!(" [{},{} {},{}]", b.left, b.top, b.right, b.bottom));
            text.push_str(&line);
            text.push('\n');
        }
        results::done(Hierarchy { text })
    }
}

pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<StopApp>(),
        BuiltinEntry::of::<InputTextRandom>(),
        BuiltinEntry::of::<WaitForChange>(),
        BuiltinEntry::of::<RequestDetailedViewHierarchy>(),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn random_digits_have_the_length_asked_and_differ() {
        let a = super::random_digits(20);
        let b = super::random_digits(20);
        assert_eq!(a.len(), 20);
        assert!(a.chars().all(|c| c.is_ascii_digit()));
        assert_ne!(a, b);
    }
}
