//! How a script's failure is worded, the same whichever runtime ran it: the thrown error's name and
//! message, and the first stack frame in a `.ts` module mapped back to its source line.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
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

/// The failure of a promise the tool did not await (found when the tool returned): names the inner
/// tool when it was a `ctx.tools` call.
pub fn unawaited(tool: Option<&str>, message: &str) -> String {
    match tool {
        Some(t) => format!("an un-awaited ctx.tools.{t}(...) call failed: {message}"),
        None => format!("a promise it did not await failed: {message}"),
    }
}

/// `message (at trailmaps/demo/tools/x.ts:12)` when the stack has a frame in one of `modules`
/// (module names are relative to `root`; the position is shown as [`shown_path`] says).
pub fn with_location(
    message: String,
    stack: Option<&str>,
    modules: &HashMap<String, Arc<Transpiled>>,
    root: &Path,
) -> String {
    match stack.and_then(|st| ts_location(modules, st)) {
        Some((module, line)) => format!("{message} (at {}:{line})", shown_path(root, &module)),
        None => message,
    }
}

/// Module `module` (relative to the trailmaps folder `root`) as a path a terminal opens from the
/// current directory: relative when it is under it, absolute otherwise.
pub fn shown_path(root: &Path, module: &str) -> String {
    let file = root.join(module);
    let cwd = std::env::current_dir().ok();
    let absolute = match (&cwd, file.is_absolute()) {
        (_, true) => file,
        (Some(cwd), false) => cwd.join(&file),
        (None, false) => return clean(&file).display().to_string(),
    };
    let absolute = clean(&absolute);
    match cwd.as_deref().and_then(|c| absolute.strip_prefix(clean(c)).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => absolute.display().to_string(),
    }
}

/// A message that starts with `module` (swc's `demo/tools/x.ts:3:5: ...`) with that prefix shown as
/// [`shown_path`] says.
pub fn shown_in(root: &Path, module: &str, message: String) -> String {
    match message.strip_prefix(module) {
        Some(rest) if rest.starts_with(':') => format!("{}{rest}", shown_path(root, module)),
        _ => message,
    }
}

/// `path` without `.` parts and with `..` applied (lexically: trailmaps hold no symlink tricks here).
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Finds the first stack frame in a loaded `.ts` module and maps it to the source line. Frames look
/// like `at f (demo/tools/x.ts:12:5)` in QuickJS and `at f (file:///…/demo/tools/x.ts:12:5)` in Node.
fn ts_location(modules: &HashMap<String, Arc<Transpiled>>, stack: &str) -> Option<(String, u32)> {
    for line in stack.lines() {
        for (module, t) in modules {
            let Some(pos) = line.find(&format!("{module}:")) else {
                continue;
            };
            let rest = &line[pos + module.len() + 1..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let out_line: u32 = digits.parse().ok()?;
            let src = t.source_line(out_line).unwrap_or(out_line);
            return Some((module.clone(), src));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_under_the_current_directory_is_shown_relative_and_elsewhere_absolute() {
        let cwd = std::env::current_dir().expect("cwd");
        let under = cwd.join("trailmaps");
        assert_eq!(shown_path(&under, "demo/tools/x.ts"), "trailmaps/demo/tools/x.ts");
        assert_eq!(
            shown_path(Path::new("./trailmaps"), "demo/tools/x.ts"),
            "trailmaps/demo/tools/x.ts"
        );
        // Control: a folder outside the current directory keeps its whole path.
        let outside = Path::new("/nowhere-near/trailmaps");
        assert_eq!(
            shown_path(outside, "demo/tools/x.ts"),
            "/nowhere-near/trailmaps/demo/tools/x.ts"
        );
        assert_eq!(
            shown_in(outside, "demo/tools/x.ts", "demo/tools/x.ts:3:5: oops".into()),
            "/nowhere-near/trailmaps/demo/tools/x.ts:3:5: oops"
        );
        assert_eq!(shown_in(outside, "demo/tools/x.ts", "other".into()), "other");
    }
}
