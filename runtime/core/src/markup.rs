//! Escaping text for markup: the one escaper behind the simulated device's SVG screenshots and the
//! run reports (JUnit XML and HTML).

/// Which markup the escaped text goes into; the two differ only at the edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// XML 1.0 (SVG): `'` as `&apos;`; DEL, which XML allows, is kept.
    Xml,
    /// XML and HTML alike: `'` as `&#39;` (HTML 4 has no `&apos;`); DEL, a control character in
    /// HTML, becomes U+FFFD too.
    XmlAndHtml,
}

/// Escapes `s` for markup text and attributes alike. Tab, newline and carriage return pass; the
/// other control characters and U+FFFE/U+FFFF, which XML 1.0 forbids, become U+FFFD (an error
/// message may carry terminal colour codes).
pub fn escape(s: &str, dialect: Dialect) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s, dialect);
    out
}

/// [`escape`] appended to `out`: a report writes thousands of short texts, most with nothing to
/// escape, which are then copied whole.
pub fn escape_into(out: &mut String, s: &str, dialect: Dialect) {
    // U+FFFE and U+FFFF are the only characters past ASCII that change, and start with 0xEF.
    let plain = |b: &u8| !matches!(*b, b'&' | b'<' | b'>' | b'"' | b'\'' | 0..0x20 | 0x7F | 0xEF);
    if s.as_bytes().iter().all(plain) {
        out.push_str(s);
        return;
    }
    let html = dialect == Dialect::XmlAndHtml;
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' if html => out.push_str("&#39;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' || (html && c == '\u{7F}') => {
                out.push('\u{FFFD}')
            }
            c => out.push(c),
        }
    }
}

/// Characters that change what a terminal or an editor shows without showing themselves: C0 and C1
/// controls (ESC sequences), DEL, and the bidi marks, embeddings, overrides and isolates that
/// reorder text (a right-to-left app's ordinary text holds them).
pub fn is_invisible_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}')
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Serialized JSON (or a JSON string, which YAML reads as a double-quoted scalar) with each such
/// character still raw written as its `\uXXXX` escape: the same value to a parser, nothing
/// invisible to a person. Outside strings JSON holds only ASCII punctuation and whitespace, so the
/// replacement can only land inside a string, where the escape is valid.
pub fn json_escape_invisible(json: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| is_invisible_control(c) && !matches!(c, '\n' | '\t' | '\r');
    if !json.chars().any(raw) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_json_escaped_and_read_back_the_same() {
        let text = "ab\u{202e}c\u{85}d\u{7f}e\u{2067}f\u{1b}[0m";
        let json = serde_json::to_string(&serde_json::json!({ "t": text })).expect("json");
        let escaped = json_escape_invisible(&json);
        assert!(!escaped.chars().any(is_invisible_control), "{escaped}");
        assert!(escaped.contains("\\u202e") && escaped.contains("\\u0085"), "{escaped}");
        let back: serde_json::Value = serde_json::from_str(&escaped).expect("still valid JSON");
        assert_eq!(back["t"], text);
        // Control: text with nothing invisible is left as it is (multi-byte characters included).
        assert!(matches!(
            json_escape_invisible("{\"t\":\"שלום ✓\"}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn dialects_differ_only_in_apostrophe_and_del() {
        let s = "<a href=\"x\">Tom & 'Jerry'</a>\t\n\r\u{0}\u{1b}\u{7f}\u{fffe}\u{ffff}é";
        let common = "&lt;a href=&quot;x&quot;&gt;Tom &amp; ";
        let tail = "Jerry{q}&lt;/a&gt;\t\n\r\u{fffd}\u{fffd}{del}\u{fffd}\u{fffd}é";
        let expect = |q: &str, del: &str| format!("{common}{q}{}", tail.replace("{q}", q).replace("{del}", del));
        assert_eq!(escape(s, Dialect::Xml), expect("&apos;", "\u{7f}"));
        assert_eq!(escape(s, Dialect::XmlAndHtml), expect("&#39;", "\u{fffd}"));
    }

    #[test]
    fn text_with_nothing_to_escape_is_copied_and_each_escape_still_found_alone() {
        let mut out = String::from("kept ");
        escape_into(
            &mut out,
            "Sign in · Übersicht 你好 \u{fffd} \u{fffd}",
            Dialect::XmlAndHtml,
        );
        assert_eq!(out, "kept Sign in · Übersicht 你好 \u{fffd} \u{fffd}");
        // Each character the copy must not pass, alone in otherwise plain text (the U+EFxx
        // neighbours of U+FFFE/U+FFFF share their first byte and are kept).
        for (c, want) in [
            ('&', "&amp;"),
            ('<', "&lt;"),
            ('>', "&gt;"),
            ('"', "&quot;"),
            ('\'', "&#39;"),
            ('\u{1}', "\u{fffd}"),
            ('\u{7f}', "\u{fffd}"),
            ('\u{fffe}', "\u{fffd}"),
            ('\u{ffff}', "\u{fffd}"),
            ('\u{fff0}', "\u{fff0}"),
        ] {
            let mut out = String::new();
            escape_into(&mut out, &format!("ab{c}cd"), Dialect::XmlAndHtml);
            assert_eq!(out, format!("ab{want}cd"), "{c:?}");
        }
    }
}
