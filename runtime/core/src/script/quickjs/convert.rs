//! Values across the engine's edge: QuickJS values ↔ `serde_json::Value`, walked directly (no JSON text
//! in between). Everything past this module sees `serde_json::Value`, never an `rquickjs::Value`.

use rquickjs::{Ctx, Type, Value};
use serde_json::{Map, Number, Value as Json};
use trailblaze_host_functions::quickjs::object::{Members, kind};

/// Objects nested deeper than this are refused: it also stops cycles.
const MAX_DEPTH: usize = 128;

/// Values (every array item, member and scalar) one conversion may produce. The walk expands shared
/// references, so a small graph (each level referring to the one below twice) or a sparse array
/// (`a[2147483646] = 1`) would otherwise cost gigabytes before anything noticed.
pub const MAX_VALUES: usize = 200_000;

/// Bytes of text (strings and keys) one conversion may produce.
pub const MAX_TEXT_BYTES: usize = 32 << 20;

/// What is left of one conversion's budget.
struct Budget {
    values: usize,
    text: usize,
}

impl Budget {
    /// Fails when `values` more would not fit, without spending them.
    fn room(&self, values: usize) -> Result<(), String> {
        if values > self.values {
            return Err(too_many());
        }
        Ok(())
    }

    fn take(&mut self, values: usize, text: usize) -> Result<(), String> {
        if values > self.values {
            return Err(too_many());
        }
        if text > self.text {
            return Err(format!("more than {} MiB of text: return less", MAX_TEXT_BYTES >> 20));
        }
        self.values -= values;
        self.text -= text;
        Ok(())
    }
}

fn too_many() -> String {
    format!(
        "more than {MAX_VALUES} values (a sparse array, references shared many times, or simply too much): return less"
    )
}

/// Converts a script value to JSON. `undefined` members are dropped, as `JSON.stringify` does; array
/// holes become `null`. Errors name the JS type or the budget, never the value.
pub fn to_json<'js>(v: &Value<'js>) -> Result<Json, String> {
    let mut budget = Budget {
        values: MAX_VALUES,
        text: MAX_TEXT_BYTES,
    };
    walk(v, 0, &mut budget)
}

fn walk<'js>(v: &Value<'js>, depth: usize, budget: &mut Budget) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!("a value nested deeper than {MAX_DEPTH} levels (a cycle?)"));
    }
    budget.take(1, 0)?;
    Ok(match kind(v) {
        Type::Undefined | Type::Null | Type::Uninitialized => Json::Null,
        Type::Bool => Json::Bool(v.as_bool().unwrap_or_default()),
        Type::Int => Json::from(v.as_int().unwrap_or_default()),
        Type::Float => float(v.as_float().unwrap_or_default())?,
        Type::String => {
            let s = v.as_string().ok_or("a string")?;
            let s = s
                .to_string()
                .map_err(|e| format!("a string that is not valid text: {e}"))?;
            budget.take(0, s.len())?;
            Json::String(s)
        }
        Type::Array => {
            let arr = v.as_array().ok_or("an array")?;
            // The length first: a sparse array's holes cost nothing in JS and one value each here.
            budget.room(arr.len())?;
            let mut out = Vec::with_capacity(arr.len());
            for item in arr.iter::<Value>() {
                out.push(walk(&item.map_err(|e| e.to_string())?, depth + 1, budget)?);
            }
            Json::Array(out)
        }
        Type::Object | Type::Exception => {
            let mut members = Members::new(v).map_err(|e| e.to_string())?;
            let mut out = Map::new();
            while let Some(member) = members.next(|key, item| (key.to_owned_string(), item)) {
                let (k, item) = member.map_err(|e| e.to_string())?;
                if matches!(kind(&item), Type::Undefined | Type::Function | Type::Constructor) {
                    continue;
                }
                let k = k.ok_or("a key that is not valid text")?;
                budget.take(0, k.len())?;
                out.insert(k, walk(&item, depth + 1, budget)?);
            }
            Json::Object(out)
        }
        other => {
            return Err(format!("a value of type {} cannot cross to the host", other.as_str()));
        }
    })
}

fn float(f: f64) -> Result<Json, String> {
    // Integral floats become integers so `3` from a script decodes into an integer field.
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        return Ok(Json::from(f as i64));
    }
    Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| "NaN or Infinity cannot cross to the host".to_string())
}

/// Converts JSON to a script value: the host functions' result builder, so members are defined as
/// `JSON.parse` defines them (a `"__proto__"` key in a tool's arguments is a member, not the
/// object's prototype).
pub fn to_js<'js>(ctx: &Ctx<'js>, v: &Json) -> rquickjs::Result<Value<'js>> {
    trailblaze_host_functions::quickjs::ser::to_js(ctx, v)
        .map_err(|e| rquickjs::Exception::throw_message(ctx, &e.to_string()))
}
