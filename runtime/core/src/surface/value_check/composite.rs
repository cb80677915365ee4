//! Objects, arrays and unions (`anyOf`/`oneOf`): the shapes whose parts are checked in turn.

use super::*;

pub(super) fn object<'a>(
    obj: &'a Map<String, Value>,
    defs: Defs<'a>,
    map: &'a Map<String, Value>,
    path: &mut Vec<Seg<'a>>,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let empty = EMPTY.get_or_init(Map::new);
    let props = field(obj, "properties").and_then(Value::as_object).unwrap_or(empty);
    for name in field(obj, "required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(name) = name.as_str()
            && field(map, name).is_none()
        {
            let parent = render_path(path);
            path.push(Seg::Key(name));
            let kind = FindingKind::MissingKey {
                parent,
                key: name.to_string(),
            };
            push_kind(out, path, format!("missing required argument `{}`", short(name)), kind);
            path.pop();
        }
    }
    for (key, v) in map {
        path.push(Seg::Key(key));
        if let Some(s) = field(props, key) {
            check(s, defs, v, path, depth + 1, out);
        } else {
            match field(obj, "additionalProperties") {
                Some(Value::Bool(false)) => {
                    let kind = FindingKind::UnknownKey {
                        parent: render_path(&path[..path.len() - 1]),
                        key: key.clone(),
                        expected: props.keys().cloned().collect(),
                    };
                    push_kind(out, path, unknown_key(key, props), kind)
                }
                Some(s @ Value::Object(_)) => check(s, defs, v, path, depth + 1, out),
                _ => {}
            }
        }
        path.pop();
    }
}

pub(super) fn unknown_key(key: &str, props: &Map<String, Value>) -> String {
    let mut msg = format!("unknown argument `{}`", short(key));
    if props.is_empty() {
        msg.push_str("; none are accepted here");
    } else if let Some(near) = nearest(key, props.keys().map(String::as_str)) {
        msg.push_str(&trailblaze_host_functions::decode::did_you_mean(&[near]));
    } else if props.len() <= MAX_LISTED {
        let names: Vec<String> = props.keys().map(|k| format!("`{k}`")).collect();
        let _ = write!(msg, " (known: {})", names.join(", "));
    }
    msg
}

/// The most similar name, if any is similar enough to be a likely typo.
pub(super) fn nearest<'n>(key: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let lower = key.to_lowercase();
    names
        .map(|n| {
            let score = if n.to_lowercase() == lower {
                1.0
            } else {
                strsim::jaro_winkler(&lower, &n.to_lowercase())
            };
            (score, n)
        })
        .filter(|(score, _)| *score >= 0.8)
        // Ties keep the first name, in schema order: deterministic.
        .fold(None, |best: Option<(f64, &str)>, (s, n)| match best {
            Some((b, _)) if b >= s => best,
            _ => Some((s, n)),
        })
        .map(|(_, n)| n)
}

pub(super) fn array<'a>(
    obj: &'a Map<String, Value>,
    defs: Defs<'a>,
    items: &'a [Value],
    path: &mut Vec<Seg<'a>>,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    let count = |k: &str| field(obj, k).and_then(Value::as_u64);
    if let Some(min) = count("minItems")
        && (items.len() as u64) < min
    {
        push(
            out,
            path,
            format!("expected at least {min} items, found {}", items.len()),
        );
    }
    if let Some(max) = count("maxItems")
        && (items.len() as u64) > max
    {
        push(
            out,
            path,
            format!("expected at most {max} items, found {}", items.len()),
        );
    }
    let prefix = obj
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, v) in items.iter().enumerate() {
        let schema = match prefix.get(i) {
            Some(s) => Some(s),
            None => field(obj, "items"),
        };
        if let Some(s) = schema {
            path.push(Seg::Index(i));
            check(s, defs, v, path, depth + 1, out);
            path.pop();
        }
    }
}

/// The literals a schema admits when it is nothing but literals (an enum, consts, `null`), as
/// schemars writes Rust enums (`oneOf` of `enum` and `const` branches) and `Option<Enum>`.
pub(super) fn literals<'s>(schema: &'s Value, defs: Defs<'s>, depth: usize) -> Option<Vec<&'s Value>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let obj = schema.as_object()?;
    if let Some(reference) = field(obj, "$ref").and_then(Value::as_str) {
        let (target, scope) = defs.resolve(reference)?;
        return literals(target, scope, depth + 1);
    }
    if let Some(e) = field(obj, "enum").and_then(Value::as_array) {
        return Some(e.iter().collect());
    }
    if let Some(c) = field(obj, "const") {
        return Some(vec![c]);
    }
    if let Some(branches) = field(obj, "anyOf")
        .or_else(|| field(obj, "oneOf"))
        .and_then(Value::as_array)
    {
        let mut all = Vec::new();
        for b in branches {
            all.extend(literals(b, defs, depth + 1)?);
        }
        return Some(all);
    }
    if type_list(obj)? == ["null"] {
        return Some(vec![&Value::Null]);
    }
    None
}

/// The JSON Schema types a schema admits at its top, `None` when unconstrained.
pub(super) fn kinds<'s>(schema: &'s Value, defs: Defs<'s>, depth: usize) -> Option<Vec<&'s str>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let obj = schema.as_object()?;
    if let Some(reference) = field(obj, "$ref").and_then(Value::as_str) {
        let (target, scope) = defs.resolve(reference)?;
        return kinds(target, scope, depth + 1);
    }
    if let Some(types) = type_list(obj) {
        return Some(types);
    }
    if let Some(values) = field(obj, "enum").and_then(Value::as_array) {
        return Some(values.iter().map(kind).collect());
    }
    if let Some(c) = field(obj, "const") {
        return Some(vec![kind(c)]);
    }
    let branches = obj
        .get("anyOf")
        .or_else(|| field(obj, "oneOf"))
        .and_then(Value::as_array)?;
    let mut all = Vec::new();
    for b in branches {
        all.extend(kinds(b, defs, depth + 1)?);
    }
    Some(all)
}

/// `anyOf` and `oneOf` alike: the value must match a branch. `oneOf`'s "exactly one" is not
/// enforced: schemars emits disjoint branches, and serde takes the first variant that fits.
pub(super) fn any_of<'a>(
    branches: &'a [Value],
    defs: Defs<'a>,
    value: &'a Value,
    path: &mut Vec<Seg<'a>>,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    let mut results = Vec::with_capacity(branches.len());
    for b in branches {
        let mut found = Vec::new();
        check(b, defs, value, path, depth + 1, &mut found);
        if found.is_empty() {
            return;
        }
        results.push((b, found));
    }
    if results.is_empty() {
        return;
    }
    // Nothing but literals: list them.
    let mut all_literals = Vec::new();
    if branches.iter().all(|b| match literals(b, defs, depth + 1) {
        Some(ls) => {
            all_literals.extend(ls);
            true
        }
        None => false,
    }) {
        return push(out, path, not_one_of(&all_literals, value));
    }
    // Otherwise report the branch the value was evidently meant for: the one of its kind, or among
    // several, the one it comes closest to.
    let fitting: Vec<&(&Value, Vec<Finding>)> = results
        .iter()
        .filter(|(b, _)| kinds(b, defs, depth + 1).is_none_or(|ks| ks.iter().any(|k| kind_fits(value, k))))
        .collect();
    let fewest = fitting.iter().map(|(_, f)| f.len()).min();
    let closest: Vec<_> = fitting.iter().filter(|(_, f)| Some(f.len()) == fewest).collect();
    match closest.as_slice() {
        [(_, findings)] => out.extend(findings.iter().cloned()),
        _ => {
            let mut expected: Vec<String> = Vec::new();
            for b in branches {
                for k in kinds(b, defs, depth + 1).unwrap_or_default() {
                    if !expected.iter().any(|e| e == k) {
                        expected.push(k.to_string());
                    }
                }
            }
            let message = if fitting.is_empty() && !expected.is_empty() {
                format!("expected {}, found {}", join_or(&expected), kind(value))
            } else {
                format!("matches none of the {} allowed forms", branches.len())
            };
            push(out, path, message);
        }
    }
}
