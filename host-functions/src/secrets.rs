//! Named secrets from `TRAILBLAZE_SECRET_<NAME>` environment variables and an optional secrets file.
//!
//! Names are normalized to upper snake case (`demoPassword`, `demo-password` and `DEMO_PASSWORD`
//! are one name). Values never leave through `Debug`, errors or logs; only [`SecretStore::get`]
//! returns them, and it counts every lookup so tests can prove a refused call read nothing.

mod file;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable prefix that marks a secret.
pub const ENV_PREFIX: &str = "TRAILBLAZE_SECRET_";

#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("cannot read secrets file `{}`: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// `reason` describes the shape of the line, never its content.
    #[error("secrets file `{}` line {line}: {reason}", path.display())]
    Malformed { path: PathBuf, line: usize, reason: String },
}

#[derive(Default)]
pub struct SecretStore {
    values: BTreeMap<String, String>,
    lookups: AtomicU64,
}

impl SecretStore {
    /// Secrets from `TRAILBLAZE_SECRET_<NAME>` variables. A variable whose name or value is not
    /// UTF-8 is skipped with a warning.
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars_os())
    }

    /// Secrets from the file (if given), then the environment, which wins on a clash: CI can
    /// override one entry of a developer's file without editing it.
    pub fn from_env_and_file(path: Option<&Path>) -> Result<Self, SecretsError> {
        Self::from_file_and_vars(path, std::env::vars_os())
    }

    fn from_file_and_vars(
        path: Option<&Path>,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<Self, SecretsError> {
        let mut values = match path {
            Some(path) => file::read(path)?,
            None => BTreeMap::new(),
        };
        values.extend(Self::from_vars(vars).values);
        Ok(Self {
            values,
            lookups: AtomicU64::new(0),
        })
    }

    /// Secrets given directly (tests, embedders). A later pair wins over an earlier one.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let values = pairs
            .into_iter()
            .map(|(name, value)| (normalize_name(&name), value))
            .collect();
        Self {
            values,
            lookups: AtomicU64::new(0),
        }
    }

    fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut values = BTreeMap::new();
        for (key, value) in vars {
            let Some(key) = key.to_str() else { continue };
            let Some(raw) = key.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            let name = normalize_name(raw);
            if name.is_empty() {
                continue;
            }
            match value.into_string() {
                Ok(value) => {
                    values.insert(name, value);
                }
                Err(_) => tracing::warn!(variable = key, "secret variable is not UTF-8; skipped"),
            }
        }
        Self {
            values,
            lookups: AtomicU64::new(0),
        }
    }

    /// The value of secret `name` (normalized first). Every call counts as a lookup.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        self.values.get(&normalize_name(name)).map(String::as_str)
    }

    /// Every value held, for scrubbing output (logs, snapshots, errors) of them. Not a lookup: it
    /// resolves nothing for a caller.
    pub fn values_to_redact(&self) -> Vec<String> {
        self.values.values().filter(|v| !v.is_empty()).cloned().collect()
    }

    /// Every (name, value) pair with a value, for writing a recorded value back as its placeholder
    /// (`{{secret:NAME}}`). Not a lookup: it resolves nothing for a caller.
    pub fn named_values(&self) -> Vec<(String, String)> {
        self.values
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// How many times [`SecretStore::get`] has been called.
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    /// The names held, sorted. Names are not secret; listing them is not a lookup.
    pub fn names(&self) -> Vec<String> {
        self.values.keys().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names and the counter only: a `{:?}` anywhere must never print a value.
        f.debug_struct("SecretStore")
            .field("names", &self.names())
            .field("lookups", &self.lookups())
            .finish()
    }
}

/// Upper snake case: `demoPassword`, `demo-password`, `Demo Password` → `DEMO_PASSWORD`. A name
/// already in upper snake case is unchanged.
pub fn normalize_name(raw: &str) -> String {
    let chars: Vec<char> = raw.trim().chars().collect();
    let mut out = String::with_capacity(chars.len() + 4);
    let mut separate = false;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            separate = true;
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            // `demoPassword`, and the end of an acronym or number (`OAuthToken`, `user2Name`).
            if prev.is_ascii_lowercase() || (prev.is_ascii_alphanumeric() && next_is_lower) {
                separate = true;
            }
        }
        if separate && !out.is_empty() {
            out.push('_');
        }
        separate = false;
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "CANARY-s3cr3t-9d1";

    #[test]
    fn names_normalize_to_upper_snake() {
        for (raw, want) in [
            ("DEMO_PASSWORD", "DEMO_PASSWORD"),
            ("demoPassword", "DEMO_PASSWORD"),
            ("demo-password", "DEMO_PASSWORD"),
            (" Demo Password ", "DEMO_PASSWORD"),
            ("OAuthToken", "O_AUTH_TOKEN"),
            ("user2Name", "USER2_NAME"),
            ("OAUTH2TOKEN", "OAUTH2TOKEN"),
            ("a__b", "A_B"),
            ("--", ""),
        ] {
            assert_eq!(normalize_name(raw), want, "{raw}");
        }
    }

    #[test]
    fn env_vars_with_the_prefix_are_secrets_and_others_are_not() {
        let store = SecretStore::from_vars([
            (
                OsString::from("TRAILBLAZE_SECRET_demo_password"),
                OsString::from(CANARY),
            ),
            (OsString::from("TRAILBLAZE_SECRET_"), OsString::from("empty name")),
            (OsString::from("HOME"), OsString::from("/root")),
        ]);
        assert_eq!(store.names(), ["DEMO_PASSWORD"]);
        assert_eq!(store.get("demoPassword"), Some(CANARY));
    }

    #[test]
    fn get_counts_lookups_and_names_does_not() {
        let store = SecretStore::from_pairs([("a".into(), CANARY.into())]);
        assert_eq!(store.lookups(), 0);
        let _ = store.names();
        assert_eq!(store.lookups(), 0);
        assert_eq!(store.get("A"), Some(CANARY));
        assert_eq!(store.get("missing"), None);
        assert_eq!(store.lookups(), 2);
    }

    #[test]
    fn debug_shows_names_but_no_value() {
        let store = SecretStore::from_pairs([("demo_password".into(), CANARY.into())]);
        let shown = format!("{store:?} {store:#?}");
        assert!(shown.contains("DEMO_PASSWORD"), "{shown}");
        assert!(!shown.contains(CANARY), "{shown}");
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.env");
        std::fs::write(&path, "SHARED=from-file\nONLY_IN_FILE=file\n").unwrap();
        let vars = [(OsString::from("TRAILBLAZE_SECRET_SHARED"), OsString::from("from-env"))];
        let store = SecretStore::from_file_and_vars(Some(&path), vars).unwrap();
        assert_eq!(store.names(), ["ONLY_IN_FILE", "SHARED"]);
        assert_eq!(store.get("shared"), Some("from-env"));
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = SecretStore::from_env_and_file(Some(Path::new("/nonexistent/secrets.env"))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read secrets file `/nonexistent/secrets.env`"),
            "{err}"
        );
        assert!(SecretStore::from_env_and_file(None).is_ok());
    }
}
