//! The `config:` block of a trail: the keys Trailblaze's trails use, each checked for its shape.

use serde_json::Value;

use super::{CONFIG_KEYS, Parser, STEP_KEYS, child, kind};
use crate::trail::model::{ALL_DEVICES, ArgType, Skip, TrailArg, TrailConfig};

const ARG_KEYS: [&str; 4] = ["type", "description", "default", "required"];

impl Parser<'_> {
    pub(super) fn config(&mut self, v: &Value) -> TrailConfig {
        let mut c = TrailConfig::default();
        let Some(map) = v.as_object() else {
            self.wrong_type("config", "a map", v);
            return c;
        };
        self.known_keys("config", map, &CONFIG_KEYS, config_hint);
        if let Some(v) = map.get("devices") {
            c.devices = self.text_map("config.devices", v);
            for (key, _) in &c.devices {
                if key == ALL_DEVICES {
                    let msg = format!("`{ALL_DEVICES}` already means every device; it cannot be a device key");
                    self.at_key(&format!("config.devices.{key}"), msg);
                }
            }
            self.device_keys = c.devices.iter().map(|(k, _)| k.clone()).collect();
        }
        for (name, slot) in [
            ("id", &mut c.id),
            ("target", &mut c.target),
            ("title", &mut c.title),
            ("description", &mut c.description),
            ("priority", &mut c.priority),
            ("context", &mut c.context),
        ] {
            // An empty optional field (`title:`) reads as absent, as in Trailblaze.
            if let Some(v) = map.get(name).filter(|v| !v.is_null()) {
                *slot = self.text(&format!("config.{name}"), v);
            }
        }
        if let Some(v) = map.get("skip") {
            c.skip = self.skip(v);
        }
        match map.get("tags") {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    c.tags.extend(self.text(&format!("config.tags[{i}]"), item));
                }
            }
            Some(Value::Null) | None => {}
            Some(other) => self.wrong_type("config.tags", "a list of tags", other),
        }
        if let Some(v) = map.get("memory") {
            c.memory = self.text_map("config.memory", v);
        }
        if let Some(v) = map.get("metadata") {
            c.metadata = self.text_map("config.metadata", v);
        }
        if let Some(v) = map.get("args") {
            c.args = self.args(v);
        }
        c
    }

    fn text_map(&mut self, path: &str, v: &Value) -> Vec<(String, String)> {
        match v {
            Value::Object(map) => map
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), self.text(&child(path, k), v)?)))
                .collect(),
            Value::Null => Vec::new(),
            other => {
                self.wrong_type(path, "a map of names to text", other);
                Vec::new()
            }
        }
    }

    fn skip(&mut self, v: &Value) -> Option<Skip> {
        let needs_reason = "needs a reason: why the trail is skipped (an issue link, say)";
        match v {
            Value::Object(map) => {
                let keys = self.recording_keys(false);
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                self.known_keys("config.skip", map, &keys, |_| {
                    Some("skip per device with a platform or a `config.devices` key".to_string())
                });
                let mut out = Vec::new();
                for (key, reason) in map {
                    let path = format!("config.skip.{key}");
                    match self.text(&path, reason) {
                        Some(r) if r.trim().is_empty() => self.at_value(&path, format!("`{path}` {needs_reason}")),
                        Some(r) => out.push((key.clone(), r)),
                        None => {}
                    }
                }
                Some(Skip::PerDevice(out))
            }
            Value::String(s) if !s.trim().is_empty() => Some(Skip::Always(s.clone())),
            Value::String(_) | Value::Null => {
                self.at_value("config.skip", format!("`config.skip` {needs_reason}"));
                None
            }
            other => {
                self.wrong_type(
                    "config.skip",
                    "a reason (text) or a map of platform or device key to reason",
                    other,
                );
                None
            }
        }
    }

    fn args(&mut self, v: &Value) -> Vec<TrailArg> {
        let map = match v {
            Value::Object(map) => map,
            Value::Null => return Vec::new(),
            other => {
                self.wrong_type("config.args", "a map of argument name to type or declaration", other);
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (name, decl) in map {
            out.extend(self.arg(name, decl));
        }
        out
    }

    /// One `config.args` entry: the shorthand `name: type` or a declaration map.
    fn arg(&mut self, name: &str, decl: &Value) -> Option<TrailArg> {
        let path = format!("config.args.{name}");
        let mut chars = name.chars();
        let ident = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            let msg = format!(
                "argument name `{name}` is not an identifier ([A-Za-z_][A-Za-z0-9_]*), so `{{{{args.{name}}}}}` could not name it"
            );
            self.at_key(&path, msg);
        }
        let pos = self.doc.position(&self.full(&path));
        let (ty, description, default) = match decl {
            // The shorthand: `recipient: string`.
            Value::String(ty) => match ArgType::from_name(ty) {
                Some(ty) => (ty, None, None),
                None => {
                    self.bad_arg_type(&path);
                    return None;
                }
            },
            Value::Object(m) => self.arg_decl(&path, m)?,
            other => {
                self.wrong_type(
                    &path,
                    "a type name or a map with `type`, `description`, `default`",
                    other,
                );
                return None;
            }
        };
        Some(TrailArg {
            name: name.to_owned(),
            ty,
            description,
            default,
            pos,
        })
    }

    /// An argument's declaration map: its type, description and default, each checked.
    fn arg_decl(
        &mut self,
        path: &str,
        m: &serde_json::Map<String, Value>,
    ) -> Option<(ArgType, Option<String>, Option<Value>)> {
        self.known_keys(path, m, &ARG_KEYS, |_| None);
        let ty = match m.get("type") {
            None => Some(ArgType::String),
            Some(Value::String(t)) => ArgType::from_name(t).or_else(|| {
                self.bad_arg_type(&child(path, "type"));
                None
            }),
            Some(other) => {
                self.wrong_type(&child(path, "type"), "a type name", other);
                None
            }
        };
        let description = match m.get("description") {
            Some(d) if !d.is_null() => self.text(&child(path, "description"), d),
            _ => None,
        };
        let required = match m.get("required") {
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.wrong_type(&child(path, "required"), "true or false", other);
                None
            }
            None => None,
        };
        let default = m.get("default").cloned();
        self.check_arg_default(path, ty, default.as_ref(), required);
        Some((ty?, description, default))
    }

    /// A default must be a value of the declared type, and makes `required: true` a contradiction.
    fn check_arg_default(&mut self, path: &str, ty: Option<ArgType>, default: Option<&Value>, required: Option<bool>) {
        let dpath = child(path, "default");
        match (default, required) {
            (Some(Value::Null), _) => self.at_value(
                &dpath,
                format!("`{dpath}`: an argument has no null; write `''` for empty text or drop `default` to make it required"),
            ),
            (Some(_), Some(true)) => self.at_key(
                &child(path, "required"),
                format!("`{path}` has a default, so it is optional: drop `required: true` or the default"),
            ),
            (None, Some(false)) => self.at_key(
                &child(path, "required"),
                format!("`{path}` is optional only with a `default`; add one"),
            ),
            _ => {}
        }
        if let (Some(ty), Some(d)) = (ty, default)
            && !d.is_null()
            && !ty.admits(d)
        {
            let msg = format!(
                "`{dpath}`: expected {} (the declared type), found {}",
                ty.name(),
                kind(d)
            );
            self.at_value(&dpath, msg);
        }
    }

    fn bad_arg_type(&mut self, path: &str) {
        self.at_value(
            path,
            format!("`{path}`: unknown type; expected one of: {}", ArgType::NAMES.join(", ")),
        );
    }
}

fn config_hint(key: &str) -> Option<String> {
    match key {
        "platform" | "driver" | "drivers" => {
            Some("pin a driver per device with `devices: {<device key>: <driver>}`".into())
        }
        "source" => Some("informational fields go under `metadata`".into()),
        _ if STEP_KEYS.contains(&key) => Some("it belongs inside a step of `trail`".into()),
        _ => None,
    }
}
