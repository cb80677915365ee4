//! The tests' corpus: every YAML file of the project, and mutants of a text (the same ones every
//! run), for the tests that hold two readers of a file to the same result.

use std::path::{Path, PathBuf};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every YAML file of the project (trails, trailmaps, tools, fixtures, templates), not the build's.
pub(crate) fn project_yaml() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git" | "trailblaze-out") {
                    walk(&path, out);
                }
            } else if (name.ends_with(".yaml") || name.ends_with(".yml"))
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo(), &mut out);
    // A long proof by hand: `TRAILBLAZE_YAML_CORPUS=<dir>` adds a folder's YAML (the original's trails).
    if let Some(dir) = std::env::var_os("TRAILBLAZE_YAML_CORPUS") {
        walk(Path::new(&dir), &mut out);
    }
    out
}

/// xorshift: the same mutants every run.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }
}

/// `text` with one to three random edits at byte offsets in `within` (as far as the text goes): a
/// piece of YAML syntax put in, a few bytes taken out, or a line moved in or out by a space or two.
pub(crate) fn mutate(rng: &mut Rng, text: &str, within: std::ops::Range<usize>) -> String {
    const PIECES: &[&str] = &[
        ": ", "- ", "#", " #", "'", "\"", "''", "{", "}", "[", "]", ", ", ",", " ", "  ", "\n", "\n  ", "\n- ", "&a ",
        "*a", "!t ", "|", ">", "?", ":", "é", "\\", "\\u00e9", "\t", "---", "~", "0x", "-1", ".5", "true", "null",
        "a: b", "{x: 1}", "[1, 2]", "\r",
    ];
    let mut t = text.to_string();
    for _ in 0..1 + rng.next() % 3 {
        let span = within.end.min(t.len() + 1).saturating_sub(within.start).max(1);
        let mut at = (within.start + rng.next() % span).min(t.len());
        while !t.is_char_boundary(at) {
            at -= 1;
        }
        match rng.next() % 3 {
            0 => t.insert_str(at, PIECES[rng.next() % PIECES.len()]),
            1 => {
                let mut to = (at + 1 + rng.next() % 8).min(t.len());
                while !t.is_char_boundary(to) {
                    to += 1;
                }
                t.replace_range(at..to, "");
            }
            _ => {
                // A line moved in or out by a space or two.
                let start = t[..at].rfind('\n').map_or(0, |n| n + 1);
                if rng.next().is_multiple_of(2) {
                    t.insert_str(start, "  ");
                } else if t[start..].starts_with(' ') {
                    t.remove(start);
                }
            }
        }
    }
    t
}
