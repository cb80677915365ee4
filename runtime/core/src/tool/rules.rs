//! Catalog rules, held by tests over every tool (each with a companion test that plants a violation):
//! no LLM-visible tool takes a selector-typed argument, and no tool's advertised schema has a top-level
//! combinator. The checks work on the JSON Schema, the one type model every tool has.

use serde_json::Value;

use super::ToolDescriptor;

/// The schema name of the selector type, as schemars and the analyzer both emit it.
pub use crate::script::analyze::SELECTOR_TYPE;

/// Paths (`nodeSelector`, `steps[].target`) of arguments whose type is a selector, or contains one.
pub fn selector_arguments(schema: &Value) -> Vec<String> {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions"));
    let mut out = Vec::new();
    walk(schema, defs, "", &mut out, 0);
    out
}

fn is_selector_ref(v: &Value) -> bool {
    v.get("$ref")
        .and_then(Value::as_str)
        .is_some_and(|r| r.rsplit('/').next() == Some(SELECTOR_TYPE))
}

fn walk(v: &Value, defs: Option<&Value>, path: &str, out: &mut Vec<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    if is_selector_ref(v) {
        out.push(if path.is_empty() {
            "(the arguments)".to_string()
        } else {
            path.to_string()
        });
        return;
    }
    // Follow a reference to another definition (a nested struct that holds a selector).
    if let (Some(r), Some(defs)) = (v.get("$ref").and_then(Value::as_str), defs)
        && let Some(target) = r.rsplit('/').next().and_then(|name| defs.get(name))
    {
        walk(target, Some(defs), path, out, depth + 1);
        return;
    }
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            let child = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            walk(p, defs, &child, out, depth + 1);
        }
    }
    if let Some(items) = v.get("items") {
        walk(items, defs, &format!("{path}[]"), out, depth + 1);
    }
    for (i, item) in v
        .get("prefixItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        walk(item, defs, &format!("{path}[{i}]"), out, depth + 1);
    }
    if let Some(extra) = v.get("additionalProperties").filter(|a| a.is_object()) {
        walk(extra, defs, &format!("{path}.*"), out, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for alt in v.get(key).and_then(Value::as_array).into_iter().flatten() {
            walk(alt, defs, path, out, depth + 1);
        }
    }
}

/// Combinators at the top level of a schema, which some LLM APIs reject for every tool in a request.
pub fn top_level_combinators(schema: &Value) -> Vec<&'static str> {
    ["oneOf", "anyOf", "allOf", "not"]
        .into_iter()
        .filter(|k| schema.get(*k).is_some())
        .collect()
}

/// Every rule violation in a set of tools, one line each (empty when all hold).
pub fn violations<'a>(tools: impl IntoIterator<Item = &'a ToolDescriptor>) -> Vec<String> {
    let mut out = Vec::new();
    for t in tools {
        if t.flags.surface_to_llm {
            for p in selector_arguments(&t.input_schema) {
                out.push(format!(
                    "{}: LLM-visible but takes a selector (`{p}`); take a snapshot ref instead",
                    t.name
                ));
            }
        }
        for k in top_level_combinators(&t.input_schema) {
            out.push(format!(
                "{}: top-level `{k}` in its schema; state the rule in the fields' descriptions",
                t.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::selector::TrailblazeNodeSelector;
    use crate::tool::builtin_tools;
    use crate::tool::{BuiltinEntry, BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags};

    #[test]
    fn every_builtin_tool_holds_the_catalog_rules() {
        let tools = builtin_tools();
        assert!(tools.len() >= 13, "the catalog is populated");
        assert_eq!(violations(tools.iter()), Vec::<String>::new());
    }

    #[test]
    fn the_hidden_recording_tools_do_take_selectors() {
        // The check below is not vacuous: the schemas it reads do carry selector references.
        let tools = builtin_tools();
        let input_text = tools.iter().find(|t| t.name == "inputText").expect("inputText");
        assert_eq!(selector_arguments(&input_text.input_schema), ["nodeSelector"]);
        assert!(!input_text.flags.surface_to_llm);
    }

    /// Planted: an LLM-visible tool that takes a selector, nested in a list of structs.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Planted {
        #[allow(dead_code)]
        targets: Vec<Target>,
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Target {
        #[allow(dead_code)]
        selector: TrailblazeNodeSelector,
    }
    impl BuiltinTool for Planted {
        const NAME: &'static str = "planted";
        const FLAGS: ToolFlags = ToolFlags::DEFAULT;
        fn run(self, _cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
            Ok(Outcome::Done(json!({})))
        }
    }

    #[test]
    fn a_planted_selector_argument_is_caught() {
        let planted = ToolDescriptor::builtin(BuiltinEntry::of::<Planted>());
        let found = violations([&planted]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("targets[].selector"), "{found:?}");
        // The same tool hidden from the LLM is fine.
        let mut hidden = planted;
        hidden.flags.surface_to_llm = false;
        assert!(violations([&hidden]).is_empty());
    }

    #[test]
    fn a_planted_top_level_combinator_is_caught() {
        let mut t = ToolDescriptor::builtin(BuiltinEntry::of::<Planted>());
        t.flags.surface_to_llm = false;
        *t.input_schema = json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(top_level_combinators(&t.input_schema), ["oneOf"]);
        assert_eq!(violations([&t]).len(), 1);
        *t.input_schema = json!({"not": {"required": ["a", "b"]}});
        assert_eq!(top_level_combinators(&t.input_schema), ["not"]);
        // Nested combinators (an optional field's `anyOf` with null) are fine.
        *t.input_schema =
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}});
        assert!(violations([&t]).is_empty());
    }
}
