//! How a script's failure is worded, the same whichever runtime ran it: the thrown error's name and
//! message, and the first stack frame in a `.ts` module mapped back to its source line.

use std::collections::HashMap;
use std::sync::Arc;

use super::transpile::Transpiled;

/// A thrown `Error`: `Name: message` with its stack for locating. A `TrailblazeToolError` is a failed
/// inner call whose message already says what failed; it passes through as it is.
pub fn thrown_error(name: Option<&str>, message: &str, stack: Option<String>) -> (String, Option<String>) {
    match name {
        Some("TrailblazeToolError") => (message.to_string(), None),
        Some(n) => (format!("{n}: {message}"), stack),
        None => (message.to_string(), stack),
    }
}

/// A thrown value that is not an `Error`: its text if it was a string.
pub fn thrown_value(text: Option<&str>) -> String {
    format!("threw {}", text.unwrap_or("a non-Error value was thrown"))
}

/// `message (at demo/tools/x.ts:12)` when the stack has a frame in one of `modules`.
pub fn with_location(message: String, stack: Option<&str>, modules: &HashMap<String, Arc<Transpiled>>) -> String {
    match stack.and_then(|st| ts_location(modules, st)) {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

/// Finds the first stack frame in a loaded `.ts` module and maps it to the source line. Frames look
/// like `at f (demo/tools/x.ts:12:5)` in QuickJS and `at f (file:///…/demo/tools/x.ts:12:5)` in Node.
fn ts_location(modules: &HashMap<String, Arc<Transpiled>>, stack: &str) -> Option<String> {
    for line in stack.lines() {
        for (module, t) in modules {
            let Some(pos) = line.find(&format!("{module}:")) else {
                continue;
            };
            let rest = &line[pos + module.len() + 1..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let out_line: u32 = digits.parse().ok()?;
            let src = t.source_line(out_line).unwrap_or(out_line);
            return Some(format!("{module}:{src}"));
        }
    }
    None
}
