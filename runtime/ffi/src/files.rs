//! A project from in-memory files (an APK that keeps its trailmaps in assets and does not unpack
//! them). The library reads trailmaps from a folder only, so the files are written to a private
//! temporary folder that lives as long as the project handle.

use std::path::{Component, Path};

use serde_json::Value;

use crate::{FfiError, TbStatus};

/// Writes `files` (`{"demo/app.yaml": "text", ...}`, paths relative to the trailmaps root) into a
/// new private folder under `parent` (the system's temp folder when `None`).
pub(crate) fn materialize(files: &Value, parent: Option<&Path>) -> Result<tempfile::TempDir, FfiError> {
    let bad = |m: String| FfiError::new(TbStatus::BadInput, m);
    let Some(map) = files.as_object() else {
        return Err(bad("files: expected a JSON object of path → text".into()));
    };
    let dir = match parent {
        Some(p) => tempfile::Builder::new().prefix("trailblaze-").tempdir_in(p),
        None => tempfile::Builder::new().prefix("trailblaze-").tempdir(),
    }
    .map_err(|e| FfiError::new(TbStatus::Io, format!("cannot create a temporary folder: {e}")))?;
    for (i, (name, text)) in map.iter().enumerate() {
        let rel = Path::new(name);
        // Only plain relative paths: nothing may be written outside the private folder.
        let plain = !name.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(bad(format!(
                "files: entry {i}: the path must be relative, without `..` or a root"
            )));
        }
        let Some(text) = text.as_str() else {
            return Err(bad(format!("files: `{name}`: expected a string")));
        };
        let path = dir.path().join(rel);
        let io = |e: std::io::Error| FfiError::new(TbStatus::Io, format!("writing `{name}`: {e}"));
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io)?;
        }
        std::fs::write(&path, text).map_err(io)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_path_that_climbs_out_is_refused_and_a_plain_one_is_written() {
        let parent = tempfile::tempdir().expect("tmp");
        for bad in ["../x.yaml", "/etc/x.yaml", "a/../../x.yaml", ""] {
            let e = materialize(&json!({ bad: "x" }), Some(parent.path())).err();
            assert_eq!(e.map(|e| e.status), Some(TbStatus::BadInput), "{bad}");
        }
        assert!(!parent.path().join("x.yaml").exists());
        let dir = materialize(&json!({"demo/app.yaml": "hello"}), Some(parent.path())).expect("control");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("demo/app.yaml")).expect("written"),
            "hello"
        );
    }
}
