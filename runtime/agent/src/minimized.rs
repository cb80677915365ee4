//! The tool schemas the agent sends the model, minimized: every request carries them, so every
//! character counts. MCP and `tools --json` keep the full ones ([`Catalog::tool_definitions`]).
//!
//! What goes: a schema-level `description` that repeats the tool's description; `$defs` (inlined
//! where used once: a model reads a flat schema more reliably than a `$ref`); `oneOf`/`anyOf` of
//! constants (collapsed into one `enum`); `null` alternatives and `default: null` of the optional
//! top-level arguments (a model leaves such an argument out; [`strip_nulls`] turns the `null` it
//! may still send into "left out" before the dispatcher sees it, which is how the full schema and
//! serde's `Option` read it anyway). Everything that decides what is accepted stays, so the
//! minimized schema accepts exactly what the full one does (a test proves it per catalog tool).

use serde_json::{Map, Value};

use trailblaze_core::catalog::{Catalog, ToolDefinition};

/// How deep inlining follows `$ref`s before it keeps one as it is.
const MAX_INLINE_DEPTH: usize = 32;

/// The LLM-visible tools as the agent sends them: names and descriptions as MCP has them, the
/// schemas minimized.
pub fn definitions_for_model(catalog: &Catalog) -> Vec<ToolDefinition> {
    minimized(catalog.tool_definitions())
}

/// `defs` (what a session offers now) with their schemas minimized.
pub fn minimized(defs: Vec<ToolDefinition>) -> Vec<ToolDefinition> {
    defs.into_iter()
        .map(|d| ToolDefinition {
            input_schema: minimize(&d.input_schema, &d.description),
            ..d
        })
        .collect()
}

/// `schema` (a tool's advertised input schema) minimized; `tool_description` is what the model is
/// sent beside it, so a schema description equal to it is dropped.
pub fn minimize(schema: &Value, tool_description: &str) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object);
    let mut uses = std::collections::BTreeMap::new();
    count_refs(schema, &mut uses);
    let mut cx = Inline {
        defs,
        uses,
        stack: Vec::new(),
        kept: Map::new(),
    };
    let mut out = cx.node(schema, 0);
    let Some(root) = out.as_object_mut() else {
        return out;
    };
    root.remove("$defs");
    root.remove("definitions");
    if root
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| same_text(d, tool_description))
    {
        root.remove("description");
    }
    let required: Vec<String> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = root.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                drop_null(prop);
            }
        }
    }
    // A shared or recursive definition stays, under the name its `$ref`s use.
    if !cx.kept.is_empty() {
        root.insert("$defs".into(), Value::Object(cx.kept));
    }
    out
}

/// Descriptions compared as a reader would: whitespace (line breaks of doc comments) aside.
fn same_text(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// How many `$ref`s name each local definition.
fn count_refs(v: &Value, uses: &mut std::collections::BTreeMap<String, usize>) {
    match v {
        Value::Object(m) => {
            if let Some(name) = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(trailblaze_core::surface::def_name)
            {
                *uses.entry(name.to_string()).or_default() += 1;
            }
            m.values().for_each(|x| count_refs(x, uses));
        }
        Value::Array(items) => items.iter().for_each(|x| count_refs(x, uses)),
        _ => {}
    }
}

struct Inline<'a> {
    defs: Option<&'a Map<String, Value>>,
    /// A definition used more than once stays one (inlining it would repeat it).
    uses: std::collections::BTreeMap<String, usize>,
    /// The definitions being inlined, outermost first: a `$ref` to one of them is a cycle.
    stack: Vec<String>,
    /// Definitions that stay (recursive ones), minimized.
    kept: Map<String, Value>,
}

impl Inline<'_> {
    fn node(&mut self, v: &Value, depth: usize) -> Value {
        let Value::Object(m) = v else { return v.clone() };
        if let Some(found) = self.inline_ref(m, depth) {
            return found;
        }
        let mut out = Map::with_capacity(m.len());
        for (k, x) in m {
            let value = match k.as_str() {
                "$defs" | "definitions" => x.clone(),
                "title" => continue,
                // Maps of name → schema.
                "properties" | "patternProperties" => match x {
                    Value::Object(props) => Value::Object(
                        props
                            .iter()
                            .map(|(name, s)| (name.clone(), self.node(s, depth)))
                            .collect(),
                    ),
                    other => other.clone(),
                },
                // Lists of schemas.
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => match x {
                    Value::Array(items) => Value::Array(items.iter().map(|s| self.node(s, depth)).collect()),
                    other => other.clone(),
                },
                // One schema (or a boolean, kept as it is).
                "items" | "additionalProperties" | "not" | "contains" | "propertyNames" => self.node(x, depth),
                _ => x.clone(),
            };
            out.insert(k.clone(), value);
        }
        collapse_constants(&mut out);
        Value::Object(out)
    }

    /// `{"$ref": "#/$defs/X", ...siblings}` as X's schema with the siblings over it (the property's
    /// own description wins over the definition's); `None` when it is not a local `$ref`. The `$ref`
    /// stays (its definition kept, minimized) when X is used more than once or is being inlined
    /// already (recursion).
    fn inline_ref(&mut self, m: &Map<String, Value>, depth: usize) -> Option<Value> {
        let name = trailblaze_core::surface::def_name(m.get("$ref")?.as_str()?)?.to_string();
        let def = self.defs?.get(&name)?;
        let shared = self.uses.get(&name).copied().unwrap_or(0) > 1;
        if shared || self.stack.contains(&name) || depth >= MAX_INLINE_DEPTH {
            if !self.kept.contains_key(&name) {
                // Marked first, so the definition's own recursion stops here.
                self.kept.insert(name.clone(), Value::Null);
                self.stack.push(name.clone());
                let body = self.node(def, depth + 1);
                self.stack.pop();
                self.kept.insert(name.clone(), body);
            }
            let mut kept = Map::new();
            for (k, x) in m {
                kept.insert(k.clone(), if k == "$ref" { x.clone() } else { self.node(x, depth) });
            }
            return Some(Value::Object(kept));
        }
        self.stack.push(name.clone());
        let mut body = self.node(def, depth + 1);
        self.stack.pop();
        let Value::Object(obj) = &mut body else {
            return Some(body);
        };
        for (k, x) in m {
            if k != "$ref" && k != "title" {
                obj.insert(k.clone(), self.node(x, depth));
            }
        }
        collapse_constants(obj);
        Some(body)
    }
}

/// `oneOf`/`anyOf` whose every alternative is one constant (schemars' form for documented enum
/// variants) as one `enum` (with the `type` when they share one).
fn collapse_constants(m: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(alts)) = m.get(key) else { continue };
        let mut consts = Vec::new();
        let mut types: Vec<Option<&str>> = Vec::new();
        for a in alts {
            let Some(obj) = a.as_object() else { return };
            let Some(c) = obj.get("const") else { return };
            if obj
                .keys()
                .any(|k| !["const", "type", "description", "title"].contains(&k.as_str()))
            {
                return;
            }
            types.push(obj.get("type").and_then(Value::as_str));
            consts.push(c.clone());
        }
        if consts.is_empty() {
            return;
        }
        let shared = types
            .first()
            .copied()
            .flatten()
            .filter(|t| types.iter().all(|x| *x == Some(t)));
        let shared = shared.map(str::to_string);
        m.remove(key);
        if let Some(t) = shared {
            m.entry("type").or_insert(Value::String(t));
        }
        m.insert("enum".into(), Value::Array(consts));
        return;
    }
}

/// An optional argument's `null` alternative, and its `default: null`, dropped.
fn drop_null(prop: &mut Value) {
    let Some(m) = prop.as_object_mut() else { return };
    if m.get("default") == Some(&Value::Null) {
        m.remove("default");
    }
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            m.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(items)) = m.get_mut("enum") {
        items.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = m.get_mut(key) else {
            continue;
        };
        alts.retain(|a| !is_null_schema(a));
        if alts.len() == 1 {
            // One alternative left: it becomes the property, whose own keys (its description) win.
            let Some(Value::Object(only)) = alts.pop() else {
                continue;
            };
            m.remove(key);
            for (k, x) in only {
                m.entry(k).or_insert(x);
            }
        }
    }
}

fn is_null_schema(v: &Value) -> bool {
    match v.as_object() {
        Some(m) => {
            m.get("type").and_then(Value::as_str) == Some("null")
                && m.keys().all(|k| ["type", "description", "title"].contains(&k.as_str()))
                || m.get("const") == Some(&Value::Null) && m.len() == 1
        }
        None => false,
    }
}

/// The model's arguments with each top-level `null` left out where the full schema allows `null`
/// for an optional argument: what [`minimize`] dropped from the schema, read as serde reads it.
pub fn strip_nulls(full_schema: &Value, args: &mut Value) {
    let Some(obj) = args.as_object_mut() else { return };
    let required: Vec<&str> = full_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = full_schema.get("properties").and_then(Value::as_object);
    obj.retain(|k, v| {
        if !v.is_null() || required.contains(&k.as_str()) {
            return true;
        }
        let Some(prop) = props.and_then(|p| p.get(k)) else {
            return true;
        };
        // Kept (to be refused) unless the full schema takes `null` here.
        !trailblaze_core::surface::check_value(prop, Some(full_schema), &Value::Null).is_empty()
    });
}

#[cfg(test)]
#[path = "minimized_tests.rs"]
mod tests;
