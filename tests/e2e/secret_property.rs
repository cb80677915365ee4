//! Random secrets through every output, as an adversary would pick them: quotes, apostrophes, `&<>`,
//! unicode, secrets that contain each other, short and long, each as it is or escaped or encoded as a
//! page gives it back (percent, form, base64). The redactor is driven through 3,000 cases (each
//! secret has a couple of hundred forms to build); whole sessions (device, script results and
//! errors, keys, snapshots, the log, traces) through fewer. A positive control plants a leak and
//! checks the scan finds it. The web device's own property test: tests/e2e/web/secret_encodings.rs.

use base64::Engine as _;
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

/// `s`'s UTF-8 bytes percent-encoded but for letters, digits and `keep`; `+` for a space when `plus`.
fn percent(s: &str, keep: &str, plus: bool) -> String {
    s.bytes()
        .map(|b| match b {
            b' ' if plus => "+".to_string(),
            b if b.is_ascii_alphanumeric() || keep.as_bytes().contains(&b) => char::from(b).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// Every form a leak could take: as is, JSON-escaped, XML/HTML-escaped, percent-encoded
/// (`encodeURIComponent`, a form's fields), base64.
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
        percent(s, "-_.!~*'()", false),
        percent(s, "*-._", true),
        base64::engine::general_purpose::STANDARD.encode(s),
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
fn three_thousand_random_secrets_never_survive_the_redactor() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..3_000 {
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
        let redaction = trailblaze::Redaction::new(&secrets);
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

/// A value for every argument `schema` requires (the first enum value, 1, false, ...), so a call
/// reaches the tool; strings get `fill`.
fn required_args(schema: &Value, fill: &str) -> serde_json::Map<String, Value> {
    let defs = &schema["$defs"];
    let resolve = |p: &Value| -> Value {
        match p.get("$ref").and_then(Value::as_str) {
            Some(r) => defs[r.rsplit('/').next().unwrap_or_default()].clone(),
            None => p.clone(),
        }
    };
    let mut out = serde_json::Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in required {
        let p = resolve(&schema["properties"][name]);
        let v = if let Some(first) = p["enum"].get(0) {
            first.clone()
        } else if let Some(c) = p["oneOf"].get(0).and_then(|o| o.get("const")) {
            c.clone()
        } else {
            match p["type"].as_str() {
                Some("string") => json!(fill),
                Some("integer") | Some("number") => json!(1),
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                _ => json!({}),
            }
        };
        out.insert(name.to_string(), v);
    }
    out
}

/// The string arguments `schema` names (required or not): each is a place a caller may put a secret.
fn string_args(schema: &Value) -> Vec<String> {
    let is_string = |p: &Value| match &p["type"] {
        Value::String(t) => t == "string",
        Value::Array(ts) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    schema["properties"]
        .as_object()
        .map(|m| m.iter().filter(|(_, p)| is_string(p)).map(|(k, _)| k.clone()).collect())
        .unwrap_or_default()
}

/// Everything a caller sees of one call: its answer and its steps (timings aside).
fn observe(s: &trailblaze::Session, tool: &str, args: Value) -> String {
    let reply = match s.call(tool, args) {
        Ok(v) => v.to_string(),
        Err(e) => e.to_string(),
    };
    let screen = s
        .call("snapshot", json!({}))
        .map(|v| v["text"].to_string())
        .unwrap_or_default();
    let steps: Vec<Value> = s
        .steps()
        .into_iter()
        .map(|st| {
            let mut v = serde_json::to_value(&st).unwrap_or_default();
            v["millis"] = json!(0);
            v
        })
        .collect();
    format!("{reply}\n{screen}\n{}", Value::Array(steps))
}

/// Every LLM-visible tool, called with a secret in each string argument (as a placeholder, inside
/// an expression, and as the value itself, as a script that looked it up would pass it), answers
/// the same whatever the secret's value is: nothing it says is computed from the secret (a sum, a
/// comparison, a word of it), and no form of the secret shows. Two secrets of one shape are
/// compared, call by call.
#[test]
fn no_llm_visible_tool_shows_a_secret_or_anything_derived_from_one() {
    let _ = traces();
    let f = Fixture::demo();
    let project = f.project();
    let catalog =
        trailblaze::Catalog::for_trailmap(&project.trailmaps, "demo", std::sync::Arc::new(HostRegistry::builtin()))
            .expect("catalog");
    let tools = catalog.tool_definitions_on(trailblaze::device::Platform::Android);
    assert!(tools.len() > 20, "the catalog: {}", tools.len());
    let pins = ["734215", "591846"];
    let session = |pin: &str| {
        let store = SecretStore::from_pairs([
            ("PIN".to_string(), pin.to_string()),
            ("DEMO_USERNAME".to_string(), "jane@example.com".to_string()),
            ("DEMO_PASSWORD".to_string(), "hunter2".to_string()),
        ]);
        let (_store, s) = session_with(&f, store, HostRegistry::builtin());
        // On a screen with a focused field, so typing tools do type.
        s.call("launchApp", json!({ "appId": "com.example.demo" }))
            .expect("launch");
        s.call(
            "tapOnElementBySelector",
            json!({ "nodeSelector": { "androidAccessibility": { "hintTextRegex": "Email" } } }),
        )
        .expect("focus");
        s
    };
    let mut cases = 0;
    for t in &tools {
        for arg in string_args(&t.input_schema) {
            // The other arguments hold a number or a node's name, so the call gets as far as it can.
            for (form, fill) in ["{{secret:PIN}}", "{{secret:PIN}} + 1", "PIN_VALUE", "x PIN_VALUE y"]
                .into_iter()
                .flat_map(|f| [(f, "1"), (f, "Email")])
            {
                let seen: Vec<String> = pins
                    .iter()
                    .map(|pin| {
                        let s = session(pin);
                        let mut args = required_args(&t.input_schema, fill);
                        args.insert(arg.clone(), json!(form.replace("PIN_VALUE", pin)));
                        let out = observe(&s, &t.name, Value::Object(args));
                        drop(s);
                        out
                    })
                    .collect();
                for (pin, out) in pins.iter().zip(&seen) {
                    assert!(
                        !out.contains(pin),
                        "{}.{arg} = {form}: the secret shows:\n{out}",
                        t.name
                    );
                }
                assert_eq!(
                    seen[0], seen[1],
                    "{}.{arg} = {form} (others {fill}): what the caller sees depends on the secret's value",
                    t.name
                );
                cases += 1;
            }
        }
    }
    // Secrets nested in a sequence's steps, and a remembered secret-looking value.
    for pin in pins {
        let s = session(pin);
        let e = s
            .call(
                "runSequence",
                json!({ "steps": [{ "tool": "assertMath", "args": { "expression": "{{secret:PIN}} + 1", "expected": "0" } }] }),
            )
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("holds a secret") && !e.contains(&(pin.parse::<u64>().unwrap_or(0) + 1).to_string()),
            "{e}"
        );
    }
    assert!(cases > 120, "{cases} cases");
    assert_eq!(leak(&f.all_output(), &pins.map(String::from)), None, "the session logs");
}

/// The rule's own control: a tool that does compute on a secret (a scripted tool that adds one to
/// it and says so, as `assertMath` did) is caught by the comparison of two runs.
#[test]
fn the_comparison_catches_a_value_derived_from_a_secret() {
    let f = Fixture::new("t");
    f.file(
        "host/lookupCredential.host.yaml",
        "id: lookupCredential\nclass: lookupCredential\n",
    );
    f.tool(
        "plusOne",
        r#"import { trailblaze } from "@trailblaze/scripting";
/** Adds one to the account's password and throws the sum. */
export const plusOne = trailblaze.tool<{}, {}>(async (_i, ctx) => {
  const { password } = ctx.host.lookupCredential({ account: "acct" }) as { password: string };
  throw new Error(`sum ${Number(password) + 1}`);
});"#,
    );
    let seen: Vec<String> = ["734215", "591846"]
        .iter()
        .map(|pin| {
            let store = SecretStore::from_pairs([
                ("ACCT_PASSWORD".to_string(), pin.to_string()),
                ("ACCT_USERNAME".to_string(), "acct-user".to_string()),
            ]);
            let (_store, s) = session_with(&f, store, HostRegistry::builtin());
            observe(&s, "plusOne", json!({}))
        })
        .collect();
    assert!(
        !seen[0].contains("734215") && seen[0].contains("sum 734216"),
        "{}",
        seen[0]
    );
    assert_ne!(seen[0], seen[1], "a derived value makes the two runs differ");
}
