//! Shortcuts and trailheads with a body: composed tools (`tools:` with `{{params.x}}`) whose call the
//! dispatcher wraps in its edge's waypoint checks (see [`crate::trailmap::nav`]). The edge itself
//! lives in the catalog, so a shortcut file with no body can give one to a scripted tool too.

use std::path::Path;
use std::sync::Arc;

use super::composed::{ComposedTool, calls_of, schema};
use super::{ToolDescriptor, ToolFlags, ToolKind};
use crate::trailmap::ParamSpec;
use crate::trailmap::navigation::NavToolSpec;

/// The tool a navigation file with a `tools:` body declares.
pub fn descriptor(file: &Path, spec: &NavToolSpec, trailmap: &str) -> Result<ToolDescriptor, String> {
    let params: Vec<ParamSpec> = spec
        .parameters
        .iter()
        .map(|p| ParamSpec {
            name: p.name.clone(),
            ty: p.ty,
            // One with a default may be left out: it takes the default.
            required: p.required && p.default.is_none(),
            description: p.description.clone(),
        })
        .collect();
    let calls = calls_of(file, spec.tools.as_deref().unwrap_or_default(), &params)?;
    let defaults = spec
        .parameters
        .iter()
        .filter_map(|p| p.default.clone().map(|d| (p.name.clone(), d)))
        .collect();
    Ok(ToolDescriptor {
        name: spec.id.clone(),
        description: spec.description.clone().unwrap_or_default().into(),
        flags: ToolFlags {
            surface_to_llm: spec.surface_to_llm.unwrap_or(true),
            is_recordable: spec.is_recordable.unwrap_or(true),
            read_only: false,
        },
        input_schema: schema(&params).into(),
        output_schema: None.into(),
        kind: ToolKind::Composed(Arc::new(ComposedTool { calls, defaults })),
        trailmap: Some(trailmap.to_string()),
    })
}
