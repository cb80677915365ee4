//! The original's tools for devices this host does not drive: `web_*` (a browser through
//! Playwright) and `compose_*` (a Compose desktop app). They are known with their arguments, so a
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
    Selector,
    OneOf(&'static [&'static str]),
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

const WHY: Arg = ("reasoning?", Ty::Str);
const REF: Arg = ("ref?", Ty::Str);
const SEL: Arg = ("nodeSelector?", Ty::Selector);

const fn web(name: &'static str, description: &'static str, args: &'static [Arg]) -> Spec {
    Spec {
        name,
        platform: Platform::Web,
        recordable: true,
        description,
        args,
    }
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
    web(
        "web_applyCookies",
        "Adds cookies (Playwright's storage-state cookie list, as JSON) to the browser.",
        &[("cookiesJson?", Ty::Str)],
    ),
    web(
        "web_assertNetworkEvent",
        "Asserts that a request naming the event was sent during the session.",
        &[("eventName", Ty::Str), ("timeoutMs?", Ty::Int), WHY],
    ),
    web(
        "web_click",
        "Clicks a web element by its ref, ARIA descriptor or `css=` selector.",
        &[REF, WHY, SEL],
    ),
    web("web_currentUrl", "Returns the current page's URL.", &[]),
    Spec {
        recordable: false,
        ..web(
            "web_evaluate",
            "Evaluates a JavaScript expression in the page and returns the result as text.",
            &[("script", Ty::Str)],
        )
    },
    web(
        "web_fillSecret",
        "Fills a form field with a value that must not be logged.",
        &[("ref", Ty::Str), ("value", Ty::Str)],
    ),
    web(
        "web_getStorageState",
        "Returns the browser's storage state (cookies and local storage) as JSON.",
        &[],
    ),
    web("web_hover", "Moves the pointer over a web element.", &[REF, WHY, SEL]),
    web(
        "web_navigate",
        "Goes to a URL, or back or forward in the browser's history.",
        &[
            ("action?", Ty::OneOf(&["GOTO", "BACK", "FORWARD"])),
            ("url?", Ty::Str),
            WHY,
        ],
    ),
    web(
        "web_pressKey",
        "Presses a keyboard key in the page (e.g. `Enter`, `Tab`).",
        &[("key", Ty::Str), WHY],
    ),
    Spec {
        recordable: false,
        ..web(
            "web_requestDetails",
            "Asks for more detail in the next page snapshot (bounds, attributes).",
            &[("include", Ty::Strs), WHY],
        )
    },
    web(
        "web_resize",
        "Resizes the browser's viewport.",
        &[("width", Ty::Int), ("height", Ty::Int), WHY],
    ),
    web(
        "web_scroll",
        "Scrolls the page or a container in a direction.",
        &[
            ("direction?", Ty::OneOf(&["UP", "DOWN", "LEFT", "RIGHT"])),
            ("amount?", Ty::Int),
            REF,
            WHY,
            SEL,
        ],
    ),
    web(
        "web_selectOption",
        "Selects options of a `<select>` element by value or label.",
        &[REF, ("values", Ty::Strs), WHY, SEL],
    ),
    web(
        "web_snapshot",
        "Saves the page's snapshot under a screen name.",
        &[("screenName", Ty::Str), WHY],
    ),
    web(
        "web_type",
        "Types text into a web input, clearing it first unless told not to.",
        &[("text", Ty::Str), REF, ("clearFirst?", Ty::Bool), WHY, SEL],
    ),
    web(
        "web_verifyElementVisible",
        "Asserts that a web element is visible.",
        &[REF, WHY, SEL],
    ),
    web(
        "web_verifyListVisible",
        "Asserts that a list shows every given item.",
        &[REF, ("items", Ty::Strs), WHY, SEL],
    ),
    web(
        "web_verifyTextVisible",
        "Asserts that the page shows the text.",
        &[("text", Ty::Str), WHY],
    ),
    web(
        "web_verifyValue",
        "Asserts an element's text, input value or attribute.",
        &[
            REF,
            ("type?", Ty::OneOf(&["TEXT", "VALUE", "ATTRIBUTE"])),
            ("expected", Ty::Str),
            ("attribute?", Ty::Str),
            WHY,
            SEL,
        ],
    ),
    web(
        "web_wait",
        "Waits a number of seconds in the browser.",
        &[("seconds?", Ty::Int), WHY],
    ),
    web(
        "web_waitForUrl",
        "Waits until the page's URL matches a regular expression.",
        &[("pattern", Ty::Str), ("timeoutMs?", Ty::Int)],
    ),
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
        Ty::Selector => json!({ "$ref": "#/$defs/TrailblazeNodeSelector" }),
        Ty::OneOf(values) => json!({ "type": "string", "enum": values }),
    }
}

/// The input schema of a tool of `spec`, with the selector's definitions when it takes one.
fn input_schema(spec: &Spec) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut uses_selector = false;
    for (name, ty) in spec.args {
        let (name, optional) = match name.strip_suffix('?') {
            Some(n) => (n, true),
            None => (*name, false),
        };
        uses_selector |= matches!(ty, Ty::Selector);
        properties.insert(name.to_string(), schema_of(*ty));
        if !optional {
            required.push(Value::String(name.to_string()));
        }
    }
    let mut schema = json!({
        "type": "object",
        "description": spec.description,
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    if uses_selector && let Some(o) = schema.as_object_mut() {
        o.insert(
            "$defs".into(),
            Value::Object(crate::tool::schema::selector_defs().clone()),
        );
    }
    schema
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

/// Every tool of another platform, in the order `trailblaze tools --all` lists them. With the
/// `web` feature the `web_*` tools are built-ins (`tool/web.rs`) and only `compose_*` remain here.
pub fn tools() -> Vec<ToolDescriptor> {
    SPECS
        .iter()
        .filter(|s| !(cfg!(feature = "web") && s.platform == Platform::Web))
        .map(descriptor)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_tool_is_hidden_typed_and_of_its_platform() {
        let tools = tools();
        let web = SPECS.iter().filter(|s| s.platform == Platform::Web).count();
        assert_eq!(tools.len(), SPECS.len() - if cfg!(feature = "web") { web } else { 0 });
        for t in &tools {
            assert!(!t.flags.surface_to_llm, "{}", t.name);
            let ToolKind::Foreign(p) = t.kind else {
                panic!("{}", t.name)
            };
            let prefix = if p == Platform::Web { "web_" } else { "compose_" };
            assert!(t.name.starts_with(prefix), "{}", t.name);
            assert_eq!(t.input_schema["additionalProperties"], false, "{}", t.name);
        }
        if !cfg!(feature = "web") {
            let click = tools.iter().find(|t| t.name == "web_click").unwrap();
            assert!(click.input_schema["$defs"]["TrailblazeNodeSelector"].is_object());
        }
        let wait = tools.iter().find(|t| t.name == "compose_wait").unwrap();
        assert!(wait.input_schema.get("$defs").is_none());
    }
}
