//! A tool's call as words (`trailblaze tool NAME key=value ...`, `shell`, a session's requests): the
//! tool looked up among those the LLM may call, and its `key=value` arguments read with its schema.

use anyhow::anyhow;
use serde_json::{Map, Value};
use trailblaze::Catalog;
use trailblaze::tools::{NotLlmVisible, ToolDescriptor};

use super::Failure;

/// The named tool if the LLM may see it; otherwise the library's answer (hidden, or the nearest
/// LLM-visible names), with how to type when `inputText` was meant.
pub fn llm_tool<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a ToolDescriptor, Failure> {
    catalog.llm_tool(name).map(|t| t.as_ref()).map_err(|e| {
        let hint = match &e {
            NotLlmVisible::Hidden { .. } if name == "inputText" => {
                "; to type, run `trailblaze tool type text=... [ref=...]`"
            }
            NotLlmVisible::Hidden { .. } => " (see `trailblaze tools`)",
            NotLlmVisible::Unknown { .. } | NotLlmVisible::Broken { .. } => "",
        };
        Failure::Usage(anyhow!("{e}{hint}"))
    })
}

/// `key=value` pairs into an argument object, guided by the schema's property types.
pub fn parse_args(pairs: &[String], schema: &Value) -> Result<Value, Failure> {
    let mut map = Map::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Failure::Usage(anyhow!(
                "argument `{}` is not key=value",
                pair.split('=').next().unwrap_or("")
            )));
        };
        let wants_string = schema["properties"][k]["type"].as_str() == Some("string");
        let value = if wants_string {
            Value::String(v.to_string())
        } else {
            serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()))
        };
        map.insert(k.to_string(), value);
    }
    Ok(Value::Object(map))
}
