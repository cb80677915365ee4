//! `check --tsc`: a trail's recorded calls as a `<trail>.trail.gen.ts` file, one statement per line,
//! with a table from each line back to its step, so every tsc diagnostic maps to exactly one call.
//!
//! Layout: the gen files are written in a folder of the check's own under the cache folder (never
//! beside the trails), and [`trails_tsconfig`] written there lists the recordable surface's `.d.ts`
//! and the gen files by absolute path, with the SDK path mapping.
//! Each call reads
//!
//! ```ts
//! call("inputText", {"text":"12345678"}); // step 3
//! ```
//!
//! against `declare function call<K extends keyof TrailblazeToolMap>(tool: K, args: ToolArgs<K>)`.
//! `keyof` an interface holds only the surface's names (a `tools.x(...)` member access would also
//! accept `constructor` or `isPrototypeOf`, which every object has), and the args object literal
//! gets tsc's excess-property check at every depth. All diagnostics land on the call's own line.

use serde_json::Value;

use super::dts::{GENERATED_BANNER, SDK_MODULE, tsconfig};
use super::json_for_ts;

/// One recorded call to write.
#[derive(Debug, Clone)]
pub struct GenCall<'a> {
    /// `step 3` or `trailhead`.
    pub step: String,
    pub tool: &'a str,
    /// The arguments exactly as replay would dispatch them.
    pub args: &'a Value,
    /// Where the call is in the trail's YAML (1-based).
    pub yaml_line: usize,
    pub yaml_col: usize,
}

/// Which call a line of the gen file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEntry {
    /// 1-based, as tsc counts.
    pub ts_line: usize,
    pub step: String,
    pub tool: String,
    pub yaml_line: usize,
    pub yaml_col: usize,
}

/// The statements before the calls. `ToolArgs` pulls `args` out of an entry (see the SDK: the map's
/// entries are unconstrained, so `TrailblazeToolMap[K]["args"]` would not type-check).
const PRELUDE: &str = "declare function call<K extends keyof TrailblazeToolMap>(tool: K, args: ToolArgs<K>): void;";

/// The gen file's text and its line table, filled while writing. `header_imports` is written after
/// the banner and before the file's own import: extra lines such as a comment naming the trail or a
/// `/// <reference path="..." />` (empty for none). Each call is one line whatever its arguments
/// hold (JSON escapes line breaks; U+2028/U+2029, which tsc counts as line breaks, are escaped too).
pub fn trail_gen_ts(header_imports: &str, calls: &[GenCall]) -> (String, Vec<LineEntry>) {
    let mut text = String::new();
    let mut line = 0;
    let mut push_line = |text: &mut String, s: &str| {
        text.push_str(s);
        text.push('\n');
        line += 1;
        line
    };
    push_line(&mut text, GENERATED_BANNER);
    // Any line break tsc knows counts here, so the table stays exact whatever the header holds.
    for l in header_imports.split(['\n', '\r', '\u{2028}', '\u{2029}']) {
        if !l.is_empty() {
            push_line(&mut text, l);
        }
    }
    push_line(
        &mut text,
        &format!("import type {{ ToolArgs, TrailblazeToolMap }} from \"{SDK_MODULE}\";"),
    );
    push_line(&mut text, PRELUDE);
    let mut table = Vec::with_capacity(calls.len());
    for c in calls {
        let tool = json_for_ts(&Value::String(c.tool.to_string()));
        let statement = format!("call({tool}, {}); // {}", json_for_ts(c.args), comment(&c.step));
        let ts_line = push_line(&mut text, &statement);
        table.push(LineEntry {
            ts_line,
            step: c.step.clone(),
            tool: c.tool.to_string(),
            yaml_line: c.yaml_line,
            yaml_col: c.yaml_col,
        });
    }
    (text, table)
}

/// The step label as a line comment's text: no line breaks.
fn comment(step: &str) -> String {
    step.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The call a diagnostic's line belongs to; `None` for the header lines (a diagnostic there means
/// the surface or the SDK is broken, not the trail).
pub fn entry_for_line(table: &[LineEntry], ts_line: usize) -> Option<&LineEntry> {
    table
        .binary_search_by_key(&ts_line, |e| e.ts_line)
        .ok()
        .map(|i| &table[i])
}

/// The tsconfig for compiling gen files, written in the folder that holds them (e.g. `trails/`).
/// All paths are relative to that folder: `sdk_src` to `sdk-ts/src/index.ts`, `client_dts` to the
/// trailmap's `tools/trailblaze-client.d.ts` (e.g. `../tools/trailblaze-client.d.ts`), `gen_files`
/// the gen files (e.g. `sign-in.trail.gen.ts`). Listing the files (no `include`) keeps stale gen
/// files and the trailmap's tools out of the run.
pub fn trails_tsconfig(sdk_src: &str, client_dts: &str, gen_files: &[&str]) -> String {
    let files: Vec<String> = std::iter::once(client_dts)
        .chain(gen_files.iter().copied())
        .map(|f| Value::String(f.to_string()).to_string())
        .collect();
    tsconfig(sdk_src, &format!("\"files\": [{}]", files.join(", ")))
}

#[cfg(test)]
#[path = "tsgen_tests.rs"]
mod tests;
