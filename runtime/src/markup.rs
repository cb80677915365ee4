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
    let html = dialect == Dialect::XmlAndHtml;
    let mut out = String::with_capacity(s.len());
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_differ_only_in_apostrophe_and_del() {
        let s = "<a href=\"x\">Tom & 'Jerry'</a>\t\n\r\u{0}\u{1b}\u{7f}\u{fffe}\u{ffff}é";
        let common = "&lt;a href=&quot;x&quot;&gt;Tom &amp; ";
        let tail = "Jerry{q}&lt;/a&gt;\t\n\r\u{fffd}\u{fffd}{del}\u{fffd}\u{fffd}é";
        let expect = |q: &str, del: &str| format!("{common}{q}{}", tail.replace("{q}", q).replace("{del}", del));
        assert_eq!(escape(s, Dialect::Xml), expect("&apos;", "\u{7f}"));
        assert_eq!(escape(s, Dialect::XmlAndHtml), expect("&#39;", "\u{fffd}"));
    }
}
