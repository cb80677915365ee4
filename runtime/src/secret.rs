//! `{{secret:NAME}}` placeholders (resolved at the last moment before the device, by `placeholder`,
//! so the step log, errors and traces only ever hold the placeholder) and the redaction of every
//! output of secret values.

use serde_json::Value;

const OPEN: &str = "{{secret:";

/// Whether `text` holds a placeholder (a syntactic check: resolves nothing).
pub fn has_placeholder(text: &str) -> bool {
    text.contains(OPEN)
}

/// Every form a secret value can take in our outputs: as it is and as code derives it (upper and
/// lower case, and the upper-snake form names are normalized to, which `lookupCredential` echoes
/// when a value is passed as an account), each as it is, JSON-escaped (inside a log line or
/// `report.json`), and XML/HTML-escaped in each dialect the writers use (`&apos;`, `&#39;`, `&#x27;`).
fn forms(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let derived = [
        value.to_string(),
        value.to_uppercase(),
        value.to_lowercase(),
        trailblaze_host_functions::secrets::normalize_name(value),
    ];
    for d in derived {
        // A derived form shorter than 4 characters would blank ordinary words; the value itself is
        // always kept.
        if d.is_empty() || (d != value && d.chars().count() < 4) {
            continue;
        }
        for f in escaped_forms(&d) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// `value` as it is, JSON-escaped, and XML/HTML-escaped in each dialect.
fn escaped_forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    let json = serde_json::to_string(value).unwrap_or_default();
    let json = json.trim_matches('"').to_string();
    let mut html = vec![
        crate::markup::escape(value, crate::markup::Dialect::Xml),
        crate::markup::escape(value, crate::markup::Dialect::XmlAndHtml),
    ];
    // Hex apostrophes and text escaped only where needed (`'` left alone) are written by others.
    html.push(html[0].replace("&apos;", "&#x27;"));
    html.push(html[0].replace("&apos;", "'"));
    for f in std::iter::once(json).chain(html) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// What every output is scrubbed of: each secret value in each of its escaped forms, computed once
/// (per session, per run) and tried longest first, so a secret that contains another is replaced
/// whole, not around the shorter one.
#[derive(Debug, Clone, Default)]
pub struct Redaction {
    forms: Vec<String>,
    /// Every form at once: a text that holds none (nearly every string a log line or a report
    /// holds) is read once, not once per form.
    any: Option<aho_corasick::AhoCorasick>,
}

impl Redaction {
    pub fn new(values: &[String]) -> Redaction {
        let mut forms: Vec<String> = Vec::new();
        for v in values.iter().filter(|v| !v.is_empty()) {
            for f in self::forms(v) {
                if !forms.contains(&f) {
                    forms.push(f);
                }
            }
        }
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        // Without the automaton (it cannot fail for a few short texts), each form is tried alone.
        let any = (!forms.is_empty())
            .then(|| aho_corasick::AhoCorasick::new(&forms).ok())
            .flatten();
        Redaction { forms, any }
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Whether this redaction replaces every form `other` replaces: a text it has scrubbed holds
    /// nothing `other` would change.
    pub(crate) fn covers(&self, other: &Redaction) -> bool {
        other.forms.iter().all(|f| self.forms.contains(f))
    }

    /// Whether `text` holds a secret in any of its forms ([`Redaction::text`] would change it).
    pub fn finds(&self, text: &str) -> bool {
        match &self.any {
            Some(any) => any.is_match(text),
            None => self.forms.iter().any(|f| text.contains(f.as_str())),
        }
    }

    /// `text` with every secret replaced by `***`; borrowed when there was nothing to replace.
    pub fn text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        // No form in the text: nothing would be replaced below either.
        if self.any.as_ref().is_some_and(|any| !any.is_match(text)) {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out: Option<String> = None;
        for f in &self.forms {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(f.as_str()) {
                out = Some(current.replace(f.as_str(), "***"));
            }
        }
        match out {
            Some(s) => std::borrow::Cow::Owned(s),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    /// [`Redaction::text`] over every string of a JSON value, object keys included.
    pub fn value(&self, v: &mut Value) {
        self.scrub(v);
    }

    /// [`Redaction::value`], saying whether it replaced anything.
    pub fn scrub(&self, v: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match v {
            Value::String(s) => match self.text(s) {
                std::borrow::Cow::Owned(r) => {
                    *s = r;
                    true
                }
                std::borrow::Cow::Borrowed(_) => false,
            },
            // Every item is scrubbed: `fold`, not `any`, which would stop at the first.
            Value::Array(items) => items.iter_mut().fold(false, |changed, i| self.scrub(i) | changed),
            Value::Object(map) => {
                if map.keys().any(|k| matches!(self.text(k), std::borrow::Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (k, mut item) in old {
                        self.scrub(&mut item);
                        map.insert(self.text(&k).into_owned(), item);
                    }
                    true
                } else {
                    map.values_mut().fold(false, |changed, i| self.scrub(i) | changed)
                }
            }
            _ => false,
        }
    }
}

/// What a recording holds for a secret's value: its placeholder, so a replay types the same text
/// (`***` is for what people read; a trail that replays `***` types the wrong text).
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    /// (value, `{{secret:NAME}}`), longest value first: a secret that contains another is replaced
    /// whole. Of two names with one value the first by name is used (the pairs come sorted).
    pairs: Vec<(String, String)>,
}

impl Placeholders {
    pub fn new(named_values: &[(String, String)]) -> Placeholders {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in named_values.iter().filter(|(_, v)| !v.is_empty()) {
            if !pairs.iter().any(|(v, _)| v == value) {
                pairs.push((value.clone(), format!("{OPEN}{name}}}}}")));
            }
        }
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Placeholders { pairs }
    }

    /// `v` with every secret value inside its strings written as that secret's placeholder; `None`
    /// when no string held one (the common case). Object keys are left to the redaction.
    pub fn recorded(&self, v: &Value) -> Option<Value> {
        if self.pairs.is_empty() || !self.holds_value(v) {
            return None;
        }
        Some(self.replace(v))
    }

    fn holds_value(&self, v: &Value) -> bool {
        match v {
            Value::String(s) => self.pairs.iter().any(|(value, _)| s.contains(value.as_str())),
            Value::Array(items) => items.iter().any(|i| self.holds_value(i)),
            Value::Object(map) => map.values().any(|i| self.holds_value(i)),
            _ => false,
        }
    }

    fn replace(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.replace(i)).collect()),
            Value::Object(map) => Value::Object(map.iter().map(|(k, i)| (k.clone(), self.replace(i))).collect()),
            other => other.clone(),
        }
    }

    /// One pass, longest value first, over the text as given: what a placeholder put in is not
    /// scanned again (a secret's value that holds another's is not cut into two placeholders).
    fn text(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        'outer: while !rest.is_empty() {
            for (value, placeholder) in &self.pairs {
                if let Some(tail) = rest.strip_prefix(value.as_str()) {
                    out.push_str(placeholder);
                    rest = tail;
                    continue 'outer;
                }
            }
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
        out
    }
}

#[cfg(test)]
mod placeholder_tests {
    use serde_json::json;

    use super::*;

    fn pairs() -> Placeholders {
        Placeholders::new(&[
            ("EMAIL".to_string(), "jane@example.com".to_string()),
            ("LONG".to_string(), "jane@example.com-2".to_string()),
            ("EMPTY".to_string(), String::new()),
        ])
    }

    #[test]
    fn a_secret_value_is_recorded_as_its_placeholder_longest_first() {
        let p = pairs();
        let v = json!({ "text": "jane@example.com", "n": [1, "to jane@example.com-2 and jane@example.com"] });
        assert_eq!(
            p.recorded(&v),
            Some(json!({ "text": "{{secret:EMAIL}}", "n": [1, "to {{secret:LONG}} and {{secret:EMAIL}}"] }))
        );
        // Control: text with no secret value is left alone (and not copied).
        assert_eq!(p.recorded(&json!({ "text": "jane@example.org", "e": "" })), None);
        assert_eq!(Placeholders::default().recorded(&json!("jane@example.com")), None);
    }
}

#[cfg(test)]
mod redact_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_one_pass_search_finds_what_each_form_alone_finds() {
        let r = Redaction::new(&["hunter2".to_string(), "s3cr&t".to_string(), "aaa".to_string()]);
        assert!(r.any.is_some(), "the automaton is in use");
        let alone = Redaction {
            forms: r.forms.clone(),
            any: None,
        };
        for t in [
            "",
            "nothing",
            "x hunter2 y",
            "HUNTER2",
            "s3cr&amp;t",
            "s3cr\\u0026t",
            "aaaa",
            "aa",
            "hunter",
            "é hunter2 é",
            "hunter2hunter2",
        ] {
            assert_eq!(r.text(t), alone.text(t), "{t}");
        }
        // Control: the search does find, and the text is then replaced as before.
        assert_eq!(r.text("x hunter2 y"), "x *** y");
    }

    #[test]
    fn a_redaction_covers_another_when_it_replaces_every_form_of_it() {
        let two = Redaction::new(&["hunter2".to_string(), "s3cr&t".to_string()]);
        let one = Redaction::new(&["s3cr&t".to_string()]);
        assert!(two.covers(&one) && two.covers(&two) && one.covers(&Redaction::new(&[])));
        // Control: a value the other has and this one lacks, even one inside a value it has.
        assert!(!one.covers(&two));
        assert!(!Redaction::new(&["hunter2x".to_string()]).covers(&Redaction::new(&["hunter2".to_string()])));
    }

    #[test]
    fn a_scrub_says_whether_it_replaced_anything_and_scrubs_every_item() {
        let r = Redaction::new(&["hunter2".to_string()]);
        // The secret in the first and the last item, and as a key: all replaced, and said.
        let mut v = json!({ "a": ["hunter2", 1, "x hunter2"], "hunter2": { "b": "ok" } });
        assert!(r.scrub(&mut v));
        assert_eq!(v, json!({ "a": ["***", 1, "x ***"], "***": { "b": "ok" } }));
        // Only in a nested map's value.
        let mut v = json!({ "a": { "b": ["ok", { "c": "hunter2" }] } });
        assert!(r.scrub(&mut v));
        assert_eq!(v["a"]["b"][1]["c"], "***");
        // Controls: nothing to replace, or no secrets at all, says no and changes nothing.
        let mut v = json!({ "a": ["hunter", 2], "b": "fine" });
        let before = v.clone();
        assert!(!r.scrub(&mut v));
        assert_eq!(v, before);
        assert!(!Redaction::new(&[]).scrub(&mut json!("hunter2")));
    }

    #[test]
    fn longest_first_in_every_escaped_form_and_in_keys() {
        let values = vec![
            "CANARY".to_string(),
            "CANARY-long".to_string(),
            "it's <a&b>".to_string(),
        ];
        let r = Redaction::new(&values);
        assert_eq!(r.text("x CANARY-long y"), "x *** y", "not `***-long`");
        assert_eq!(r.text("CANARY"), "***");
        for form in [
            "it's <a&b>",
            "it&apos;s &lt;a&amp;b&gt;",
            "it&#39;s &lt;a&amp;b&gt;",
            "it&#x27;s &lt;a&amp;b&gt;",
        ] {
            assert_eq!(r.text(&format!("[{form}]")), "[***]", "{form}");
        }
        let json_form = serde_json::to_string("say \"CANARY\"\n").expect("json");
        assert!(!r.text(&json_form).contains("CANARY"));
        let mut v = json!({ "CANARY": { "k": ["it's <a&b>", 1] }, "plain": "ok" });
        r.value(&mut v);
        assert_eq!(v, json!({ "***": { "k": ["***", 1] }, "plain": "ok" }));
        // Forms code derives from a value: case changes, and the upper-snake form of names.
        let r = Redaction::new(&["hunter2-Pass".to_string()]);
        for derived in ["HUNTER2-PASS", "hunter2-pass", "HUNTER2_PASS"] {
            assert_eq!(r.text(&format!("account `{derived}`")), "account `***`", "{derived}");
        }
        // Control: nothing to redact leaves text as it is (and unallocated).
        assert!(matches!(r.text("nothing here"), std::borrow::Cow::Borrowed(_)));
    }
}
