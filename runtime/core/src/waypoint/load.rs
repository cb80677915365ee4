//! Reading `*.waypoint.yaml` files strictly: the reserved keys (`id`, `description`, `route`), then
//! one block per device classifier whose keys are read as a closed shape. The original's retired
//! top-level `required` / `forbidden` / `platforms` are refused with the fix.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{Block, Condition, Waypoint};
use crate::yaml::{self, Document, YamlError};

/// Where a trailmap keeps its waypoints (any depth below it).
pub const WAYPOINTS_DIR: &str = "waypoints";

const SUFFIX: &str = ".waypoint.yaml";

/// Every `<trailmap>/waypoints/**/*.waypoint.yaml`, sorted by path, and every file's problems.
/// An id declared twice is an error naming both files.
pub fn discover(trailmap_dir: &Path) -> (Vec<Waypoint>, Vec<YamlError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for file in crate::files::files_under(&trailmap_dir.join(WAYPOINTS_DIR), SUFFIX) {
        match yaml::parse_file(&file).map(|doc| read(&doc)) {
            Ok(Ok(w)) => found.push(w),
            Ok(Err(es)) => errors.extend(es),
            Err(e) => errors.push(e),
        }
    }
    let mut seen: std::collections::BTreeMap<String, std::path::PathBuf> = Default::default();
    let mut kept = Vec::new();
    for w in found {
        if let Some(first) = seen.get(&w.id) {
            let doc = yaml::parse_file(&w.file);
            let message = format!("waypoint `{}` is declared in {} too", w.id, first.display());
            errors.push(match doc {
                Ok(doc) => doc.error_at("id", message),
                Err(e) => e,
            });
            continue;
        }
        seen.insert(w.id.clone(), w.file.clone());
        kept.push(w);
    }
    (kept, errors)
}

/// One classifier block as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BlockSpec {
    #[serde(default)]
    route: Option<String>,
    #[serde(default)]
    required: Vec<ConditionSpec>,
    #[serde(default)]
    forbidden: Vec<ConditionSpec>,
    /// The captured example screen (kept: the original's capture and tuning tools read it).
    #[serde(default)]
    #[allow(dead_code)]
    example: Option<ExampleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ConditionSpec {
    #[serde(default)]
    description: Option<String>,
    #[serde(default = "one")]
    min_count: i64,
    /// Read as written: the type gate checks it against the selector grammar.
    #[serde(default)]
    selector: Option<Value>,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct ExampleSpec {
    file: String,
    #[serde(default)]
    captured_at: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    device: Option<Value>,
}

const RESERVED: [&str; 3] = ["id", "description", "route"];
/// The original's first format, which it no longer reads either.
const RETIRED: [&str; 3] = ["required", "forbidden", "platforms"];
/// Classifiers a near miss is measured against (any other well-formed one is a classifier too).
const KNOWN_CLASSIFIERS: [&str; 6] = ["android", "ios", "web", "compose", "desktop", "tools"];

/// The waypoint `doc` declares, or every problem in it.
pub fn read(doc: &Document) -> Result<Waypoint, Vec<YamlError>> {
    let Value::Object(map) = &doc.value else {
        return Err(vec![doc.error_at(
            "",
            "a waypoint is a map: `id`, `description`, and a block per device classifier (`android:`, `ios:`, `web:`)",
        )]);
    };
    let mut errors = Vec::new();
    let text = |key: &str, errors: &mut Vec<YamlError>| match map.get(key) {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            errors.push(doc.error_at(key, format!("`{key}` must be a string")));
            None
        }
    };
    let id = text("id", &mut errors);
    let description = text("description", &mut errors);
    let route = text("route", &mut errors);
    if id.as_deref().is_some_and(|i| i.trim().is_empty()) {
        errors.push(doc.error_at("id", "the id is empty"));
    }
    let mut blocks = Vec::new();
    for (key, value) in map {
        if RESERVED.contains(&key.as_str()) {
            continue;
        }
        if let Some(block) = block(doc, key, value, &mut errors) {
            blocks.push((key.clone(), block));
        }
    }
    let Some(id) = id else {
        if errors.is_empty() {
            errors.push(doc.error_at("", "a waypoint needs an `id` (`<trailmap>/<screen>`)"));
        }
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Waypoint {
        id,
        description,
        route,
        file: doc.file.clone(),
        blocks,
    })
}

/// The block of the classifier `key`, or `None` after an error when the key or its block is wrong.
fn block(doc: &Document, key: &str, value: &Value, errors: &mut Vec<YamlError>) -> Option<Block> {
    if !classifier_key(doc, key, errors) {
        return None;
    }
    let spec: BlockSpec = match value {
        // `ios: {}` or `ios:` says the platform exists with no conditions.
        Value::Null => BlockSpec {
            route: None,
            required: Vec::new(),
            forbidden: Vec::new(),
            example: None,
        },
        v => match doc.decode_at(key, v) {
            Ok(s) => s,
            Err(e) => {
                errors.push(e);
                return None;
            }
        },
    };
    let required = conditions(doc, key, spec.required, "required", errors);
    let forbidden = conditions(doc, key, spec.forbidden, "forbidden", errors);
    Some(Block {
        route: spec.route,
        required,
        forbidden,
    })
}

/// Whether the top-level `key` names a device classifier; when not, an error says what it is.
fn classifier_key(doc: &Document, key: &str, errors: &mut Vec<YamlError>) -> bool {
    if RETIRED.contains(&key) {
        errors.push(doc.error_at(
            key,
            format!(
                "`{key}` belongs inside a device classifier's block (`android:`, `ios:`, `web:`), as the \
                 original's current format has it; `platforms` is gone"
            ),
        ));
        return false;
    }
    let near = trailblaze_host_functions::decode::nearest(key, &RESERVED)
        .or_else(|| trailblaze_host_functions::decode::nearest(key, &KNOWN_CLASSIFIERS));
    if !is_classifier(key) || near.is_some_and(|n| n != key) && !is_platform_variant(key) {
        let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
        errors.push(doc.error_at(
            key,
            format!(
                "unknown key `{key}`: a waypoint holds `id`, `description`, `route` and one block per device \
                 classifier (lowercase words joined by `-`){hint}"
            ),
        ));
        return false;
    }
    true
}

/// The conditions of `key`'s `which` list (`required` or `forbidden`), each placed in `doc`.
fn conditions(
    doc: &Document,
    key: &str,
    list: Vec<ConditionSpec>,
    which: &str,
    errors: &mut Vec<YamlError>,
) -> Vec<Condition> {
    let mut out = Vec::new();
    for (i, c) in list.into_iter().enumerate() {
        let at = format!("{key}.{which}[{i}]");
        if c.min_count < 1 || c.min_count > u32::MAX as i64 {
            errors.push(doc.error_at(&format!("{at}.minCount"), "`minCount` must be at least 1"));
            continue;
        }
        let path = if c.selector.is_some() {
            format!("{at}.selector")
        } else {
            at
        };
        out.push(Condition {
            description: c.description,
            min_count: c.min_count as u32,
            selector: c.selector,
            pos: doc.position(&path),
            path,
        });
    }
    out
}

/// A device classifier: lowercase words joined by `-` (`android`, `android-tablet`, `ios-iphone`).
fn is_classifier(key: &str) -> bool {
    !key.is_empty()
        && key.split('-').all(|w| {
            w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// `android-tablet`: a form factor of a known platform, never a typo of it.
fn is_platform_variant(key: &str) -> bool {
    KNOWN_CLASSIFIERS
        .iter()
        .any(|p| key.strip_prefix(p).is_some_and(|r| r.starts_with('-')))
}
