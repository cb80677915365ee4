//! Arithmetic for `assertMath`: numbers, `+ - * / % ^`, parentheses, unary minus and the usual
//! functions (`abs`, `sqrt`, `floor`, `ceil`, `round`, `min`, `max`, ...), in f64 as the original's
//! evaluator computes. Bounded: a deep nesting is an error, never a stack overflow.

/// Nesting deeper than this is refused (the expression is a trail's, not a program).
const MAX_DEPTH: usize = 64;
/// A longer expression is refused before it is read.
const MAX_LEN: usize = 4096;

pub fn eval(src: &str) -> Result<f64, String> {
    if src.len() > MAX_LEN {
        return Err(format!("the expression is longer than {MAX_LEN} characters"));
    }
    let mut p = Parser {
        s: src.as_bytes(),
        at: 0,
        depth: 0,
    };
    let v = p.sum()?;
    p.space();
    if p.at < p.s.len() {
        return Err(format!("unexpected `{}` at column {}", p.s[p.at] as char, p.at + 1));
    }
    if v.is_finite() {
        Ok(v)
    } else {
        Err("the expression has no finite value (a division by zero?)".into())
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.space();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        loop {
            if self.eat(b'+') {
                v += self.product()?;
            } else if self.eat(b'-') {
                v -= self.product()?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        loop {
            if self.eat(b'*') {
                v *= self.unary()?;
            } else if self.eat(b'/') {
                v /= self.unary()?;
            } else if self.eat(b'%') {
                v %= self.unary()?;
            } else {
                return Ok(v);
            }
        }
    }

    fn unary(&mut self) -> Result<f64, String> {
        self.nest()?;
        let v = if self.eat(b'-') {
            -self.unary()?
        } else if self.eat(b'+') {
            self.unary()?
        } else {
            self.power()?
        };
        self.depth -= 1;
        Ok(v)
    }

    /// `^` binds tighter than unary minus on its left and is right-associative: `-2^2` is -4.
    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if self.eat(b'^') {
            let exp = self.unary()?;
            Ok(base.powf(exp))
        } else {
            Ok(base)
        }
    }

    fn nest(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("the expression nests deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<f64, String> {
        self.space();
        if self.eat(b'(') {
            let v = self.sum()?;
            return if self.eat(b')') {
                Ok(v)
            } else {
                Err(self.expected("`)`"))
            };
        }
        let start = self.at;
        match self.s.get(self.at) {
            Some(c) if c.is_ascii_digit() || *c == b'.' => {
                while self.s.get(self.at).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                    self.at += 1;
                }
                // An exponent: `1e3`, `2.5E-2`.
                if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
                    let back = self.at;
                    self.at += 1;
                    if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                        self.at += 1;
                    }
                    if self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                            self.at += 1;
                        }
                    } else {
                        self.at = back;
                    }
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                text.parse::<f64>()
                    .map_err(|_| format!("`{text}` at column {} is not a number", start + 1))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                while self.s.get(self.at).is_some_and(u8::is_ascii_alphanumeric) {
                    self.at += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                self.call(name, start)
            }
            _ => Err(self.expected("a number, `(` or a function")),
        }
    }

    fn call(&mut self, name: &str, start: usize) -> Result<f64, String> {
        match name {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        if !self.eat(b'(') {
            return Err(format!("unknown name `{name}` at column {}", start + 1));
        }
        let mut args = vec![self.sum()?];
        while self.eat(b',') {
            args.push(self.sum()?);
        }
        if !self.eat(b')') {
            return Err(self.expected("`)`"));
        }
        let one = |f: fn(f64) -> f64| match args.as_slice() {
            [x] => Ok(f(*x)),
            _ => Err(format!("`{name}` takes one argument")),
        };
        match name {
            "abs" => one(f64::abs),
            "sqrt" => one(f64::sqrt),
            "cbrt" => one(f64::cbrt),
            "floor" => one(f64::floor),
            "ceil" => one(f64::ceil),
            "round" => one(f64::round),
            "exp" => one(f64::exp),
            "log" => one(f64::ln),
            "log10" => one(f64::log10),
            "log2" => one(f64::log2),
            "sin" => one(f64::sin),
            "cos" => one(f64::cos),
            "tan" => one(f64::tan),
            "signum" => one(f64::signum),
            "min" => Ok(args.iter().copied().fold(f64::INFINITY, f64::min)),
            "max" => Ok(args.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            _ => Err(format!("unknown function `{name}` at column {}", start + 1)),
        }
    }

    fn expected(&self, what: &str) -> String {
        match self.s.get(self.at) {
            Some(c) => format!("expected {what} at column {}, found `{}`", self.at + 1, *c as char),
            None => format!("expected {what} at the end"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn arithmetic_as_written() {
        for (src, want) in [
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("-2^2", -4.0),
            ("2^3^2", 512.0),
            ("10 % 4", 2.0),
            ("12.50 * 2 - 5", 20.0),
            ("1e3 / 4", 250.0),
            ("max(1, 7, 3) + abs(-2) + round(2.5)", 12.0),
            ("sqrt(16)", 4.0),
        ] {
            assert_eq!(eval(src), Ok(want), "{src}");
        }
    }

    #[test]
    fn bad_expressions_say_where() {
        assert!(eval("1 +").unwrap_err().contains("at the end"));
        assert!(eval("2 $ 3").unwrap_err().contains("column 3"));
        assert!(eval("foo(1)").unwrap_err().contains("unknown function `foo`"));
        assert!(eval("1/0").unwrap_err().contains("finite"));
        assert!(eval("(1").unwrap_err().contains("`)`"));
        // Bounded: deep nesting is an error, not a stack overflow.
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(eval(&deep).is_err());
        let minus = format!("{}1", "-".repeat(3000));
        assert!(eval(&minus).is_err());
        // Control: modest nesting is fine.
        assert_eq!(eval(&format!("{}1{}", "(".repeat(20), ")".repeat(20))), Ok(1.0));
    }
}
