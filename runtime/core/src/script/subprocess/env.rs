//! What a Node tool's process inherits of the runner's environment: an allow-list. The runner holds
//! credentials a script must never see — the agent's `TRAILBLAZE_LLM_API_KEY`, the secrets'
//! `TRAILBLAZE_SECRET_*`, and whatever CI put there (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, ...) —
//! and no remove-list can name them all. Scripts resolve secrets at the device and reach the network
//! through the host, so they need only what Node itself reads: paths, locale, time zone, terminal.

use std::ffi::OsString;
use std::process::Command;

/// Names passed on as they are.
const ALLOWED: [&str; 13] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TERM",
    "NO_COLOR",
    "SYSTEMROOT",
];

/// Whether `name` is passed on: an allowed name or a locale category (`LC_ALL`, `LC_CTYPE`, ...).
pub(super) fn allowed(name: &str) -> bool {
    ALLOWED.contains(&name) || name.starts_with("LC_")
}

/// Clears `cmd`'s environment and gives it back only the allowed variables of `vars` whose values
/// hold no secret value (a `PATH` or `HOME` made of one would be odd, but is still a secret).
pub(super) fn inherit_only_the_harmless(
    cmd: &mut Command,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    secret_values: &[String],
) {
    cmd.env_clear();
    for (key, value) in vars {
        let Some(name) = key.to_str() else { continue };
        let holds_secret = secret_values
            .iter()
            .any(|s| !s.is_empty() && value.to_string_lossy().contains(s.as_str()));
        if allowed(name) && !holds_secret {
            cmd.env(&key, &value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(cmd: &Command) -> Vec<String> {
        cmd.get_envs()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_allowed_variables_without_secrets_reach_a_node_tool() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("HOME", "/home/me-hunter2"),
            ("TRAILBLAZE_LLM_API_KEY", "sk-x"),
            ("TRAILBLAZE_SECRET_PIN", "1234"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let mut cmd = Command::new("node");
        inherit_only_the_harmless(&mut cmd, vars, &["hunter2".to_string()]);
        // Control: the allowed ones are there, so the absence of the rest means something.
        let mut got = given(&cmd);
        got.sort();
        assert_eq!(got, ["LC_ALL", "PATH"]);
    }
}
