//! Random secrets through every output, as an adversary would pick them: quotes, apostrophes, `&<>`,
//! unicode, secrets that contain each other, short and long. The redactor is driven through 10,000
//! cases; whole sessions (device, script results and errors, keys, snapshots, the log, traces) through
//! fewer. A positive control plants a leak and checks the scan finds it.

use serde_json::{Value, json};
use trailblaze_e2e::{Fixture, Rng, session_with, traces};
use trailblaze_host_functions::{HostRegistry, SecretStore};

const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'x', 'Y', 'Z', '\'', '"', '&', '<', '>', ';', ' ', '\\', '/', 'é', '✓', '💥', '\u{202e}', '%', '$',
];

/// A secret of 6 to 40 characters; every fourth one is cut from the previous (secrets that overlap).
fn secret(rng: &mut Rng, previous: Option<&str>) -> String {
    if let Some(p) = previous
        && rng.below(4) == 0
    {
        let chars: Vec<char> = p.chars().collect();
        if chars.len() > 8 {
            let start = rng.below(chars.len() - 7);
            let end = start + 6 + rng.below(chars.len() - start - 6);
            return chars[start..end].iter().collect();
        }
    }
    let len = 6 + rng.below(35);
    // A letter first and last, so no secret is all punctuation that every log line is made of.
    let mut s = String::from("q");
    for _ in 0..len - 2 {
        s.push(ALPHABET[rng.below(ALPHABET.len())]);
    }
    s.push('k');
    s
}

/// Every form a leak could take: as is, JSON-escaped, XML/HTML-escaped.
fn forms(s: &str) -> Vec<String> {
    let json = serde_json::to_string(s).unwrap_or_default();
    let xml = s
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    vec![
        s.to_string(),
        json.trim_matches('"').to_string(),
        xml.replace('\'', "&apos;"),
        xml.replace('\'', "&#39;"),
    ]
}

/// The first form of any secret found in `text`.
fn leak(text: &str, secrets: &[String]) -> Option<String> {
    secrets
        .iter()
        .flat_map(|s| forms(s))
        .find(|f| text.contains(f.as_str()))
}

#[test]
fn ten_thousand_random_secrets_never_survive_the_redactor() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..10_000 {
        let n = 1 + rng.below(3);
        let mut secrets: Vec<String> = Vec::new();
        for _ in 0..n {
            let s = secret(&mut rng, secrets.last().map(String::as_str));
            secrets.push(s);
        }
        // Text carrying every secret in a random form, between digits (no accidental recombination).
        let mut text = String::new();
        let mut value = json!({});
        for (i, s) in secrets.iter().enumerate() {
            let f = forms(s);
            text.push_str(&format!("{}{}", rng.below(1000), f[rng.below(f.len())]));
            value[format!("k{i}{s}")] = json!([s, { "inner": format!("<{s}>") }]);
        }
        text.push_str(&serde_json::to_string(&value).unwrap_or_default());
        let redaction = trailblaze::internals::Redaction::new(&secrets);
        let redacted = redaction.text(&text);
        assert_eq!(
            leak(&redacted, &secrets),
            None,
            "case {case}: {secrets:?} in {redacted}"
        );
        let mut v = value.clone();
        redaction.value(&mut v);
        assert_eq!(leak(&v.to_string(), &secrets), None, "case {case}: {secrets:?} in {v}");
    }
}

#[test]
fn the_scan_finds_a_planted_leak() {
    let secrets = vec!["qit's <a&b>k".to_string()];
    for planted in forms(&secrets[0]) {
        assert!(leak(&format!("x{planted}y"), &secrets).is_some(), "{planted}");
    }
    assert_eq!(leak("nothing", &secrets), None);
}

const TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Returns the password as a key and a value, or throws it. */
export const leaky = trailblaze.tool<{ mode: string }, unknown>(async (input, ctx) => {
  const c = ctx.host.lookupCredential({ account: "acct" }) as { username: string; password: string };
  if (input.mode === "throw") throw new Error(`no: ${c.password} / ${c.username}`);
  return { [c.password]: c.password, nested: [{ u: c.username }] };
});
"#;

#[test]
fn random_secrets_never_reach_a_session_output() {
    let _ = traces();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let f = Fixture::new("t");
    f.tool("leaky", TOOL);
    f.file(
        "host/lookupCredential.host.yaml",
        "id: lookupCredential\nclass: lookupCredential\n",
    );
    let mut all: Vec<String> = Vec::new();
    for case in 0..60 {
        let password = secret(&mut rng, None);
        let username = secret(&mut rng, Some(&password));
        let other = secret(&mut rng, None);
        let store = SecretStore::from_pairs([
            ("ACCT_PASSWORD".to_string(), password.clone()),
            ("ACCT_USERNAME".to_string(), username.clone()),
            ("OTHER".to_string(), other.clone()),
        ]);
        let secrets = vec![password.clone(), username.clone(), other.clone()];
        let (_store, s) = session_with(&f, store, HostRegistry::builtin());
        let mut seen = String::new();
        let mut record = |v: Result<Value, String>| match v {
            Ok(v) => seen.push_str(&v.to_string()),
            Err(e) => seen.push_str(&e),
        };
        record(s.call("leaky", json!({ "mode": "return" })).map_err(|e| e.to_string()));
        record(s.call("leaky", json!({ "mode": "throw" })).map_err(|e| e.to_string()));
        record(
            s.call("launchApp", json!({ "appId": "{{secret:OTHER}}" }))
                .map_err(|e| e.to_string()),
        );
        record(
            s.call(
                "inputText",
                json!({ "text": "{{secret:ACCT_PASSWORD}}", "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } }),
            )
            .map_err(|e| e.to_string()),
        );
        record(
            s.call("pressKey", json!({ "keyCode": "BACKSPACE" }))
                .map_err(|e| e.to_string()),
        );
        record(s.call("snapshot", json!({})).map_err(|e| e.to_string()));
        for st in s.steps() {
            seen.push_str(&serde_json::to_string(&st).unwrap_or_default());
        }
        assert_eq!(leak(&seen, &secrets), None, "case {case}: {secrets:?}\n{seen}");
        // Control: the calls ran as meant (the script got the value; the result has a key; the
        // field holds all of the password but its last character).
        assert!(seen.contains("\"***\":\"***\""), "case {case}: {seen}");
        assert!(seen.contains("{\"typed\":3}"), "case {case}: {seen}");
        drop(s);
        all.extend(secrets);
    }
    assert_eq!(leak(&f.all_output(), &all), None, "the session logs");
    assert_eq!(leak(&traces(), &all), None, "the traces at every level");
}

/// A value passed where code normalizes it (`lookupCredential` upper-snakes its account and echoes
/// it when unknown) is redacted in the derived form too.
#[test]
fn a_secret_in_a_form_code_derives_from_it_is_redacted() {
    let f = Fixture::new("t");
    f.file(
        "host/lookupCredential.host.yaml",
        "id: lookupCredential\nclass: lookupCredential\n",
    );
    f.tool(
        "derive",
        r#"import { trailblaze } from "@trailblaze/scripting";
/** Passes the password as an account name. */
export const derive = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  const { password } = ctx.host.lookupCredential({ account: "acct" }) as { password: string };
  ctx.host.lookupCredential({ account: password });
  return {};
});"#,
    );
    let password = "hunter2-Pass-word".to_string();
    let store = SecretStore::from_pairs([
        ("ACCT_PASSWORD".to_string(), password.clone()),
        ("ACCT_USERNAME".to_string(), "jane".to_string()),
    ]);
    let (_store, s) = session_with(&f, store, HostRegistry::builtin());
    let err = s.call("derive", json!({})).expect_err("no such account").to_string();
    drop(s);
    let all = format!("{err}\n{}", f.all_output());
    for form in [
        "HUNTER2_PASS_WORD",
        "HUNTER2-PASS-WORD",
        "hunter2-pass-word",
        password.as_str(),
    ] {
        assert!(!all.contains(form), "`{form}` leaked:\n{all}");
    }
    // Control: the error is the one meant, with the derived form masked.
    assert!(err.contains("no credentials for account `***`"), "{err}");
}
