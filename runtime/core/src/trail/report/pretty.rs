//! `report.json`'s layout: serde_json's pretty printing (two spaces a level), with each line's
//! indentation written at once. serde_json's own writes it two bytes at a time, a call each, and a
//! long run's report has some hundred thousand indented lines.

use std::io::{self, Write};

use serde_json::ser::Formatter;

/// What a line is indented by at depth `n`: the first `2 * n` bytes (deeper lines take several).
const SPACES: &[u8; 64] = b"                                                                ";

#[derive(Default)]
pub(super) struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    fn line<W: ?Sized + Write>(&self, w: &mut W, start: &[u8]) -> io::Result<()> {
        w.write_all(start)?;
        let mut left = self.depth * 2;
        while left > 0 {
            let n = left.min(SPACES.len());
            w.write_all(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value {
            self.line(w, b"\n")?;
        }
        w.write_all(bracket)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.line(w, if first { b"\n" } else { b",\n" })
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.line(w, if first { b"\n" } else { b",\n" })
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize as _;
    use serde_json::json;

    use super::Pretty;

    fn pretty(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, Pretty::default()))
            .expect("serialized");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_layout_is_serde_jsons_pretty_one() {
        // Empty and nested collections, and a depth past the spaces written at once (40 levels).
        let mut deep = json!("leaf");
        for i in 0..40 {
            deep = if i % 2 == 0 {
                json!([deep, {}])
            } else {
                json!({ "k": deep, "e": [] })
            };
        }
        for v in [
            json!({}),
            json!([]),
            json!({ "a": [1, 2, { "b": null }], "c": { "d": [] }, "e": "x\n\"y\"" }),
            deep,
        ] {
            assert_eq!(pretty(&v), serde_json::to_string_pretty(&v).expect("serde_json"), "{v}");
        }
        // Control: the comparison sees a layout that differs.
        let v = json!({ "a": [1] });
        assert_ne!(pretty(&v), serde_json::to_string(&v).expect("compact"));
    }
}
