//! `trailblaze migrate`: the original's older list form (`- config:` / `- prompts:` / `- tools:`)
//! rewritten into the current form (`config:`, `trailhead:`, `trail:`). The values are written back
//! as they were read (a quoted `'123'` stays a string); comments do not survive, since the list form
//! and the current one nest differently.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::parse::LIST_TOOLS_STEP;
use crate::yaml::{self, YamlError};

/// [`migrate_text`] of a file.
pub fn migrate_file(file: &Path) -> Result<Option<String>, Vec<YamlError>> {
    Ok(read_and_migrate(file)?.1)
}

/// The file's text as read, and its [`migrate_text`].
fn read_and_migrate(file: &Path) -> Result<(String, Option<String>), Vec<YamlError>> {
    let text = crate::files::read_text(file).map_err(|e| {
        vec![YamlError::new(
            file,
            "",
            yaml::Pos::default(),
            format!("cannot read: {e}"),
        )]
    })?;
    let current = migrate_text(&text, file)?;
    Ok((text, current))
}

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Parse(Vec<YamlError>),
    #[error("{} changed while it was migrated: left as it is (migrate it again)", .0.display())]
    Changed(std::path::PathBuf),
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Rewrites `file` in the current form; `Ok(false)` when it is in it already. The file is replaced
/// only if it still holds the text that was migrated: an edit made meanwhile is never lost.
pub fn migrate_in_place(file: &Path) -> Result<bool, MigrateError> {
    let (read, current) = read_and_migrate(file).map_err(MigrateError::Parse)?;
    let Some(current) = current else { return Ok(false) };
    replace_if_unchanged(file, &read, &current)?;
    Ok(true)
}

/// Writes `current` over `file` if it still holds `read`.
fn replace_if_unchanged(file: &Path, read: &str, current: &str) -> Result<(), MigrateError> {
    if !crate::files::still_holds(file, read).unwrap_or(false) {
        return Err(MigrateError::Changed(file.to_path_buf()));
    }
    crate::files::write_atomically(file, current.as_bytes()).map_err(|source| MigrateError::Write {
        path: file.to_path_buf(),
        source,
    })
}

/// The current form of a trail in the list form; `None` when `text` is not in the list form (there
/// is nothing to do). A file that does not pass the parse gate is not rewritten: its errors come back.
pub fn migrate_text(text: &str, file: &Path) -> Result<Option<String>, Vec<YamlError>> {
    let doc = yaml::parse(text, file).map_err(|e| vec![e])?;
    let Value::Array(items) = &doc.value else {
        return Ok(None);
    };
    super::parse_trail(text, file)?;
    let mut out = Map::new();
    let mut steps = Vec::new();
    for item in items {
        let Some((key, value)) = item.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        match key.as_str() {
            "prompts" => steps.extend(value.as_array().cloned().unwrap_or_default()),
            "tools" => steps.push(json!({ "step": LIST_TOOLS_STEP, "recording": { "tools": value } })),
            other => {
                out.insert(other.to_string(), value.clone());
            }
        }
    }
    out.insert("trail".into(), Value::Array(steps));
    // The current form's order: config, trailhead, trail.
    let mut ordered = Map::new();
    for key in ["config", "trailhead", "trail"] {
        if let Some(v) = out.remove(key) {
            ordered.insert(key.to_string(), v);
        }
    }
    let mut text = String::new();
    for (key, value) in &ordered {
        yaml::emit::emit_map_entry(&mut text, "", "  ", key, value);
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST_FORM: &str = "\
- config:
    id: legacy/sign-in
    target: demo
    tags: [smoke]
- prompts:
  - step: Type the code
    recording:
      tools:
        - inputText: { text: '12345678' }
  - verify: The inbox is shown
- tools:
  - pressKey: { keyCode: BACK }
";

    #[test]
    fn the_list_form_reads_and_migrates_to_the_same_trail() {
        let file = Path::new("legacy.trail.yaml");
        let before = super::super::parse_trail(LIST_FORM, file).expect("the list form passes the parse gate");
        assert_eq!(before.config.id.as_deref(), Some("legacy/sign-in"));
        assert_eq!(before.steps.len(), 3, "two prompts and the bare tools item");
        let migrated = migrate_text(LIST_FORM, file)
            .expect("migrates")
            .expect("was the list form");
        assert!(migrated.starts_with("config:"), "{migrated}");
        let after = super::super::parse_trail(&migrated, file).expect("the migrated form parses");
        let shape = |t: &super::super::Trail| -> Vec<(String, Vec<(String, Value)>)> {
            t.steps
                .iter()
                .map(|s| {
                    let calls = s
                        .recording
                        .iter()
                        .flat_map(|r| r.entries.iter().flat_map(|(_, c)| c.iter()))
                        .map(|c| (c.tool.clone(), c.args.clone()))
                        .collect();
                    (format!("{} {}", s.kind.keyword(), s.text), calls)
                })
                .collect()
        };
        assert_eq!(shape(&before), shape(&after));
        assert_eq!(after.config.tags, vec!["smoke".to_string()]);
        // The quoted digits stay a string.
        assert!(migrated.contains("\"12345678\""), "{migrated}");
        // Migrating again changes nothing: it is the current form now.
        assert_eq!(migrate_text(&migrated, file).expect("reads"), None);
    }

    #[test]
    fn a_list_form_with_errors_is_not_rewritten_and_points_at_the_item() {
        let bad = "- config:\n    id: x\n- prompts:\n  - stpe: typo\n";
        let errors = migrate_text(bad, Path::new("bad.trail.yaml")).expect_err("refused");
        assert_eq!((errors[0].pos.line, errors[0].pos.col), (4, 5), "{errors:?}");
        // Control: an unknown list item is named.
        let unknown = "- config:\n    id: x\n- steps: []\n";
        let errors = migrate_text(unknown, Path::new("u.trail.yaml")).expect_err("refused");
        assert!(errors[0].message.contains("unknown item `steps`"), "{errors:?}");
    }
}

#[cfg(test)]
mod in_place_tests {
    use super::*;

    #[test]
    fn a_file_edited_since_it_was_read_is_not_migrated_over() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("t.trail.yaml");
        std::fs::write(&file, "edited meanwhile\n").expect("write");
        let err = replace_if_unchanged(&file, "as read\n", "migrated\n");
        assert!(matches!(err, Err(MigrateError::Changed(_))), "{err:?}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "edited meanwhile\n");
        // Control: the text it was read as is replaced.
        replace_if_unchanged(&file, "edited meanwhile\n", "migrated\n").expect("written");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "migrated\n");
    }
}
