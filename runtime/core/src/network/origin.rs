//! Origins (`scheme://host[:port]`): what `network.allow` lists and what a request's URL is held to.
//! One strict reader for both, so the allowlist and the check cannot read a URL differently: ASCII
//! only, `http` or `https`, a host of letters, digits, `-` and `.` (or a bracketed IPv6 address), an
//! optional port, no user info. Errors never quote the text (a URL may hold a token).

use std::fmt;

/// `http` or `https`: the only schemes a script may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// An origin, normalized: the host in lower case, the port always known (an explicit default port
/// is the same origin as none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub scheme: Scheme,
    pub host: String,
    pub port: u16,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.host)?;
        if self.port != self.scheme.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

impl Origin {
    /// An entry of `network.allow`: exactly `scheme://host[:port]`, nothing after it.
    pub fn parse(text: &str) -> Result<Origin, String> {
        let (origin, rest) = split(text)?;
        if !rest.is_empty() {
            return Err("an origin is `scheme://host[:port]` with nothing after it (no path, no `/`)".into());
        }
        Ok(origin)
    }

    /// The origin of a request's URL (`scheme://host[:port]` then an optional path, query and
    /// fragment).
    pub fn of_url(url: &str) -> Result<Origin, String> {
        let (origin, rest) = split(url)?;
        if !(rest.is_empty() || rest.starts_with(['/', '?', '#'])) {
            return Err("the URL's host is followed by something other than `:port`, `/`, `?` or `#`".into());
        }
        if let Some(c) = rest.chars().find(|c| !c.is_ascii_graphic() || *c == '\\') {
            let what = if c == '\\' {
                "a backslash"
            } else {
                "a space, a control or a non-ASCII character"
            };
            return Err(format!("the URL holds {what}; percent-encode it"));
        }
        Ok(origin)
    }
}

/// Reads `scheme://authority` off the front of `text`; returns the origin and what follows it.
fn split(text: &str) -> Result<(Origin, &str), String> {
    let (scheme, after) = match text.split_once("://") {
        Some((s, after)) if s.eq_ignore_ascii_case("http") => (Scheme::Http, after),
        Some((s, after)) if s.eq_ignore_ascii_case("https") => (Scheme::Https, after),
        Some(_) => return Err("only `http://` and `https://` URLs can be fetched".into()),
        None => return Err("expected an absolute URL starting with `http://` or `https://`".into()),
    };
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.contains('@') {
        return Err("a URL with user info (`user@host`) is refused: put credentials in a header".into());
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let close = inner.find(']').ok_or("an IPv6 host lacks its closing `]`")?;
        let (v6, tail) = inner.split_at(close);
        if v6.is_empty() || !v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') {
            return Err("the host is not an IPv6 address".into());
        }
        (format!("[{}]", v6.to_ascii_lowercase()), &tail[1..])
    } else {
        let at = authority.find(':').unwrap_or(authority.len());
        let (host, tail) = authority.split_at(at);
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
        if host.is_empty() || !host.chars().all(ok) || host.starts_with(['.', '-']) || host.contains("..") {
            return Err("the host must be a name of letters, digits, `-` and `.`, or an IP address".into());
        }
        (host.to_ascii_lowercase(), tail)
    };
    let port = match port {
        "" => scheme.default_port(),
        p => match p.strip_prefix(':').and_then(|d| d.parse::<u16>().ok()) {
            Some(n) if n > 0 && p[1..].chars().all(|c| c.is_ascii_digit()) => n,
            _ => return Err("the port must be a number from 1 to 65535".into()),
        },
    };
    Ok((Origin { scheme, host, port }, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowlist_entry_is_exactly_scheme_host_and_port() {
        let o = Origin::parse("HTTP://LocalHost:8080").expect("an origin");
        assert_eq!(o.to_string(), "http://localhost:8080");
        // The default port is the same origin as none.
        assert_eq!(
            Origin::parse("https://a.example.com:443"),
            Origin::parse("https://a.example.com")
        );
        assert_eq!(
            Origin::parse("http://[::1]:9").map(|o| o.to_string()),
            Ok("http://[::1]:9".into())
        );
        for bad in [
            "http://a.example.com/",
            "http://a.example.com/x",
            "ftp://a.example.com",
            "a.example.com",
            "http://",
            "http://a b",
            "http://a:0",
            "http://a:70000",
            "http://a:+1",
            "http://user@a",
            "http://.a",
            "http://[zz]",
        ] {
            assert!(Origin::parse(bad).is_err(), "{bad} must be refused");
        }
    }

    #[test]
    fn a_urls_origin_is_read_the_same_way() {
        let o = Origin::of_url("http://127.0.0.1:8080/api?q=1#f").expect("a URL");
        assert_eq!(o, Origin::parse("http://127.0.0.1:8080").expect("an origin"));
        assert_eq!(Origin::of_url("https://x.example.com?q").map(|o| o.port), Ok(443));
        // Tricks that read one host here and another in an HTTP client are refused outright.
        for bad in [
            "http://127.0.0.1:8080\\@evil.example.com/",
            "http://127.0.0.1:8080@evil.example.com/",
            "http://evil.example.com%2f@127.0.0.1/",
            "http://127.0.0.1:8080/a b",
            "http://127.0.0.1:80x/",
            "javascript:alert(1)",
        ] {
            assert!(Origin::of_url(bad).is_err(), "{bad} must be refused");
        }
        // Errors never quote the URL (it may hold a token).
        let e = Origin::of_url("http://tok3n@h/").unwrap_err();
        assert!(!e.contains("tok3n"), "{e}");
    }
}
