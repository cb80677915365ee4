//! `{{secret:NAME}}` placeholders (resolved at the last moment before the device, by `placeholder`,
//! so the step log, errors and traces only ever hold the placeholder) and the redaction of every
//! output of secret values.

use serde_json::Value;

mod forms;
pub mod token;

const OPEN: &str = "{{secret:";

/// Whether `text` holds a placeholder (a syntactic check: resolves nothing).
pub fn has_placeholder(text: &str) -> bool {
    text.contains(OPEN)
}

/// What every output is scrubbed of: each secret value in each of its forms (escaped by our writers,
/// encoded by a browser or an app: `forms`), computed once (per session, per run), matched in any
/// ASCII case (hex digits, a text a tool folded to lower case) and replaced longest first, so a
/// secret that contains another is replaced whole, not around the shorter one.
#[derive(Debug, Clone, Default)]
pub struct Redaction {
    /// Longest first; each differs from the others by more than ASCII case. Shared by clones (a
    /// session's log, its screens and its reports each hold one).
    forms: std::sync::Arc<[String]>,
    /// The forms in ASCII lower case: what [`Redaction::covers`] looks up.
    folded: std::sync::Arc<std::collections::HashSet<String>>,
    /// Every form at once: a text that holds none (nearly every string a log line or a report
    /// holds) is read once, not once per form.
    any: Option<aho_corasick::AhoCorasick>,
}

impl Redaction {
    pub fn new(values: &[String]) -> Redaction {
        let mut forms: Vec<String> = Vec::new();
        let mut folded = std::collections::HashSet::new();
        for v in values.iter().filter(|v| !v.is_empty()) {
            for f in forms::forms(v) {
                if folded.insert(f.to_ascii_lowercase()) {
                    forms.push(f);
                }
            }
        }
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        // Without the automaton (it cannot fail for a few short texts), each form is tried alone.
        let any = (!forms.is_empty())
            .then(|| {
                aho_corasick::AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&forms)
                    .ok()
            })
            .flatten();
        Redaction {
            forms: forms.into(),
            folded: std::sync::Arc::new(folded),
            any,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Whether this redaction replaces every form `other` replaces: a text it has scrubbed holds
    /// nothing `other` would change.
    pub(crate) fn covers(&self, other: &Redaction) -> bool {
        other.folded.iter().all(|f| self.folded.contains(f))
    }

    /// Whether `text` holds a secret in any of its forms ([`Redaction::text`] would change it).
    pub fn finds(&self, text: &str) -> bool {
        match &self.any {
            Some(any) => any.is_match(text),
            None => {
                let low = text.to_ascii_lowercase();
                self.forms.iter().any(|f| low.contains(&f.to_ascii_lowercase()))
            }
        }
    }

    /// `text` with every secret replaced by `***`; borrowed when there was nothing to replace.
    pub fn text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let Some(any) = &self.any else {
            return self.each_form(text);
        };
        // No form in the text: nothing would be replaced below either.
        if !any.is_match(text) {
            return std::borrow::Cow::Borrowed(text);
        }
        // The forms in the text, from the same pass (a secret has a couple of hundred forms; a
        // text holds one or two), replaced longest first as `each_form` does.
        let mut present: Vec<usize> = any
            .find_overlapping_iter(text)
            .map(|m| m.pattern().as_usize())
            .collect();
        present.sort_unstable();
        present.dedup();
        let mut out = text.to_string();
        for f in present.into_iter().filter_map(|i| self.forms.get(i)) {
            if let Some(r) = replaced(&out, f) {
                out = r;
            }
        }
        // A form that a `***` put in completes (a secret holding `*`): every form, in order.
        if any.is_match(&out) {
            return std::borrow::Cow::Owned(self.each_form(&out).into_owned());
        }
        std::borrow::Cow::Owned(out)
    }

    /// [`Redaction::text`] form by form, longest first.
    fn each_form<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let mut out: Option<String> = None;
        for f in self.forms.iter() {
            if let Some(r) = replaced(out.as_deref().unwrap_or(text), f) {
                out = Some(r);
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

/// `text` with every occurrence of `form` in any ASCII case replaced by `***`; `None` when there is
/// none.
fn replaced(text: &str, form: &str) -> Option<String> {
    // Both ASCII-lower-cased: every byte stays where it was.
    let low = text.to_ascii_lowercase();
    let folded = form.to_ascii_lowercase();
    let mut hits = low.match_indices(folded.as_str()).peekable();
    hits.peek()?;
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, m) in hits {
        // ASCII lower-casing keeps every byte where it was: the spans are the text's too.
        out.push_str(&text[from..at]);
        out.push_str("***");
        from = at + m.len();
    }
    out.push_str(&text[from..]);
    Some(out)
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
            folded: r.folded.clone(),
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

    #[test]
    fn every_form_is_matched_in_any_ascii_case_as_a_tool_that_folds_text_gives_it() {
        // A page's URL quoted by a verify that lower-cases the page: the path form of the value,
        // its hex and its letters folded.
        let r = Redaction::new(&["Q/X'YX?a%k".to_string()]);
        for folded in ["q/x'yx%3fa%k", "Q/X'YX%3Fa%k", "Q%2FX'YX%3fA%25K", "q/x&#39;yx?a%k"] {
            assert_eq!(
                r.text(&format!("reads \"{folded} ok\"")),
                "reads \"*** ok\"",
                "{folded}"
            );
            assert!(r.finds(folded), "{folded}");
        }
        // Non-ASCII case by the derived forms: `É` folds to `é`.
        let r = Redaction::new(&["Émile-pass".to_string()]);
        assert_eq!(r.text("émile-pass ÉMILE-PASS"), "*** ***");
        // Control: a character other than a case change is left alone.
        let r = Redaction::new(&["Q/X'YX?a%k".to_string()]);
        assert_eq!(r.text("q/x'yx%3fb%k"), "q/x'yx%3fb%k");
        assert!(!r.finds("q/x'yx%3fb%k"));
    }
}
