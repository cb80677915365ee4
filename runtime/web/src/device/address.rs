//! What a navigation (`web_navigate`, `openUrl`, `launchApp`) may open: a web page (`http:`,
//! `https:`), `about:blank`, or a file of the trail's (a relative path, or a `file://` URL) that the
//! device serves itself. Every other scheme is refused: the browser's own pages (`chrome://version`
//! shows the profile's path and the command line), `devtools:`, extensions, `view-source:`, and the
//! schemes that carry a page or a script in the URL (`data:`, `javascript:`, `blob:`).

/// Where a navigation goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Address<'a> {
    /// Opened as it is.
    Web(&'a str),
    /// A path: relative to the trail's folder, or absolute (a `file://` URL's).
    File { path: &'a str, absolute: bool },
}

/// Sorts `url` (trimmed of the spaces and control characters a browser would drop at its ends),
/// or says why it is refused. A string whose start is no valid scheme is a path: it is looked up
/// as a file, so nothing that is not a file or an allowed URL reaches the browser.
pub(super) fn classify(url: &str) -> Result<Address<'_>, String> {
    let url = url.trim_matches(|c: char| c <= ' ');
    let Some(scheme) = scheme(url) else {
        return Ok(Address::File {
            path: url,
            absolute: false,
        });
    };
    let rest = &url[scheme.len() + 1..];
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => Ok(Address::Web(url)),
        "about" if rest.split(['?', '#']).next() == Some("blank") => Ok(Address::Web(url)),
        "file" => {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            // `file://localhost/x` names `/x` too.
            let path = path
                .strip_prefix("localhost")
                .filter(|p| p.starts_with('/'))
                .unwrap_or(path);
            Ok(Address::File { path, absolute: true })
        }
        other => Err(format!(
            "`{other}:` URLs are not opened: the web device opens http(s) pages, about:blank and the trail's own \
             files{}",
            match other {
                "chrome" | "devtools" | "chrome-extension" | "chrome-untrusted" | "edge" | "brave" | "about" => {
                    " (the browser's own pages show its profile's path and command line)"
                }
                _ => "",
            }
        )),
    }
}

/// The URL's scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`, then `:`), if any.
fn scheme(url: &str) -> Option<&str> {
    let end = url.find(':')?;
    let s = &url[..end];
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_internal_and_script_schemes_are_refused_and_pages_and_files_pass() {
        // Controls: web pages, about:blank, paths and file URLs.
        for ok in [
            "https://example.com/a?b#c",
            "HTTP://x",
            "about:blank",
            " about:blank#x ",
            "http://127.0.0.1:9/",
        ] {
            assert!(matches!(classify(ok), Ok(Address::Web(_))), "{ok}");
        }
        assert_eq!(
            classify("site/index.html"),
            Ok(Address::File {
                path: "site/index.html",
                absolute: false
            })
        );
        assert_eq!(
            classify("./a:b.html"),
            Ok(Address::File {
                path: "./a:b.html",
                absolute: false
            })
        );
        assert_eq!(
            classify("file:///etc/passwd"),
            Ok(Address::File {
                path: "/etc/passwd",
                absolute: true
            })
        );
        assert_eq!(
            classify("file://localhost/x.html"),
            Ok(Address::File {
                path: "/x.html",
                absolute: true
            })
        );
        // The rule: every other scheme, in any case, with the spaces a browser drops.
        for refused in [
            "chrome://version",
            "CHROME://version",
            " \tchrome://settings",
            "devtools://devtools/bundled/inspector.html",
            "chrome-extension://abc/page.html",
            "chrome-untrusted://x",
            "view-source:https://example.com",
            "javascript:alert(1)",
            "data:text/html,<h1>x</h1>",
            "blob:https://example.com/1",
            "about:settings",
            "about:version",
            "filesystem:https://example.com/x",
            "ftp://example.com",
        ] {
            let e = classify(refused).expect_err(refused);
            assert!(e.contains("URLs are not opened"), "{refused}: {e}");
        }
        assert!(classify("chrome://version").unwrap_err().contains("profile's path"));
    }
}
