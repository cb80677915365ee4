//! JSON Schema building blocks for [`super::lower`]: `null` handling (schemars' rules, so
//! scripted and built-in tools' schemas read alike), folding union members, and object schemas
//! taken apart to merge and edit.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

/// Whether a schema accepts anything (`{}`, maybe with a description).
pub(super) fn is_any(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| o.keys().all(|k| k == "description"))
}

pub(super) fn is_null(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.get("type").and_then(Value::as_str) == Some("null") && o.keys().all(|k| k == "type" || k == "description")
    })
}

/// Makes `schema` accept `null` too, as schemars does for `Option<T>`.
pub(super) fn allow_null(schema: Value) -> Value {
    let Value::Object(mut o) = schema else {
        return schema;
    };
    if is_any(&Value::Object(o.clone())) || is_null(&Value::Object(o.clone())) {
        return Value::Object(o);
    }
    let only_any_of = o.keys().all(|k| k == "anyOf" || k == "description");
    if let (true, Some(Value::Array(members))) = (only_any_of, o.get_mut("anyOf")) {
        if !members.iter().any(is_null) {
            members.push(json!({"type": "null"}));
        }
        return Value::Object(o);
    }
    if ["$ref", "anyOf", "allOf", "oneOf", "if"]
        .iter()
        .any(|k| o.contains_key(*k))
    {
        return json!({"anyOf": [o, {"type": "null"}]});
    }
    match o.get_mut("type") {
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => types.push("null".into()),
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            o.insert("type".into(), json!([t, "null"]));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = o.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    Value::Object(o)
}

/// Removes what makes `schema` accept `null` (undoing [`allow_null`]); true if it did.
pub(super) fn strip_null(schema: &mut Value) -> bool {
    let Value::Object(o) = schema else {
        return false;
    };
    let mut stripped = false;
    if let Some(Value::Array(types)) = o.get_mut("type")
        && types.len() > 1
        && types.iter().any(|t| t == "null")
    {
        types.retain(|t| t != "null");
        stripped = true;
        if let [only] = &types[..] {
            let only = only.clone();
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum")
        && values.len() > 1
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        stripped = true;
    }
    let alone = o.len() == 1;
    if let Some(Value::Array(members)) = o.get_mut("anyOf")
        && members.iter().any(is_null)
    {
        members.retain(|s| !is_null(s));
        stripped = true;
        if members.len() == 1 && alone {
            let only = members.pop().unwrap_or_default();
            *schema = only;
        }
    }
    stripped
}

pub(super) fn push_unique(members: &mut Vec<Value>, schema: Value) {
    if !members.contains(&schema) {
        members.push(schema);
    }
}

/// Several union members (no `null`, no `{}`): primitive ones fold into one `type` list and
/// `enum`; the rest stay `anyOf` members, in order.
pub(super) fn merge_members(members: Vec<Value>) -> Value {
    let mut out: Vec<Value> = Vec::new();
    let mut prims = Prims::default();
    let mut prims_at = None;
    for schema in members {
        match primitive_parts(&schema) {
            Some(parts) => {
                for (ty, values) in parts {
                    match values {
                        None => prims.add(ty, None),
                        Some(values) if values.is_empty() => prims.add_type(ty),
                        Some(values) => values.into_iter().for_each(|v| prims.add(ty.clone(), Some(v))),
                    }
                }
                prims_at.get_or_insert(out.len());
            }
            None => out.push(schema),
        }
    }
    if let Some(at) = prims_at {
        let folded = prims.into_schemas();
        out.splice(at..at, folded);
    }
    match out.len() {
        1 => out.pop().unwrap_or_default(),
        _ => json!({"anyOf": out}),
    }
}

/// A schema made only of `type` (primitive types) and maybe `enum`: per type, `None` when
/// any value goes, else the allowed values.
#[allow(clippy::type_complexity)]
pub(super) fn primitive_parts(schema: &Value) -> Option<Vec<(String, Option<Vec<Value>>)>> {
    let o = schema.as_object()?;
    if !o.keys().all(|k| matches!(k.as_str(), "type" | "enum" | "description")) {
        return None;
    }
    let types: Vec<String> = match o.get("type")? {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .map(|t| t.as_str().map(str::to_owned))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    if !types
        .iter()
        .all(|t| matches!(t.as_str(), "string" | "number" | "boolean"))
    {
        return None;
    }
    let values = match o.get("enum") {
        None => None,
        Some(Value::Array(values)) => Some(values),
        Some(_) => return None,
    };
    Some(
        types
            .into_iter()
            .map(|t| {
                let allowed = values.map(|vs| vs.iter().filter(|v| json_type(v) == t).cloned().collect());
                (t, allowed)
            })
            .collect(),
    )
}

pub(super) fn json_type(value: &Value) -> String {
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
    .to_owned()
}

/// Primitive union members being folded: the types in order, which of them are open (any
/// value), and the literal values in order.
#[derive(Default)]
pub(super) struct Prims {
    types: Vec<String>,
    open: HashSet<String>,
    values: Vec<Value>,
}

impl Prims {
    pub(super) fn add_type(&mut self, ty: String) {
        if !self.types.contains(&ty) {
            self.types.push(ty);
        }
    }

    pub(super) fn add(&mut self, ty: String, value: Option<Value>) {
        match value {
            None => {
                self.open.insert(ty.clone());
            }
            Some(v) => push_unique(&mut self.values, v),
        }
        self.add_type(ty);
    }

    pub(super) fn into_schemas(mut self) -> Vec<Value> {
        // `true | false` is `boolean`.
        if self.values.contains(&Value::Bool(true)) && self.values.contains(&Value::Bool(false)) {
            self.open.insert("boolean".into());
        }
        let open = &self.open;
        self.values.retain(|v| !open.contains(&json_type(v)));
        let type_value = |types: &[String]| match types {
            [one] => Value::from(one.as_str()),
            many => Value::from(many.to_vec()),
        };
        if self.types.iter().all(|t| open.contains(t)) {
            vec![json!({"type": type_value(&self.types)})]
        } else if open.is_empty() {
            vec![json!({"type": type_value(&self.types), "enum": self.values})]
        } else {
            // `"auto" | number`: one `type` + `enum` cannot say it.
            self.types
                .iter()
                .map(|t| {
                    if open.contains(t) {
                        json!({"type": t})
                    } else {
                        let values: Vec<&Value> = self.values.iter().filter(|v| &json_type(v) == t).collect();
                        json!({"type": t, "enum": values})
                    }
                })
                .collect()
        }
    }
}

/// Sets `description` (`replace`: even when the schema has one).
pub(super) fn describe(schema: &mut Value, doc: String, replace: bool) {
    if let Value::Object(o) = schema
        && (replace || !o.contains_key("description"))
    {
        o.insert("description".into(), Value::String(doc));
    }
}

/// A literal type's value as JSON: integral numbers as integers (`1`, not `1.0`).
pub(super) fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation)]
        Some(Value::from(n as i64))
    } else {
        serde_json::Number::from_f64(n).map(Value::Number)
    }
}

pub(super) enum Keys {
    AnyString,
    Listed(Vec<String>),
}

/// The keys a `Record`/`Pick`/`Omit` argument names: `string`, or string literals.
pub(super) fn keys_of(schema: &Value) -> Option<Keys> {
    let o = schema.as_object()?;
    if o.get("type").and_then(Value::as_str) != Some("string") {
        return None;
    }
    match o.get("enum") {
        None => Some(Keys::AnyString),
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .map(Keys::Listed),
        Some(_) => None,
    }
}

/// What an object schema says about keys it does not list.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Additional {
    /// `additionalProperties: false`: unknown keys denied.
    Closed,
    /// No `additionalProperties` (the `object` keyword).
    Open,
    Schema(Value),
}

#[derive(Debug, Clone)]
pub(super) struct Prop {
    pub(super) name: String,
    pub(super) schema: Value,
    pub(super) required: bool,
}

/// An object schema taken apart, to merge and edit.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub(super) props: Vec<Prop>,
    /// Lists its properties (an interface or type literal), unlike `Record` and `object`.
    pub(super) declared: bool,
    pub(super) additional: Additional,
    pub(super) description: Option<Value>,
}

impl Shape {
    pub(super) fn declared() -> Self {
        Self {
            props: Vec::new(),
            declared: true,
            additional: Additional::Closed,
            description: None,
        }
    }

    pub(super) fn set(&mut self, name: String, schema: Value, required: bool) {
        match self.props.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.schema = schema;
                p.required = required;
            }
            None => self.props.push(Prop { name, schema, required }),
        }
    }

    pub(super) fn from_value(schema: &Value) -> Option<Shape> {
        let o = schema.as_object()?;
        let known = ["type", "properties", "required", "additionalProperties", "description"];
        if o.get("type")?.as_str()? != "object" || !o.keys().all(|k| known.contains(&k.as_str())) {
            return None;
        }
        let required: Vec<&str> = match o.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let props = match o.get("properties") {
            Some(Value::Object(p)) => p
                .iter()
                .map(|(name, schema)| Prop {
                    name: name.clone(),
                    schema: schema.clone(),
                    required: required.contains(&name.as_str()),
                })
                .collect(),
            Some(_) => return None,
            None => Vec::new(),
        };
        let additional = match o.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Open,
            Some(Value::Bool(false)) => Additional::Closed,
            Some(schema) => Additional::Schema(schema.clone()),
        };
        Some(Shape {
            props,
            declared: o.contains_key("properties"),
            additional,
            description: o.get("description").cloned(),
        })
    }

    pub(super) fn into_value(self) -> Value {
        let mut o = Map::new();
        o.insert("type".into(), "object".into());
        // An index signature alone reads like the `Record` it is equivalent to.
        let only_index = self.props.is_empty() && matches!(self.additional, Additional::Schema(_));
        if self.declared && !only_index {
            let required: Vec<Value> = self
                .props
                .iter()
                .filter(|p| p.required)
                .map(|p| Value::from(p.name.as_str()))
                .collect();
            let properties: Map<String, Value> = self.props.into_iter().map(|p| (p.name, p.schema)).collect();
            o.insert("properties".into(), Value::Object(properties));
            o.insert("required".into(), Value::Array(required));
        }
        match self.additional {
            Additional::Closed => {
                o.insert("additionalProperties".into(), false.into());
            }
            Additional::Open => {}
            Additional::Schema(s) => {
                o.insert("additionalProperties".into(), s);
            }
        }
        if let Some(d) = self.description {
            o.insert("description".into(), d);
        }
        Value::Object(o)
    }

    /// Adds `other`'s properties. `strict` (an intersection): a property both declare must
    /// agree. Otherwise (`extends`), `other`'s win.
    pub(super) fn merge(&mut self, other: Shape, strict: bool) -> Result<(), String> {
        self.declared |= other.declared;
        for prop in other.props {
            match self.props.iter_mut().find(|p| p.name == prop.name) {
                Some(mine) if strict => {
                    if without_description(&mine.schema) != without_description(&prop.schema) {
                        return Err(format!("the property `{}` has two different types", prop.name));
                    }
                    mine.required |= prop.required;
                }
                Some(mine) => *mine = prop,
                None => self.props.push(prop),
            }
        }
        let mine = std::mem::replace(&mut self.additional, Additional::Open);
        self.additional = match (mine, other.additional) {
            (Additional::Schema(a), Additional::Schema(b)) if strict && a != b => {
                return Err("two different index signatures".into());
            }
            (Additional::Schema(a), Additional::Schema(b)) => Additional::Schema(if strict { a } else { b }),
            (Additional::Schema(s), _) | (_, Additional::Schema(s)) => Additional::Schema(s),
            (Additional::Closed, _) | (_, Additional::Closed) => Additional::Closed,
            (Additional::Open, Additional::Open) => Additional::Open,
        };
        Ok(())
    }
}

fn without_description(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(o) = &mut schema {
        o.remove("description");
    }
    schema
}
