//! The original's tools for a device this host does not drive: `compose_*` (a Compose desktop
//! app). They are known with their arguments, so a
//! trail that records one type-checks, a script that calls one is typed by the `.d.ts`, and a call
//! is refused naming the platform, never "unknown tool". None is offered to the LLM: no device here
//! could run it.

use serde_json::{Map, Value, json};

use super::{Generated, SchemaField, ToolDescriptor, ToolFlags, ToolKind};
use crate::device::Platform;

/// An argument's type, as the original's Kotlin class declares it.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Bool,
    Strs,
}

/// `name?` is optional.
type Arg = (&'static str, Ty);

struct Spec {
    name: &'static str,
    platform: Platform,
    recordable: bool,
    description: &'static str,
    args: &'static [Arg],
}

const fn compose(name: &'static str, description: &'static str, args: &'static [Arg]) -> Spec {
    Spec {
        name,
        platform: Platform::Desktop,
        recordable: true,
        description,
        args,
    }
}

const SPECS: &[Spec] = &[
    compose(
        "compose_click",
        "Clicks a Compose element by its element id, test tag or text.",
        &[
            ("elementId?", Ty::Str),
            ("testTag?", Ty::Str),
            ("text?", Ty::Str),
            ("element?", Ty::Str),
        ],
    ),
    Spec {
        recordable: false,
        ..compose(
            "compose_request_details",
            "Asks for more detail in the next Compose snapshot.",
            &[("include", Ty::Strs)],
        )
    },
    compose(
        "compose_scroll",
        "Scrolls a Compose list to an element or index.",
        &[
            ("elementId?", Ty::Str),
            ("testTag?", Ty::Str),
            ("text?", Ty::Str),
            ("index?", Ty::Int),
        ],
    ),
    compose(
        "compose_type",
        "Types text into a Compose input, clearing it first unless told not to.",
        &[
            ("text", Ty::Str),
            ("elementId?", Ty::Str),
            ("testTag?", Ty::Str),
            ("existingText?", Ty::Str),
            ("element?", Ty::Str),
            ("clearFirst?", Ty::Bool),
        ],
    ),
    compose(
        "compose_verify_element_visible",
        "Asserts that a Compose element is visible.",
        &[("testTag?", Ty::Str), ("elementId?", Ty::Str), ("element?", Ty::Str)],
    ),
    compose(
        "compose_verify_text_visible",
        "Asserts that the Compose app shows the text.",
        &[("text", Ty::Str)],
    ),
    compose(
        "compose_wait",
        "Waits a number of seconds in the Compose app.",
        &[("seconds?", Ty::Int)],
    ),
];

/// The JSON Schema of one argument type; a selector refers to the shared definitions.
fn schema_of(ty: Ty) -> Value {
    match ty {
        Ty::Str => json!({ "type": "string" }),
        Ty::Int => json!({ "type": "integer" }),
        Ty::Bool => json!({ "type": "boolean" }),
        Ty::Strs => json!({ "type": "array", "items": { "type": "string" } }),
    }
}

/// The input schema of a tool of `spec`.
fn input_schema(spec: &Spec) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, ty) in spec.args {
        let (name, optional) = match name.strip_suffix('?') {
            Some(n) => (n, true),
            None => (*name, false),
        };
        properties.insert(name.to_string(), schema_of(*ty));
        if !optional {
            required.push(Value::String(name.to_string()));
        }
    }
    json!({
        "type": "object",
        "description": spec.description,
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn descriptor(spec: &'static Spec) -> ToolDescriptor {
    ToolDescriptor {
        name: spec.name.to_string(),
        description: format!(
            "{} ({} only: this host has no {} device.)",
            spec.description, spec.platform, spec.platform
        )
        .into(),
        flags: ToolFlags {
            surface_to_llm: false,
            is_recordable: spec.recordable,
            read_only: true,
        },
        // Made when read: only listings read these tools' schemas.
        input_schema: SchemaField::Generated(Generated::new(|| input_schema(spec))),
        output_schema: Some(json!({ "type": "string" })).into(),
        kind: ToolKind::Foreign(spec.platform),
        trailmap: None,
    }
}

/// Every tool of another platform, in the order `trailblaze tools --all` lists them.
pub fn tools() -> Vec<ToolDescriptor> {
    SPECS.iter().map(descriptor).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_tool_is_hidden_typed_and_of_its_platform() {
        let tools = tools();
        assert_eq!(tools.len(), SPECS.len());
        for t in &tools {
            assert!(!t.flags.surface_to_llm, "{}", t.name);
            let ToolKind::Foreign(p) = t.kind else {
                panic!("{}", t.name)
            };
            assert_eq!(p, Platform::Desktop, "{}", t.name);
            assert!(t.name.starts_with("compose_"), "{}", t.name);
            assert_eq!(t.input_schema["additionalProperties"], false, "{}", t.name);
        }
        let wait = tools.iter().find(|t| t.name == "compose_wait").unwrap();
        assert!(wait.input_schema.get("$defs").is_none());
    }
}
