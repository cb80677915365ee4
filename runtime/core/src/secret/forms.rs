//! Every form a secret value takes: as code derives it (case changes, the upper-snake form of names),
//! as our writers escape it (JSON, XML/HTML), and as a browser or an app gives it back on its own —
//! percent-encoded the way each standard encoder does (a form's query, a URL's path, query, fragment
//! and userinfo, `encodeURIComponent`, `encodeURI`, `escape`), HTML entities (named, decimal, hex),
//! JSON string escapes (`\/`, `\uXXXX`, `<>&` as Go writes them) and base64 where a header or a
//! cookie carries it, inside a larger blob too. Each form is a literal the redaction's one automaton
//! looks for in any ASCII case (so no form is listed twice for its hex digits' case); what cannot be
//! told from ordinary text (docs/writing-trails.md, "What is recognised") is left out.

use crate::markup::{Dialect, escape};

/// Forms shorter than this (but the value itself) would blank ordinary words.
const SHORTEST: usize = 4;

/// A base64 run shorter than this is left alone: 8 given characters (6 bytes of a value), in any
/// ASCII case, appear in a screenshot's or a key's base64 by chance about once in 2^40, 4 about
/// once in 2^20.
const SHORTEST_BASE64: usize = 8;

/// Every form of `value`, each once, in no particular order.
pub(super) fn forms(value: &str) -> Vec<String> {
    let mut out = Forms::default();
    let derived = [
        value.to_string(),
        value.to_uppercase(),
        value.to_lowercase(),
        trailblaze_host_functions::secrets::normalize_name(value),
    ];
    for d in derived {
        if d.is_empty() || (d != value && d.chars().count() < SHORTEST) {
            continue;
        }
        for f in text_escapes(&d) {
            // A tool's result that is JSON text (a storage state, a page's `JSON.stringify`)
            // escapes once more what the page kept raw or JSON-escaped: `{\"pw\":\"a\\\"b\"}`.
            let twice = json(&f, Json::PLAIN);
            out.push(f);
            out.push(twice);
        }
    }
    // A browser and an app encode the value as it is, never a case-changed copy of it.
    for url in url_forms(value) {
        for f in light_escapes(&url) {
            out.push(f);
        }
    }
    for b in base64_forms(value.as_bytes()) {
        out.push(b.clone());
        // In a cookie or a query (`encodeURIComponent(btoa(..))`), in JSON (`\/`).
        out.push(percent(&b, COMPONENT, Space::Percent));
        out.push(json(&b, Json::SLASH));
    }
    out.0
}

/// Forms, each once: the redaction matches them in any ASCII case (a hex digit's, a text's a tool
/// folded), so two that differ only in that are one.
#[derive(Default)]
struct Forms(Vec<String>, std::collections::HashSet<String>);

impl Forms {
    fn push(&mut self, f: String) {
        if !f.is_empty() && self.1.insert(f.to_ascii_lowercase()) {
            self.0.push(f);
        }
    }
}

/// `text` as it is, and as each JSON and XML/HTML writer escapes it.
fn text_escapes(text: &str) -> Vec<String> {
    let mut out = Forms::default();
    out.push(text.to_string());
    out.push(
        serde_json::to_string(text)
            .unwrap_or_default()
            .trim_matches('"')
            .to_string(),
    );
    for slash in [false, true] {
        for ascii in [false, true] {
            for html_safe in [false, true] {
                out.push(json(
                    text,
                    Json {
                        slash,
                        ascii,
                        html_safe,
                    },
                ));
            }
        }
    }
    out.push(escape(text, Dialect::Xml));
    out.push(escape(text, Dialect::XmlAndHtml));
    for h in HTML {
        out.push(html(text, h));
    }
    out.0
}

/// What a URL form goes through when a page or a report carries it: JSON (with or without `\/`)
/// and the entities an `href` is written with (`&amp;`; `'` left, as a browser serializes a page,
/// or `&#39;`, as templates write it). The other dialects differ only in characters a URL form
/// holds encoded.
fn light_escapes(url: &str) -> Vec<String> {
    let mut out = Forms::default();
    out.push(url.to_string());
    out.push(json(url, Json::PLAIN));
    out.push(json(url, Json::SLASH));
    out.push(escape(url, Dialect::XmlAndHtml));
    out.push(html(url, &NAMED_APOS_LEFT));
    out.0
}

/// Upper-case: the redaction matches hex digits in either case.
fn hex_digit(n: u8) -> char {
    char::from(b"0123456789ABCDEF"[usize::from(n & 0xF)])
}

#[derive(Clone, Copy)]
enum Space {
    /// `+`, as a form and `URLSearchParams` write it.
    Plus,
    /// `%20`.
    Percent,
}

/// Which ASCII punctuation an encoder leaves as it is (letters and digits always are; space,
/// control characters and everything past ASCII never are).
type Keep = &'static [u8];

/// `encodeURIComponent`.
const COMPONENT: Keep = b"-_.!~*'()";
/// `application/x-www-form-urlencoded`: a form's fields, `URLSearchParams`, Java's `URLEncoder`.
const FORM: Keep = b"*-._";
/// RFC 3986's unreserved set: Python's `quote(safe='')`, Go's `QueryEscape`, most HTTP libraries.
const UNRESERVED: Keep = b"-_.~";
/// Python's `quote` as called by default (`safe='/'`).
const UNRESERVED_SLASH: Keep = b"-_.~/";
/// `encodeURI`.
const URI: Keep = b"-_.!~*'();/?:@&=+$,#";
/// A URL's path as Chromium writes it (`location.pathname = ...`, a link's `href`).
const PATH: Keep = b"!$%&'()*+,-./:;=@[\\]_~";
/// A URL's path as the URL standard (and Firefox) writes it: `|` and `^` left.
const PATH_STANDARD: Keep = b"!$%&'()*+,-./:;=@[\\]^_|~";
/// A URL's query after a special scheme (`http`): the URL standard's query set with `'`.
const QUERY: Keep = b"!$%&()*+,-./:;=?@[\\]^_`{|}~";
/// The same without `'` (other schemes, an `<a href>` with a raw query).
const QUERY_PLAIN: Keep = b"!$%&'()*+,-./:;=?@[\\]^_`{|}~";
/// A URL's fragment.
const FRAGMENT: Keep = b"!#$%&'()*+,-./:;=?@[\\]^_{|}~";
/// A URL's user name and password (`https://user:pw@host/`) as Chromium writes them.
const USERINFO: Keep = b"!$%&()*+,-._~";
/// The same as the URL standard writes them: `'` left.
const USERINFO_STANDARD: Keep = b"!$%&'()*+,-._~";

/// Every percent-encoding of `value` a standard encoder makes, and `escape`'s (`%uXXXX` past
/// Latin-1).
fn url_forms(value: &str) -> Vec<String> {
    let mut out = Forms::default();
    for keep in [
        COMPONENT,
        UNRESERVED,
        UNRESERVED_SLASH,
        URI,
        PATH,
        PATH_STANDARD,
        QUERY,
        QUERY_PLAIN,
        FRAGMENT,
        USERINFO,
        USERINFO_STANDARD,
    ] {
        out.push(percent(value, keep, Space::Percent));
    }
    out.push(percent(value, FORM, Space::Plus));
    out.push(percent(value, FORM, Space::Percent));
    out.push(percent(value, UNRESERVED, Space::Plus));
    out.push(js_escape(value));
    out.0
}

/// `value`'s UTF-8 bytes percent-encoded but for letters, digits and `keep`.
fn percent(value: &str, keep: Keep, space: Space) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for &b in value.as_bytes() {
        match b {
            b' ' if matches!(space, Space::Plus) => out.push('+'),
            b if b.is_ascii_alphanumeric() || keep.contains(&b) => out.push(char::from(b)),
            b => {
                out.push('%');
                out.push(hex_digit(b >> 4));
                out.push(hex_digit(b));
            }
        }
    }
    out
}

/// JavaScript's `escape`: `%XX` to U+00FF, `%uXXXX` (UTF-16) past it.
fn js_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for c in value.chars() {
        match c {
            c if c.is_ascii_alphanumeric() || "@*_+-./".contains(c) => out.push(c),
            c if (c as u32) < 0x100 => {
                out.push('%');
                push_hex(&mut out, c as u32, 2);
            }
            c => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str("%u");
                    push_hex(&mut out, u32::from(*unit), 4);
                }
            }
        }
    }
    out
}

fn push_hex(out: &mut String, n: u32, width: u32) {
    for i in (0..width).rev() {
        out.push(hex_digit((n >> (4 * i)) as u8));
    }
}

/// How a JSON writer escapes a string (past `"`, `\` and control characters, which all do).
#[derive(Clone, Copy)]
struct Json {
    /// `/` as `\/` (PHP, some Java writers).
    slash: bool,
    /// Everything past ASCII as `\uXXXX` (UTF-16: Python, Jackson's ASCII mode).
    ascii: bool,
    /// `<`, `>`, `&` as `\u003c` ... (Go's `encoding/json`).
    html_safe: bool,
}

impl Json {
    const PLAIN: Json = Json {
        slash: false,
        ascii: false,
        html_safe: false,
    };
    const SLASH: Json = Json {
        slash: true,
        ..Json::PLAIN
    };
}

/// `text` as the body of a JSON string written as `how` says.
fn json(text: &str, how: Json) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let unit = |out: &mut String, u: u32| {
        out.push_str("\\u");
        push_hex(out, u, 4);
    };
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if how.slash => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => unit(&mut out, c as u32),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if how.html_safe => unit(&mut out, c as u32),
            c if !c.is_ascii() && how.ascii => {
                for u in c.encode_utf16(&mut [0; 2]) {
                    unit(&mut out, u32::from(*u));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// How an HTML writer spells a character it escapes.
#[derive(Clone, Copy)]
enum Entity {
    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`; `'` by [`Html::apos`]; past ASCII decimal.
    Named,
    /// `&#38;`.
    Decimal,
    /// `&#x26;`, `&#x3C;`.
    Hex,
}

/// An HTML writer: `&`, `<`, `>` always escaped, the rest as the fields say.
struct Html {
    entity: Entity,
    quot: bool,
    /// `'` as this (`None`: left as it is).
    apos: Option<&'static str>,
    /// Everything past ASCII as a numeric entity (an ASCII-only page).
    non_ascii: bool,
}

impl Html {
    const fn new(entity: Entity, quot: bool, apos: Option<&'static str>, non_ascii: bool) -> Html {
        Html {
            entity,
            quot,
            apos,
            non_ascii,
        }
    }
}

/// `&amp;`-style with `'` left as it is (an `href` written by most templates).
const NAMED_APOS_LEFT: Html = Html::new(Entity::Named, true, None, false);

/// The writers besides [`crate::markup::escape`]'s two dialects.
const HTML: &[Html] = &[
    Html::new(Entity::Named, true, Some("&#x27;"), false),
    NAMED_APOS_LEFT,
    // Text content: `&<>` only.
    Html::new(Entity::Named, false, None, false),
    Html::new(Entity::Named, true, Some("&#39;"), true),
    Html::new(Entity::Decimal, true, Some("&#39;"), false),
    Html::new(Entity::Hex, true, Some("&#x27;"), false),
    // An ASCII-only page.
    Html::new(Entity::Decimal, true, Some("&#39;"), true),
    Html::new(Entity::Hex, true, Some("&#x27;"), true),
];

fn html(text: &str, how: &Html) -> String {
    let numeric = |out: &mut String, c: char| match how.entity {
        Entity::Hex => {
            out.push_str("&#x");
            let n = c as u32;
            let width = (1..=8).rev().find(|w| n >> (4 * (w - 1)) != 0).unwrap_or(1);
            push_hex(out, n, width);
            out.push(';');
        }
        Entity::Named | Entity::Decimal => out.push_str(&format!("&#{};", c as u32)),
    };
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let named = match c {
            '&' => Some("&amp;"),
            '<' => Some("&lt;"),
            '>' => Some("&gt;"),
            '"' if how.quot => Some("&quot;"),
            _ => None,
        };
        match (c, named, how.entity) {
            ('\'', _, _) => match how.apos {
                Some(a) => out.push_str(a),
                None => out.push(c),
            },
            (_, Some(n), Entity::Named) => out.push_str(n),
            (_, Some(_), _) => numeric(&mut out, c),
            (c, None, _) if !c.is_ascii() && how.non_ascii => numeric(&mut out, c),
            (c, None, _) => out.push(c),
        }
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 of `bytes` where it may sit inside a larger buffer (`user:password` in HTTP Basic, a
/// token in a cookie): a value at byte offset `o` has the same encoding for every `o` of one
/// remainder mod 3 once the group its first bytes share with what precedes is cut off, so for
/// each of the three alignments the run of whole groups (the stable middle) is one form, and,
/// when the value ends the buffer, the run with its last group (padded, and not). The one or two
/// characters on each side that mix the value with its neighbours are left: they carry at most
/// two bytes' worth of it. In the standard and the URL-safe alphabet.
fn base64_forms(bytes: &[u8]) -> Vec<String> {
    let mut out = Forms::default();
    for alphabet in [STANDARD, URL_SAFE] {
        for skip in 0..3.min(bytes.len()) {
            let rest = &bytes[skip..];
            let whole = rest.len() / 3 * 3;
            let middle = base64(&rest[..whole], alphabet, false);
            if middle.len() < SHORTEST_BASE64 {
                continue;
            }
            if whole < rest.len() {
                out.push(base64(rest, alphabet, true));
                out.push(base64(rest, alphabet, false));
            }
            out.push(middle);
        }
    }
    out.0
}

fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        let chars = group.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 0x3F) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
