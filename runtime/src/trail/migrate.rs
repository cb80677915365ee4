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
    let text = crate::files::read_text(file).map_err(|e| {
        vec![YamlError::new(
            file,
            "",
            yaml::Pos::default(),
            format!("cannot read: {e}"),
        )]
    })?;
    migrate_text(&text, file)
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
