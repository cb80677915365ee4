//! The built-in tool reference (`docs/tools.md`), generated from a catalog's tool descriptors so the
//! page cannot drift from what the dispatcher accepts: a test regenerates it and compares.

// Reached from outside the crate only once `lib.rs` re-exports `tool_reference` (the lead's file);
// until then only this module's tests call it.
#![cfg_attr(not(test), allow(dead_code))]

use std::fmt::Write as _;

use serde_json::Value;

use super::{Defs, SELECTOR_TYPE};
use trailblaze_core::catalog::Catalog;
use trailblaze_core::tool::ToolDescriptor;

/// What a reader runs to rewrite `docs/tools.md` after the catalog changed.
pub const BLESS_COMMAND: &str = "TRAILBLAZE_BLESS=1 cargo test -p trailblaze-gates --lib docs_tools_md";

/// Nesting rendered inline before a type is shortened to `object`.
const MAX_DEPTH: usize = 4;

/// The Markdown reference of every tool in `catalog`: LLM-visible ones first, then hidden ones,
/// each with its flags, description, arguments (type, required, default) and result type.
pub fn tool_reference(catalog: &Catalog) -> String {
    render(catalog.tools().map(|t| t.as_ref()))
}

/// [`tool_reference`] over any list of descriptors (sorted by name here, so the order given does
/// not matter).
pub fn render<'a>(tools: impl IntoIterator<Item = &'a ToolDescriptor>) -> String {
    let mut tools: Vec<&ToolDescriptor> = tools.into_iter().collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let (visible, hidden): (Vec<_>, Vec<_>) = tools.into_iter().partition(|t| t.flags.surface_to_llm);
    let mut out = String::from(
        "<!-- GENERATED from the built-in catalog by runtime/gates/src/surface/reference.rs. DO NOT EDIT. -->\n\
         # Built-in tools\n\n\
         Every tool a trail, a script (`ctx.tools`) or the LLM can call without a trailmap of its own.\n\
         **LLM-visible** tools are the ones the LLM may be offered and `trailblaze tool` runs (which of\n\
         them a session offers is its toolsets' choice: [navigation.md](navigation.md#toolsets)); they\n\
         pick elements by ref. **Hidden** tools are what recordings hold (selectors instead of refs);\n\
         trails and scripts call them, the LLM never sees them. *Recorded* tools' calls go into\n\
         recordings; *read-only* tools keep the cached snapshot.\n\n\
         Every tool the original (block/trailblaze) declares is here under its name and arguments, but\n\
         three left out on purpose: `mobile_maestro` (raw Maestro commands: this host has no Maestro\n\
         driver, and its commands would bypass the dispatcher's checks), the `revyl_*` tools (a cloud\n\
         device service's own driver, with its own account) and `_yaml_defined` (the original's internal\n\
         marker for YAML-defined tools, no tool). `tests/e2e/original_catalog.rs` holds this list.\n\n",
    );
    let _ = writeln!(out, "Refresh this page with `{BLESS_COMMAND}`.\n");
    for (title, group) in [("LLM-visible tools", &visible), ("Hidden tools", &hidden)] {
        let _ = writeln!(out, "## {title}\n");
        for t in group.iter() {
            let _ = writeln!(out, "- [`{}`](#{})", t.name, t.name.to_lowercase());
        }
        out.push('\n');
    }
    for t in visible.iter().chain(hidden.iter()) {
        tool_section(&mut out, t);
    }
    // One trailing newline, as editors save files.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn tool_section(out: &mut String, t: &ToolDescriptor) {
    let _ = writeln!(out, "### `{}`\n", t.name);
    let mut flags = vec![if t.flags.surface_to_llm {
        "LLM-visible"
    } else {
        "hidden"
    }];
    flags.push(if t.flags.is_recordable {
        "recorded"
    } else {
        "not recorded"
    });
    if t.flags.read_only {
        flags.push("read-only");
    }
    let _ = writeln!(out, "*{}*\n", flags.join(" · "));
    let description = one_paragraph(&t.description);
    if !description.is_empty() {
        let _ = writeln!(out, "{description}\n");
    }
    let schema = &t.input_schema;
    let defs = Defs::new(schema, None);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            out.push_str("| argument | type | required | description |\n| --- | --- | --- | --- |\n");
            for (name, prop) in props {
                let mut text = one_paragraph(prop.get("description").and_then(Value::as_str).unwrap_or(""));
                if let Some(d) = prop.get("default").filter(|d| !d.is_null()) {
                    let _ = write!(text, "{}default `{d}`", if text.is_empty() { "" } else { " · " });
                }
                let _ = writeln!(
                    out,
                    "| `{name}` | {} | {} | {} |",
                    cell(&format!("`{}`", type_of(prop, defs, 0))),
                    if required.contains(&name.as_str()) { "yes" } else { "no" },
                    cell(&text)
                );
            }
            out.push('\n');
        }
        _ => out.push_str("No arguments.\n\n"),
    }
    let result = match &*t.output_schema {
        Some(r) => type_of(r, Defs::new(r, None), 0),
        None => "unknown".to_string(),
    };
    let _ = writeln!(out, "Result: `{result}`\n");
}

/// Doc comments wrap at the source's width; a table cell or paragraph wants one line.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A schema as a short TypeScript-like type: `string`, `integer`, `"BACK" | "ENTER"`, `T[]`,
/// `{ x: integer; y?: string }`, the selector grammar by name.
fn type_of(schema: &Value, defs: Defs<'_>, depth: usize) -> String {
    let Some(obj) = schema.as_object() else {
        return "unknown".into();
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        if defs.ref_name(r) == Some(SELECTOR_TYPE) {
            return SELECTOR_TYPE.into();
        }
        return match defs.resolve(r) {
            Some((target, inner)) if depth < MAX_DEPTH => type_of(target, inner, depth + 1),
            _ => defs.ref_name(r).unwrap_or("unknown").to_string(),
        };
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    if let Some(c) = obj.get("const") {
        return c.to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(parts) = obj.get(key).and_then(Value::as_array) {
            let parts: Vec<String> = parts.iter().map(|p| type_of(p, defs, depth + 1)).collect();
            return parts.join(" | ");
        }
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return "unknown".into(),
    };
    let parts: Vec<String> = types.iter().map(|t| one_type(t, obj, defs, depth)).collect();
    parts.join(" | ")
}

fn one_type(t: &str, obj: &serde_json::Map<String, Value>, defs: Defs<'_>, depth: usize) -> String {
    match t {
        "array" => match obj.get("items") {
            Some(items) => {
                let inner = type_of(items, defs, depth + 1);
                if inner.contains(' ') && !inner.starts_with('{') {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "unknown[]".into(),
        },
        "object" => {
            let props = obj.get("properties").and_then(Value::as_object);
            match props {
                Some(props) if !props.is_empty() && depth < MAX_DEPTH => {
                    let required: Vec<&str> = obj
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let fields: Vec<String> = props
                        .iter()
                        .map(|(k, v)| {
                            let opt = if required.contains(&k.as_str()) { "" } else { "?" };
                            format!("{k}{opt}: {}", type_of(v, defs, depth + 1))
                        })
                        .collect();
                    format!("{{ {} }}", fields.join("; "))
                }
                _ => match obj.get("additionalProperties") {
                    Some(v @ Value::Object(_)) => format!("Record<string, {}>", type_of(v, defs, depth + 1)),
                    _ => "object".into(),
                },
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;
    use trailblaze_core::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

    fn docs_file() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md")
    }

    fn builtins() -> Catalog {
        Catalog::builtins_only(Path::new("."))
    }

    /// `Ok` when the page on disk is what the catalog generates; else the first differing line and
    /// how to refresh the page.
    fn compare(on_disk: &str, generated: &str) -> Result<(), String> {
        if on_disk == generated {
            return Ok(());
        }
        let (mut disk, mut fresh) = (on_disk.lines(), generated.lines());
        let mut line = 1;
        loop {
            match (disk.next(), fresh.next()) {
                (a, b) if a == b && a.is_some() => line += 1,
                (a, b) => {
                    return Err(format!(
                        "docs/tools.md is stale at line {line}:\n  on disk:   {}\n  generated: {}\nrefresh it with `{BLESS_COMMAND}`",
                        a.unwrap_or("<end of file>"),
                        b.unwrap_or("<end of file>")
                    ));
                }
            }
        }
    }

    #[test]
    fn docs_tools_md_matches_the_catalog() {
        let generated = tool_reference(&builtins());
        let file = docs_file();
        if std::env::var_os("TRAILBLAZE_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&file, &generated).expect("write docs/tools.md");
            return;
        }
        let on_disk = std::fs::read_to_string(&file).unwrap_or_default();
        if let Err(e) = compare(&on_disk, &generated) {
            panic!("{e}");
        }
    }

    /// A tool that exists only in this test's catalog.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Extra {
        /// How far.
        #[allow(dead_code)]
        distance: u32,
    }

    impl BuiltinTool for Extra {
        const NAME: &'static str = "extraToolForTheControl";
        const FLAGS: ToolFlags = ToolFlags::HIDDEN;
        fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
            Ok(Outcome::Done(Value::Null))
        }
    }

    #[test]
    fn docs_tools_md_comparison_fails_for_an_extra_or_renamed_tool() {
        let on_disk = tool_reference(&builtins());
        let mut extra = builtins();
        extra.register_builtin(BuiltinEntry::of::<Extra>());
        let e = compare(&on_disk, &tool_reference(&extra)).expect_err("an extra tool is a difference");
        assert!(e.contains(BLESS_COMMAND) && e.contains("extraToolForTheControl"), "{e}");
        let cat = builtins();
        let mut renamed: Vec<ToolDescriptor> = cat.tools().map(|t| t.as_ref().clone()).collect();
        renamed[0].name.push_str("Renamed");
        let e = compare(&on_disk, &render(&renamed)).expect_err("a renamed tool is a difference");
        assert!(e.contains("Renamed"), "{e}");
        // Control: the same catalog, in another order, compares equal.
        let mut reversed: Vec<&ToolDescriptor> = cat.tools().map(|t| t.as_ref()).collect();
        reversed.reverse();
        assert_eq!(compare(&on_disk, &render(reversed)), Ok(()));
    }

    #[test]
    fn docs_tools_md_lists_every_tool_with_its_visibility_and_arguments() {
        let page = tool_reference(&builtins());
        let cat = builtins();
        for t in cat.tools() {
            assert!(page.contains(&format!("### `{}`", t.name)), "{} is documented", t.name);
        }
        // Hidden tools are there and marked; visible ones are marked too.
        let section = |name: &str| {
            let start = page.find(&format!("### `{name}`")).expect("section");
            page[start..].lines().nth(2).unwrap_or_default().to_string()
        };
        assert!(section("inputText").starts_with("*hidden"), "{}", section("inputText"));
        assert!(section("tap").starts_with("*LLM-visible"), "{}", section("tap"));
        // Types, required and enums come from the schema.
        assert!(
            page.contains("| `nodeSelector` | `TrailblazeNodeSelector` | yes |"),
            "{page}"
        );
        assert!(
            page.contains(r#""BACK" \| "ENTER""#),
            "the keyCode enum, escaped for the table"
        );
        assert!(page.contains("| `longPress` | `boolean` | no |"), "{page}");
        assert!(
            page.contains("Result: `{ tapped: { x: integer; y: integer } }`"),
            "{page}"
        );
    }
}
