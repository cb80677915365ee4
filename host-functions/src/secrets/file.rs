//! The secrets file: `NAME=value` lines, `#` comment lines and blank lines.
//!
//! The value is everything after the first `=`, trimmed; surrounding matching quotes (`"…"` or
//! `'…'`) are removed so a value can keep leading or trailing spaces. There are no escapes and no
//! trailing comments: `#` may be part of a password.

use std::collections::BTreeMap;
use std::path::Path;

use super::{SecretsError, normalize_name};

pub(super) fn read(path: &Path) -> Result<BTreeMap<String, String>, SecretsError> {
    let bytes = std::fs::read(path).map_err(|source| SecretsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes).map_err(|(line, reason)| SecretsError::Malformed {
        path: path.to_path_buf(),
        line,
        reason,
    })
}

/// Parses the file's bytes; an error is `(line number, reason)`, the reason never quoting the line.
fn parse(bytes: &[u8]) -> Result<BTreeMap<String, String>, (usize, String)> {
    let mut values = BTreeMap::new();
    let mut first_seen: BTreeMap<String, usize> = BTreeMap::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        let line = std::str::from_utf8(raw).map_err(|_| (number, "not UTF-8 text".to_string()))?;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((raw_name, raw_value)) = trimmed.split_once('=') else {
            return Err((number, "expected NAME=value".to_string()));
        };
        let raw_name = raw_name.trim();
        let valid_name = !raw_name.is_empty()
            && raw_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && raw_name.chars().any(|c| c.is_ascii_alphanumeric());
        if !valid_name {
            return Err((
                number,
                "expected NAME=value, NAME made of letters, digits, `_`, `-` or `.`".to_string(),
            ));
        }
        let name = normalize_name(raw_name);
        if let Some(first) = first_seen.insert(name.clone(), number) {
            // The name is not secret; saying which one repeats is what makes the error useful.
            return Err((number, format!("secret `{name}` is already set on line {first}")));
        }
        values.insert(name, unquote(raw_value.trim()).to_string());
    }
    Ok(values)
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "CANARY-f1le-77";

    #[test]
    fn comments_blank_lines_quotes_and_crlf() {
        let text = format!(
            "# test accounts\n\n  demo_username = jane@example.com\r\nDEMO_PASSWORD={CANARY}#x\nspaced=\"  a b  \"\nempty=\n"
        );
        let values = parse(text.as_bytes()).unwrap();
        assert_eq!(values["DEMO_USERNAME"], "jane@example.com");
        assert_eq!(values["DEMO_PASSWORD"], format!("{CANARY}#x"));
        assert_eq!(values["SPACED"], "  a b  ");
        assert_eq!(values["EMPTY"], "");
        assert_eq!(values.len(), 4);
    }

    #[test]
    fn a_malformed_line_names_its_number_not_its_content() {
        for (text, line) in [
            (format!("A=1\n# ok\n{CANARY}\n"), 3),
            (format!("A=1\n={CANARY}\n"), 2),
            (format!("my pass={CANARY}\n"), 1),
        ] {
            let (number, reason) = parse(text.as_bytes()).unwrap_err();
            assert_eq!(number, line, "{reason}");
            assert!(!reason.contains(CANARY), "{reason}");
            assert!(!reason.contains("CANARY"), "{reason}");
        }
    }

    #[test]
    fn invalid_utf8_and_duplicates_are_errors() {
        assert_eq!(
            parse(b"A=1\nB=\xff\xfe\n").unwrap_err(),
            (2, "not UTF-8 text".to_string())
        );
        let (number, reason) = parse(b"demoPassword=1\nDEMO_PASSWORD=2\n").unwrap_err();
        assert_eq!(
            (number, reason.as_str()),
            (2, "secret `DEMO_PASSWORD` is already set on line 1")
        );
    }

    #[test]
    fn the_error_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.env");
        std::fs::write(&path, format!("OK=1\nnot a pair {CANARY}\n")).unwrap();
        let msg = read(&path).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!("secrets file `{}` line 2: expected NAME=value", path.display())
        );
    }
}
