//! The minimized schemas accept and refuse exactly what the full ones do, judged by the runtime's own
//! checker over a table of cases per tool of the demo catalog (every tool, hidden ones too: their
//! selector grammar is recursive, which inlining must survive).

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use trailblaze_core::surface::check_value;

fn demo_catalog() -> Catalog {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps");
    let maps = trailblaze_core::trailmap::Trailmaps::discover(&root).expect("the demo trailmaps load");
    let registry = std::sync::Arc::new(trailblaze_host_functions::HostRegistry::builtin());
    Catalog::for_trailmap(&maps, "demo", registry).expect("the demo catalog")
}

fn accepts(schema: &Value, v: &Value) -> bool {
    check_value(schema, Some(schema), v).is_empty()
}

/// A schema with its local `$ref` resolved (one level), for picking sample values.
fn resolved<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    let mut at = s;
    for _ in 0..8 {
        let Some(r) = at.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(name) = trailblaze_core::surface::def_name(r) else {
            break;
        };
        match root
            .get("$defs")
            .or_else(|| root.get("definitions"))
            .and_then(|d| d.get(name))
        {
            Some(d) => at = d,
            None => break,
        }
    }
    at
}

/// A value of the type `s` describes (the first alternative that is not `null`).
fn sample(root: &Value, s: &Value, depth: usize) -> Value {
    let s = resolved(root, s);
    if depth > 6 {
        return json!("x");
    }
    if let Some(e) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.iter().find(|v| !v.is_null()))
    {
        return e.clone();
    }
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let alt = alts
                .iter()
                .find(|a| resolved(root, a).get("type") != Some(&json!("null")));
            if let Some(a) = alt {
                return sample(root, a, depth + 1);
            }
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string")
            .to_string(),
        _ if s.get("properties").is_some() => "object".into(),
        _ => "string".into(),
    };
    match ty.as_str() {
        "integer" => json!(1),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "array" => match s.get("items") {
            Some(items) => json!([sample(root, items, depth + 1)]),
            None => json!([]),
        },
        "object" => minimal(root, s, depth + 1),
        _ => json!("x"),
    }
}

fn required(s: &Value) -> Vec<String> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The object with only its required properties, each a sample.
fn minimal(root: &Value, s: &Value, depth: usize) -> Value {
    let mut m = serde_json::Map::new();
    for name in required(s) {
        let prop = s
            .get("properties")
            .and_then(|p| p.get(&name))
            .cloned()
            .unwrap_or(json!({}));
        m.insert(name, sample(root, &prop, depth));
    }
    Value::Object(m)
}

/// A value of another JSON kind than `v`.
fn wrong(v: &Value) -> Value {
    match v {
        Value::String(_) => json!(7),
        _ => json!("not-the-type"),
    }
}

/// The table of cases for one tool's (full) schema.
fn cases(full: &Value) -> Vec<Value> {
    let base = minimal(full, full, 0);
    let mut out = vec![json!({}), base.clone(), json!([]), json!("x"), json!(null)];
    let mut with = |k: &str, v: Value| {
        let mut c = base.clone();
        if let Some(m) = c.as_object_mut() {
            m.insert(k.to_string(), v);
        }
        out.push(c);
    };
    with("zzUnknown", json!(1));
    let props: Vec<(String, Value)> = full
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for (name, prop) in &props {
        let good = sample(full, prop, 0);
        with(name, good.clone());
        with(name, wrong(&good));
        with(name, Value::Null);
        with(name, json!("NOT_A_MEMBER"));
        with(name, json!(-1));
        with(name, json!(2.5));
        with(name, json!({ "zzUnknown": 1 }));
        with(name, json!([good.clone(), wrong(&good)]));
    }
    for name in required(full) {
        let mut c = base.clone();
        if let Some(m) = c.as_object_mut() {
            m.remove(&name);
        }
        out.push(c);
    }
    out
}

#[test]
fn minimized_schemas_accept_and_refuse_exactly_what_the_full_ones_do() {
    let catalog = demo_catalog();
    let (mut full_chars, mut min_chars, mut tools) = (0usize, 0usize, 0usize);
    let (mut full_llm, mut min_llm) = (0usize, 0usize);
    for tool in catalog.tools() {
        if matches!(tool.kind, trailblaze_core::tool::ToolKind::Broken { .. }) {
            continue;
        }
        tools += 1;
        let full = tool.advertised_schema();
        let min = minimize(&full, &tool.description);
        full_chars += full.to_string().len();
        min_chars += min.to_string().len();
        if tool.flags.surface_to_llm {
            full_llm += full.to_string().len();
            min_llm += min.to_string().len();
        }
        let table = cases(&full);
        let (mut yes, mut no) = (0, 0);
        for case in &table {
            let want = accepts(&full, case);
            let mut passed_on = case.clone();
            strip_nulls(&full, &mut passed_on);
            assert_eq!(
                accepts(&min, &passed_on),
                want,
                "{}: the minimized schema disagrees on {case}\nfull: {full}\nmin:  {min}",
                tool.name
            );
            // Where the model sent no null, nothing was stripped: the schemas agree on the case itself.
            if !case.as_object().is_some_and(|m| m.values().any(Value::is_null)) {
                assert_eq!(accepts(&min, case), want, "{}: {case}", tool.name);
            }
            if want { yes += 1 } else { no += 1 }
        }
        assert!(
            yes > 0 && no > 0,
            "{}: the table has accepted and refused cases ({yes}/{no})",
            tool.name
        );
    }
    assert!(tools > 40, "every catalog tool was compared ({tools})");
    let saved = |full: usize, min: usize| 100.0 * (full as f64 - min as f64) / full as f64;
    println!(
        "schema minimizing: the LLM-visible tools' schemas {full_llm} → {min_llm} characters ({:.0}% saved); \
         all {tools} tools {full_chars} → {min_chars} ({:.0}%)",
        saved(full_llm, min_llm),
        saved(full_chars, min_chars)
    );
    assert!(min_llm < full_llm && min_chars <= full_chars, "minimizing never adds");
}

/// Control: the same comparison catches a minimizer that changes what is accepted.
#[test]
fn control_a_lossy_minimizer_is_caught() {
    let catalog = demo_catalog();
    let tool = catalog.tool("pressKey").expect("pressKey");
    let full = tool.advertised_schema();
    let mut lossy = minimize(&full, &tool.description);
    lossy.as_object_mut().expect("object").remove("additionalProperties");
    let caught = cases(&full).iter().any(|c| accepts(&full, c) != accepts(&lossy, c));
    assert!(caught, "dropping additionalProperties must show in the table");
    let mut no_enum = minimize(&full, &tool.description);
    no_enum["properties"]["keyCode"]
        .as_object_mut()
        .expect("keyCode")
        .remove("enum");
    assert!(cases(&full).iter().any(|c| accepts(&full, c) != accepts(&no_enum, c)));
}

#[test]
fn minimizing_inlines_defs_collapses_constants_and_drops_nulls_and_duplicates() {
    let catalog = demo_catalog();
    let launch = catalog.tool("launchApp").expect("launchApp");
    let min = minimize(&launch.advertised_schema(), &launch.description);
    let text = min.to_string();
    for gone in [
        "$defs",
        "$ref",
        "oneOf",
        "anyOf",
        "\"null\"",
        "\"default\":null",
        "const",
    ] {
        assert!(!text.contains(gone), "{gone} is gone: {text}");
    }
    assert_eq!(
        min["properties"]["launchMode"]["enum"],
        json!(["REINSTALL", "FORCE_RESTART", "RESUME"])
    );
    assert!(
        min.get("description").is_none(),
        "the tool's own description is not repeated"
    );
    assert_eq!(min["properties"]["reasoning"]["type"], json!("string"));
    // Control: the full schema has each of them.
    let full = launch.advertised_schema().to_string();
    for there in ["$defs", "$ref", "oneOf", "\"null\""] {
        assert!(full.contains(there), "{there}");
    }
    // A recursive definition stays as a `$ref` with its `$defs`, and still checks values.
    let tap = catalog.tool("tapOnElementBySelector").expect("hidden tool");
    let min = minimize(&tap.advertised_schema(), &tap.description);
    assert!(min.get("$defs").is_some(), "the recursive selector grammar is kept");
    let sel = json!({ "nodeSelector": { "below": { "androidAccessibility": { "textRegex": "x" } } } });
    assert!(accepts(&min, &sel));
    assert!(!accepts(&min, &json!({ "nodeSelector": { "below": { "bogus": 1 } } })));
}

#[test]
fn the_agent_leaves_out_the_nulls_the_full_schema_reads_as_absent() {
    let catalog = demo_catalog();
    let full = catalog.tool("type").expect("type").advertised_schema();
    let mut args = json!({ "text": "hi", "ref": null, "keyCode": null });
    strip_nulls(&full, &mut args);
    assert_eq!(args, json!({ "text": "hi" }));
    // Control: a null where the schema takes none is passed on, to be refused with its path.
    let full = catalog.tool("pressKey").expect("pressKey").advertised_schema();
    let mut args = json!({ "keyCode": null });
    strip_nulls(&full, &mut args);
    assert_eq!(args, json!({ "keyCode": null }));
}

#[test]
fn definitions_for_the_model_are_shorter_and_name_the_same_tools() {
    let catalog = demo_catalog();
    let full = catalog.tool_definitions();
    let min = definitions_for_model(&catalog);
    let names = |d: &[ToolDefinition]| d.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&full), names(&min));
    let len = |d: &[ToolDefinition]| serde_json::to_string(d).map(|s| s.len()).unwrap_or(0);
    assert!(
        len(&min) * 10 < len(&full) * 9,
        "at least 10% shorter: {} vs {}",
        len(&min),
        len(&full)
    );
}
