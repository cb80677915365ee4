//! The typed surface of a catalog: its tools and host functions as [`SurfaceEntry`]s, and the files
//! `trailblaze dts` writes from them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SurfaceEntry, client_dts, tools_tsconfig};
use crate::catalog::Catalog;

/// A catalog's tools and host functions, sorted by name.
#[derive(Debug, Clone)]
pub struct Surface {
    pub tools: Vec<SurfaceEntry>,
    pub host_functions: Vec<SurfaceEntry>,
    /// Names of the tools a recording may hold (trails are checked against these).
    pub recordable: Vec<String>,
}

impl Surface {
    pub fn of(catalog: &Catalog) -> Surface {
        let mut tools = Vec::new();
        let mut recordable = Vec::new();
        for t in catalog.tools() {
            if matches!(t.kind, crate::tool::ToolKind::Broken { .. }) {
                continue;
            }
            if t.flags.is_recordable {
                recordable.push(t.name.clone());
            }
            tools.push(SurfaceEntry {
                name: t.name.clone(),
                description: t.description.clone(),
                args: t.input_schema.clone(),
                result: t.output_schema.clone(),
            });
        }
        let host_functions = catalog
            .host_names()
            .into_iter()
            .filter_map(|name| catalog.host_function(&name))
            .map(|e| SurfaceEntry {
                name: e.name.to_string(),
                description: e.description.clone(),
                args: e.args_schema.clone().to_value(),
                result: Some(e.result_schema.clone().to_value()),
            })
            .collect();
        Surface {
            tools,
            host_functions,
            recordable,
        }
    }

    /// The tools a trail may record, with their schemas.
    pub fn recordable_tools(&self) -> Vec<SurfaceEntry> {
        self.tools
            .iter()
            .filter(|t| self.recordable.contains(&t.name))
            .cloned()
            .collect()
    }

    pub fn tool(&self, name: &str) -> Option<&SurfaceEntry> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// The selector grammar as one schema document: what scripted tools' `$ref`s resolve in.
pub fn selector_document() -> Value {
    serde_json::to_value(schemars::schema_for!(crate::selector::TrailblazeNodeSelector)).unwrap_or_default()
}

const SDK_INDEX: &str = "sdk-ts/src/index.ts";

/// Where a tsconfig in `dir` finds the SDK's `index.ts`: `$TRAILBLAZE_SDK` (the `sdk-ts` folder), else a
/// relative path when `dir` is inside a checkout holding `sdk-ts/`, else an absolute one found from the
/// current folder or the `trailblaze` binary, else the npm package under `node_modules`.
pub fn sdk_src_from(dir: &Path) -> String {
    if let Some(sdk) = std::env::var_os("TRAILBLAZE_SDK").filter(|s| !s.is_empty()) {
        return PathBuf::from(sdk).join("src/index.ts").display().to_string();
    }
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    for (up, ancestor) in abs.ancestors().enumerate() {
        if ancestor.join(SDK_INDEX).is_file() {
            return format!("{}{SDK_INDEX}", "../".repeat(up));
        }
    }
    let elsewhere = [std::env::current_dir().ok(), std::env::current_exe().ok()];
    for start in elsewhere.into_iter().flatten() {
        if let Some(found) = start.ancestors().map(|a| a.join(SDK_INDEX)).find(|p| p.is_file()) {
            return found.display().to_string();
        }
    }
    "./node_modules/@trailblaze/scripting/src/index.ts".to_string()
}

/// The two files `trailblaze dts` writes for a trailmap.
#[derive(Debug, Clone)]
pub struct ClientFiles {
    pub dts: PathBuf,
    pub tsconfig: PathBuf,
}

/// Writes `<map>/tools/trailblaze-client.d.ts` and `<map>/tools/tsconfig.json` (byte-identical for the
/// same catalog). A file is only rewritten when its content changes.
pub fn write_client_files(catalog: &Catalog, map_dir: &Path) -> std::io::Result<ClientFiles> {
    let surface = Surface::of(catalog);
    let tools_dir = map_dir.join("tools");
    std::fs::create_dir_all(&tools_dir)?;
    let files = ClientFiles {
        dts: tools_dir.join("trailblaze-client.d.ts"),
        tsconfig: tools_dir.join("tsconfig.json"),
    };
    write_if_changed(&files.dts, &client_dts(&surface.tools, &surface.host_functions))?;
    write_if_changed(&files.tsconfig, &tools_tsconfig(&sdk_src_from(&tools_dir)))?;
    Ok(files)
}

pub fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text)
}
