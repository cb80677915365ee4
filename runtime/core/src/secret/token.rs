//! Random tokens a local server hands out (the web device's file server, MCP over HTTP), and their
//! comparison.

/// `bytes` random bytes from the kernel, as hex (no other source is good enough).
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares without stopping at the first difference: the time taken tells nothing of the token.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
