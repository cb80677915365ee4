//! Turning arguments and typed text into device shell commands that never interpolate input.

/// Quotes `arg` for the device's POSIX shell: single quotes, and `'` as `'\''`. Inside single quotes
/// nothing is special, so `&;|$\`*`, spaces and newlines reach the program as one argument.
pub fn quote(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('\'');
    for c in arg.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// One piece of text typed with plain `input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// `input text <arg>`: never contains `%s` or a newline.
    Text(String),
    /// `input keyevent 66`: a newline is the ENTER key, as the virtual keyboard maps it.
    Enter,
}

/// Whether `input text` can type `text`: printable ASCII and newlines only (the virtual keyboard's
/// key map has nothing else, and Android's `input` fails on the rest).
pub fn plain_input_can_type(text: &str) -> bool {
    text.chars().all(|c| c == '\n' || (' '..='~').contains(&c))
}

/// Splits `text` (for which `plain_input_can_type` holds) into `input` calls. `input text` turns
/// `%s` into a space, so a literal `%s` is typed as `…%` then `s…` in two calls.
pub fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push(Piece::Enter);
        }
        let mut current = String::new();
        for c in line.chars() {
            if c == 's' && current.ends_with('%') {
                out.push(Piece::Text(std::mem::take(&mut current)));
            }
            current.push(c);
        }
        if !current.is_empty() {
            out.push(Piece::Text(current));
        }
    }
    out
}

/// Standard base64 with padding (RFC 4648), for ADBKeyboard's `ADB_INPUT_B64` broadcast.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
