//! How a `*Regex` field of a selector matches: a whole-value regular expression (the original's Java
//! quoting read), compiled once per thread, or the exact text.

/// Whole-value regex match, falling back to exact equality for a pattern that is not a valid regex
/// (so `$5.00` or `(1)` need no escaping).
pub(super) fn text_matches(pattern: &str, value: Option<&str>) -> bool {
    let value = value.unwrap_or("");
    if pattern == value {
        return true;
    }
    compiled(pattern, |re| re.is_ok_and(|re| re.is_match(value)))
}

/// Why a pattern does not compile.
#[derive(Debug, Clone, Copy)]
enum PatternError {
    TooBig,
    Invalid,
}

/// Runs `f` with `pattern` compiled (to match a whole value). Resolving tries every node against
/// every predicate, and every call checks its selector's patterns first: each pattern is compiled
/// once per thread, its failure remembered too.
fn compiled<R>(pattern: &str, f: impl FnOnce(Result<&regex::Regex, PatternError>) -> R) -> R {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Result<regex::Regex, PatternError>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            if cache.len() >= 512 {
                cache.clear();
            }
            let re = whole_value(pattern).map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => PatternError::TooBig,
                _ => PatternError::Invalid,
            });
            cache.insert(pattern.to_string(), re);
        }
        match cache.get(pattern) {
            Some(re) => f(re.as_ref().map_err(|e| *e)),
            None => f(Err(PatternError::Invalid)),
        }
    })
}

/// `pattern` compiled to match a whole value.
fn whole_value(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&format!("^(?:{})$", java_quoting(pattern)))
}

/// The original's patterns are Java regular expressions, whose `\Q...\E` quotes a literal stretch
/// (`\QMouse - $29.99\E`); Rust's regex has no such quoting, so the stretch is escaped instead.
pub fn java_quoting(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\Q") {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.chars().next() {
            Some('Q') => {
                let quoted = &after[1..];
                let (inner, next) = match quoted.find("\\E") {
                    Some(e) => (&quoted[..e], &quoted[e + 2..]),
                    None => (quoted, ""),
                };
                out.push_str(&regex::escape(inner));
                rest = next;
            }
            // Any other escape (`\\`, `\d`) is copied whole, so `\\Q` stays a backslash and a Q.
            Some(c) => {
                out.push('\\');
                out.push(c);
                rest = &after[c.len_utf8()..];
            }
            None => {
                out.push('\\');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Whether `pattern` is a regular expression the matcher accepts; the reason when not. The pattern
/// itself is not repeated (it may hold a resolved secret).
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    match compiled(pattern, |re| re.map(|_| ())) {
        Ok(()) => Ok(()),
        Err(PatternError::TooBig) => Err("the regular expression is too large".into()),
        Err(PatternError::Invalid) => Err(
            "not a valid regular expression (escape `(`, `[`, `+`, `*`, `?` with `\\` to match them as text)".into(),
        ),
    }
}
