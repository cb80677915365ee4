//! The native type gate: a JSON value against a JSON Schema (the draft 2020-12 subset schemars and
//! the analyzer emit). It must agree with `check --tsc` and with the strict serde decode that
//! replay runs, so where JSON Schema and serde differ it follows serde (see `integer`).
//!
//! Findings never quote the value: they say what was expected and what kind was found, because an
//! argument may hold a resolved secret or personal data.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::Defs;

mod composite;
mod finding;

use composite::*;
pub use finding::{Finding, FindingKind};
use finding::{Seg, push, push_kind, render_path, short};

/// Nesting followed before giving up: values and schemas (`$ref` hops included). The selector
/// grammar is recursive, so a hostile recording could otherwise nest without end.
const MAX_DEPTH: usize = 128;

/// Names longer than this are cut in messages.
const MAX_NAME_CHARS: usize = 64;

/// Enum values listed in a message before "and N more".
const MAX_LISTED: usize = 16;

/// Checks `value` against `schema` (whose `$defs` / `definitions` resolve `$ref`s; `defs` may come
/// from a shared document such as the selector grammar: a whole schema document, e.g.
/// `schema_for!(TrailblazeNodeSelector)`, or a bare `$defs` map). Never quotes the
/// value: messages say what was expected and what kind was found.
pub fn check_value(schema: &Value, defs: Option<&Value>, value: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    check(schema, Defs::new(schema, defs), value, &mut path, 0, &mut out);
    out
}

/// The JSON kind of a value, as messages name it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Integers are what serde decodes into an integer type: `3` passes, `3.5` and `3.0` do not (serde
/// refuses a float for `u32` even when it is whole, and replay decodes with serde).
fn is_integer(v: &Value) -> bool {
    v.as_number().is_some_and(|n| n.is_i64() || n.is_u64())
}

/// Whether `v` is of the JSON Schema type `ty`. Unknown type names accept anything.
fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "integer" => is_integer(v),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

/// Like [`has_type`], but a fractional number still counts as the integer branch's kind: the branch
/// then explains "expected integer" instead of the union saying "matches nothing".
fn kind_fits(v: &Value, ty: &str) -> bool {
    has_type(v, ty) || (ty == "integer" && v.is_number())
}

/// `obj[key]`: a schema object has a handful of keys, which a scan compares faster than hashing the
/// key (serde_json's maps hash with SipHash); a big map is looked up by hash.
fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if obj.len() <= 8 {
        obj.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        obj.get(key)
    }
}

/// The keywords [`check`] reads from every schema object, found in one pass over its keys: a
/// recorded call's arguments meet a dozen schema objects, and each keyword looked up on its own
/// was a scan of the keys (most of the type gate's time).
#[derive(Default)]
struct Keywords<'a> {
    reference: Option<&'a Value>,
    one_of_values: Option<&'a Value>,
    constant: Option<&'a Value>,
    ty: Option<&'a Value>,
    any_of: Option<&'a Value>,
    one_of: Option<&'a Value>,
    all_of: Option<&'a Value>,
    format: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn of(obj: &'a Map<String, Value>) -> Keywords<'a> {
        let mut k = Keywords::default();
        for (key, v) in obj {
            let slot = match key.as_str() {
                "$ref" => &mut k.reference,
                "enum" => &mut k.one_of_values,
                "const" => &mut k.constant,
                "type" => &mut k.ty,
                "anyOf" => &mut k.any_of,
                "oneOf" => &mut k.one_of,
                "allOf" => &mut k.all_of,
                "format" => &mut k.format,
                _ => continue,
            };
            *slot = Some(v);
        }
        k
    }
}

fn type_list(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    match field(schema, "type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::String(s) => format!("`{}`", short(s)),
        other => format!("`{other}`"),
    }
}

fn list_literals(values: &[&Value]) -> String {
    let mut shown: Vec<String> = values.iter().take(MAX_LISTED).map(|v| literal(v)).collect();
    if values.len() > MAX_LISTED {
        shown.push(format!("{} more", values.len() - MAX_LISTED));
    }
    shown.join(", ")
}

/// Holds `value` (at `path`) to `schema`, adding what does not fit to `out`.
fn check<'a>(
    schema: &'a Value,
    defs: Defs<'a>,
    value: &'a Value,
    path: &mut Vec<Seg<'a>>,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    if depth > MAX_DEPTH {
        push(
            out,
            path,
            format!("nested more than {MAX_DEPTH} levels deep; not checked"),
        );
        return;
    }
    let obj = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(out, path, "no value is allowed here".into()),
        Value::Object(obj) => obj,
        // Not a schema: nothing to hold the value to.
        _ => return,
    };

    let kw = Keywords::of(obj);
    if let Some(reference) = kw.reference.and_then(Value::as_str) {
        match defs.resolve(reference) {
            Some((target, scope)) => check(target, scope, value, path, depth + 1, out),
            None => push(
                out,
                path,
                format!("cannot check: the schema's `$ref` {reference} does not resolve"),
            ),
        }
    }

    // Literal sets first: "expected one of `BACK`, `ENTER`" says more than "expected string".
    if !literal_fits(&kw, value, path, out) || !type_fits(obj, &kw, value, path, out) {
        return;
    }

    for branches in [kw.any_of, kw.one_of].into_iter().flatten() {
        if let Some(branches) = branches.as_array() {
            any_of(branches, defs, value, path, depth, out);
        }
    }
    if let Some(all) = kw.all_of.and_then(Value::as_array) {
        for s in all {
            check(s, defs, value, path, depth + 1, out);
        }
    }
    check_inside(obj, &kw, defs, value, path, depth, out);
}

/// Holds `value` to the schema's `enum` or `const`; false, after a finding, when it is not one of them.
fn literal_fits(kw: &Keywords<'_>, value: &Value, path: &[Seg<'_>], out: &mut Vec<Finding>) -> bool {
    if let Some(allowed) = kw.one_of_values.and_then(Value::as_array) {
        if !allowed.contains(value) {
            let values: Vec<&Value> = allowed.iter().collect();
            push(out, path, not_one_of(&values, value));
            return false;
        }
    } else if let Some(c) = kw.constant
        && c != value
    {
        push(out, path, not_one_of(&[c], value));
        return false;
    }
    true
}

/// Holds `value` to the schema's `type`; false, after a finding, when it is of another kind.
fn type_fits(
    obj: &Map<String, Value>,
    kw: &Keywords<'_>,
    value: &Value,
    path: &[Seg<'_>],
    out: &mut Vec<Finding>,
) -> bool {
    // Tested without collecting the type names: they are only listed when the value does not fit.
    let fits = match kw.ty {
        Some(Value::String(t)) => has_type(value, t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(|t| has_type(value, t)),
        _ => true,
    };
    if fits {
        return true;
    }
    let Some(types) = type_list(obj) else {
        return true;
    };
    let expected: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let found = match value.as_f64() {
        Some(f) if types.contains(&"integer") && f.fract() != 0.0 => "number with a fractional part",
        Some(_) if types.contains(&"integer") => "number with a decimal point",
        _ => kind(value),
    };
    // A mismatched kind says it all; descending would only add noise.
    let joined = join_or(&expected);
    push_kind(
        out,
        path,
        format!("expected {joined}, found {found}"),
        FindingKind::WrongType {
            expected: joined,
            found,
        },
    );
    false
}

/// The checks that depend on what `value` is: a pattern's syntax, a number's bounds, an object's
/// properties, an array's items.
fn check_inside<'a>(
    obj: &'a Map<String, Value>,
    kw: &Keywords<'a>,
    defs: Defs<'a>,
    value: &'a Value,
    path: &mut Vec<Seg<'a>>,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    match value {
        // A `{{name}}` token (a remembered value, an argument) resolves when the call runs, and the
        // pattern is checked then: `{{` alone reads as a bad repetition.
        Value::String(s)
            if kw.format.and_then(Value::as_str) == Some("regex") && !(s.contains("{{") && s.contains("}}")) =>
        {
            if let Err(why) = crate::selector::check_pattern(s) {
                push(out, path, why);
            }
        }
        Value::Number(_) => {
            // The schema's own bounds say it better (`must be at least 0`); the width only when they
            // said nothing.
            let before = out.len();
            bounds(obj, value, path, out);
            if out.len() == before {
                integer_format(kw.format, value, path, out);
            }
        }
        Value::Object(map) => object(obj, defs, map, path, depth, out),
        Value::Array(items) => array(obj, defs, items, path, depth, out),
        _ => {}
    }
}

fn not_one_of(allowed: &[&Value], value: &Value) -> String {
    let kinds_fit = allowed.iter().any(|a| kind(a) == kind(value));
    if kinds_fit {
        format!("not one of the allowed values: {}", list_literals(allowed))
    } else {
        format!("expected one of {}, found {}", list_literals(allowed), kind(value))
    }
}

/// schemars writes an integer's Rust width as `format` (`int32`, `uint32`, ...); replay decodes with
/// serde into that width, so a value outside it is a finding here, not a failure at run time.
fn integer_format(format: Option<&Value>, value: &Value, path: &[Seg<'_>], out: &mut Vec<Finding>) {
    let range: (i128, i128) = match format.and_then(Value::as_str) {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("uint8") => (0, u8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("uint16") => (0, u16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("int64") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint64" | "uint") => (0, u64::MAX.into()),
        _ => return,
    };
    let n = value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from));
    if let Some(n) = n
        && (n < range.0 || n > range.1)
    {
        push(out, path, format!("must be between {} and {}", range.0, range.1));
    }
}

fn bounds(obj: &Map<String, Value>, value: &Value, path: &[Seg<'_>], out: &mut Vec<Finding>) {
    let Some(x) = value.as_f64() else { return };
    let bound = |k: &str| field(obj, k).and_then(Value::as_f64);
    if let Some(m) = bound("minimum")
        && x < m
    {
        push(out, path, format!("must be at least {m}"));
    }
    if let Some(m) = bound("exclusiveMinimum")
        && x <= m
    {
        push(out, path, format!("must be greater than {m}"));
    }
    if let Some(m) = bound("maximum")
        && x > m
    {
        push(out, path, format!("must be at most {m}"));
    }
    if let Some(m) = bound("exclusiveMaximum")
        && x >= m
    {
        push(out, path, format!("must be less than {m}"));
    }
}

/// The JSON kind of a value as findings name it (`string`, `object`, ...), never the value.
pub fn kind_of(v: &Value) -> &'static str {
    kind(v)
}
