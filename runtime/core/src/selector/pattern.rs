//! How a `*Regex` field of a selector matches: a whole-value regular expression (the original's Java
//! quoting read), compiled once per thread, or the exact text.

use regex_automata::meta::Regex;

/// Whole-value regex match, falling back to exact equality for a pattern that is not a valid regex
/// (so `$5.00` or `(1)` need no escaping).
pub(crate) fn text_matches(pattern: &str, value: Option<&str>) -> bool {
    let value = value.unwrap_or("");
    if pattern == value {
        return true;
    }
    // Plain text, or plain text after or before `.*`: read without a regex (most selectors' patterns
    // are these, and building one costs ~0.1–0.3 ms: `.` is every Unicode scalar but `\n`).
    if let Some(shape) = Shape::of(pattern) {
        return shape.matches(value);
    }
    compiled(pattern, |re| re.is_ok_and(|re| re.is_match(value)))
}

/// How an `iosMaestro` pattern matches, as Maestro's Orchestra evaluates it (the original keeps
/// that dialect for Maestro-shaped selectors): the whole value, ignoring case, `.` crossing
/// newlines; a pattern that is not a valid regex matches its own text, case ignored.
pub(crate) fn maestro_matches(pattern: &str, value: &str) -> bool {
    if pattern == value {
        return true;
    }
    compiled_as(pattern, Dialect::Maestro, |re| match re {
        Ok(re) => re.is_match(value),
        Err(_) => pattern.to_lowercase() == value.to_lowercase(),
    })
}

/// Which way a pattern is compiled: the original's native one, or Maestro's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Dialect {
    Native,
    Maestro,
}

/// The patterns read without a regex: plain text `t` as `t`, `.*t`, `t.*` or `.*t.*` (`.` is any
/// character but a newline, and the match is of the whole value).
#[derive(Debug, PartialEq)]
pub(super) enum Shape<'a> {
    Exact(&'a str),
    Suffix(&'a str),
    Prefix(&'a str),
    Within(&'a str),
}

impl<'a> Shape<'a> {
    pub(super) fn of(pattern: &'a str) -> Option<Shape<'a>> {
        let (any_before, rest) = match pattern.strip_prefix(".*") {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let (text, any_after) = match rest.strip_suffix(".*") {
            Some(text) => (text, true),
            None => (rest, false),
        };
        if !is_plain(text) {
            return None;
        }
        Some(match (any_before, any_after) {
            (false, false) => Shape::Exact(text),
            (true, false) => Shape::Suffix(text),
            (false, true) => Shape::Prefix(text),
            // The text's own newline could fall anywhere in the value: left to the regex.
            (true, true) if !text.contains('\n') => Shape::Within(text),
            (true, true) => return None,
        })
    }

    fn matches(&self, value: &str) -> bool {
        let no_newline = |s: &str| !s.contains('\n');
        match *self {
            Shape::Exact(t) => value == t,
            Shape::Suffix(t) => value.strip_suffix(t).is_some_and(no_newline),
            Shape::Prefix(t) => value.strip_prefix(t).is_some_and(no_newline),
            Shape::Within(t) => no_newline(value) && value.contains(t),
        }
    }
}

/// Whether `pattern` holds no character a regular expression treats specially (those
/// `regex::escape` escapes), so that as a whole-value regex it matches exactly itself.
pub(super) fn is_plain(pattern: &str) -> bool {
    !pattern.bytes().any(|b| b"\\.+*?()|[]{}^$#&-~".contains(&b))
}

/// Why a pattern does not compile.
#[derive(Debug, Clone, Copy)]
pub(super) enum PatternError {
    TooBig,
    Invalid,
}

/// Runs `f` with `pattern` compiled (to match a whole value). Resolving tries every node against
/// every predicate, and every call checks its selector's patterns first: each pattern is compiled
/// once per thread, its failure remembered too.
fn compiled<R>(pattern: &str, f: impl FnOnce(Result<&Regex, PatternError>) -> R) -> R {
    compiled_as(pattern, Dialect::Native, f)
}

type Compiled = std::collections::HashMap<(Dialect, String), Result<Regex, PatternError>>;

fn compiled_as<R>(pattern: &str, dialect: Dialect, f: impl FnOnce(Result<&Regex, PatternError>) -> R) -> R {
    thread_local! {
        static COMPILED: std::cell::RefCell<Compiled> = std::cell::RefCell::new(std::collections::HashMap::new());
    }
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (dialect, pattern.to_string());
        if !cache.contains_key(&key) {
            if cache.len() >= 512 {
                cache.clear();
            }
            let re = match dialect {
                Dialect::Native => whole_value(pattern),
                Dialect::Maestro => regex(&format!(r"(?is)\A(?:{})\z", java_quoting(pattern))),
            };
            cache.insert(key.clone(), re);
        }
        match cache.get(&key) {
            Some(re) => f(re.as_ref().map_err(|e| *e)),
            None => f(Err(PatternError::Invalid)),
        }
    })
}

/// `pattern` compiled to match a whole value: the `regex` crate's engine and syntax, built without
/// a full DFA. The dependency tree turns on `regex`'s full DFA (tracing's filters, tiktoken's
/// fancy-regex), which every small pattern then builds up front: ~0.3 ms each, a sixth of a one-shot
/// `trailblaze tool` call whose selectors name two ids. The lazy DFA builds only what a match visits.
pub(super) fn whole_value(pattern: &str) -> Result<Regex, PatternError> {
    regex(&format!("^(?:{})$", java_quoting(pattern)))
}

/// `pattern` as a regular expression (Rust's syntax, as the `regex` crate reads it), built without
/// a full DFA (see [`whole_value`]).
fn regex(pattern: &str) -> Result<Regex, PatternError> {
    Regex::builder()
        .configure(Regex::config().dfa(false))
        .build(pattern)
        .map_err(|e| match e.size_limit() {
            Some(_) => PatternError::TooBig,
            None => PatternError::Invalid,
        })
}

/// Whether `pattern` is a regular expression the matcher can build.
pub fn is_regex(pattern: &str) -> bool {
    regex(pattern).is_ok()
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
    if Shape::of(pattern).is_some() {
        return Ok(());
    }
    match compiled(pattern, |re| re.map(|_| ())) {
        Ok(()) => Ok(()),
        Err(PatternError::TooBig) => Err("the regular expression is too large".into()),
        Err(PatternError::Invalid) => Err(
            "not a valid regular expression (escape `(`, `[`, `+`, `*`, `?` with `\\` to match them as text)".into(),
        ),
    }
}
