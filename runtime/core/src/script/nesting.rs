//! The pre-parse nesting guard shared by `transpile` and `analyze`.
//!
//! swc's parser and visitors recurse per level of nesting, and a stack overflow aborts the
//! process (it is not a panic `catch_unwind` could stop), so a pathological file is refused
//! before swc sees it. The estimate over-approximates the AST depth from tokens: every open
//! bracket adds a level, and so (when the caller counts operators) does every token that nests
//! what follows without a bracket (`!`, unary `-`, `?`, `:`, `=`, `=>`, `<`, `new`, `await`,
//! `else`, ...). A closing bracket restores the level from before its opener; a statement or
//! list boundary (`;`, `,`, a newline where ASI would end the statement) restores the level of
//! the enclosing bracket, except before `else`, which keeps an `if`/`else if` chain counted.
//! Strings, comments, regexes and template text are skipped. Left-leaning chains count too
//! (`f()()()`, `a.b.c`, `"x" + "x" + ...`): swc nests them as deep as they are long, and a long one
//! is as dangerous as deep brackets (and costs swc memory quadratic in its length).

/// What adds a level, besides brackets and template `${`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Counted {
    /// Chaining operators and keywords too: for a caller whose stack bounds the depth swc may
    /// reach (`transpile`).
    Operators,
    /// Only the `<` of type arguments (`Array<Array<...`), closed again by its `>`: for a
    /// caller whose stack is sized for the worst shape per byte and only needs deep generics
    /// and brackets caught early (`analyze`).
    TypeArguments,
}

/// `Err((line, col))` (1-based, col in characters) of the token that takes `source` past `max`
/// levels of nesting, as counted per `counted`.
pub(super) fn check(source: &str, max: usize, counted: Counted) -> Result<(), (u32, u32)> {
    NestingScan {
        src: source,
        b: source.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
        max,
        counted,
        stack: Vec::new(),
        level: 0,
        prev_value: false,
        angles: 0,
    }
    .run()
}

/// An open bracket on the nesting scanner's stack, with the level just inside it.
#[derive(Clone, Copy)]
enum Open {
    Bracket(usize),
    /// `${` inside a template literal: its `}` resumes the template text.
    TemplateExpr(usize),
}

impl Open {
    fn level(self) -> usize {
        match self {
            Open::Bracket(l) | Open::TemplateExpr(l) => l,
        }
    }
}

struct NestingScan<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
    max: usize,
    counted: Counted,
    stack: Vec<Open>,
    level: usize,
    /// Whether the previous token ends a value: decides unary vs binary `+`/`-`, regex vs
    /// division, and whether a newline can end the statement.
    prev_value: bool,
    /// Levels added by type-argument `<`s since the last bracket or boundary, which their
    /// `>` take back ([`Counted::TypeArguments`] only).
    angles: usize,
}

impl NestingScan<'_> {
    /// `Err((line, col))` of the token that went past the limit.
    fn run(&mut self) -> Result<(), (u32, u32)> {
        let operators = self.counted == Counted::Operators;
        loop {
            let newline = self.skip_trivia();
            let Some(&c) = self.b.get(self.i) else {
                return Ok(());
            };
            let base = self.stack.last().map_or(0, |o| o.level());
            let starts_statement = is_word_byte(c) || matches!(c, b'"' | b'\'' | b'`' | b'}');
            if newline && self.prev_value && starts_statement && !self.next_word_continues() {
                self.level = base;
                self.angles = 0;
            }
            if self.structural(c, base, operators)? {
                continue;
            }
            if self.operator(c, operators) && operators {
                self.level += 1;
                self.check(self.level)?;
            }
        }
    }

    /// Consumes a token that opens, closes or ends a level or is skipped whole (strings,
    /// templates, brackets, boundaries, regexes, type-argument angles); false if `c` starts
    /// none of these.
    fn structural(&mut self, c: u8, base: usize, operators: bool) -> Result<bool, (u32, u32)> {
        match c {
            b'"' | b'\'' => {
                self.skip_string(c);
                self.prev_value = true;
            }
            b'`' => self.template_start()?,
            b'(' | b'[' | b'{' => self.open_bracket(c, operators)?,
            b')' | b']' | b'}' => self.close_bracket(),
            b';' | b',' => {
                self.i += 1;
                if !self.next_word_continues() {
                    self.level = base;
                    self.angles = 0;
                }
                self.prev_value = false;
            }
            b'/' if !self.prev_value => {
                self.skip_regex();
                self.prev_value = true;
            }
            b'<' if !operators => self.type_angle_open()?,
            b'>' if !operators && self.angles > 0 => {
                self.i += 1;
                self.angles -= 1;
                self.level -= 1;
                self.prev_value = false;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A backtick: template text, and a level for each `${` it opens.
    fn template_start(&mut self) -> Result<(), (u32, u32)> {
        self.i += 1;
        if self.skip_template_text() {
            self.level += 1;
            self.stack.push(Open::TemplateExpr(self.level));
            self.check(self.level)?;
            self.prev_value = false;
        } else {
            self.prev_value = true;
        }
        Ok(())
    }

    /// `(`, `[` or `{`: one level in, two for a call or index that lengthens a chain.
    fn open_bracket(&mut self, c: u8, operators: bool) -> Result<(), (u32, u32)> {
        self.angles = 0;
        // A call or an index after a value (`f()()`, `a[0][1]`) is one more link of a
        // left-leaning chain, which swc nests as deep as it is long.
        if operators && self.prev_value && c != b'{' {
            self.level += 1;
        }
        self.level += 1;
        self.check(self.level)?;
        self.stack.push(Open::Bracket(self.level));
        self.i += 1;
        self.prev_value = false;
        Ok(())
    }

    /// `)`, `]` or `}`: back to the level before its opener, or on into template text.
    fn close_bracket(&mut self) {
        self.angles = 0;
        self.i += 1;
        self.prev_value = true;
        match self.stack.pop() {
            Some(Open::Bracket(l)) => self.level = l - 1,
            Some(Open::TemplateExpr(l)) => {
                self.level = l - 1;
                if self.skip_template_text() {
                    self.level += 1;
                    self.stack.push(Open::TemplateExpr(self.level));
                    self.prev_value = false;
                }
            }
            None => self.level = 0,
        }
    }

    /// `<` when only type arguments count: a level if it follows a word.
    fn type_angle_open(&mut self) -> Result<(), (u32, u32)> {
        // A comparison (`i<n`) is not closed by a `>`: boundaries and brackets
        // forget such leftovers, so they do not add up.
        let after_word = self
            .i
            .checked_sub(1)
            .and_then(|j| self.b.get(j))
            .is_some_and(|&p| is_word_byte(p));
        self.i += 1;
        if after_word {
            self.angles += 1;
            self.level += 1;
            self.check(self.level)?;
        }
        self.prev_value = false;
        Ok(())
    }

    /// Consumes a word or operator; says whether it nests what follows.
    fn operator(&mut self, c: u8, operators: bool) -> bool {
        let nests;
        match c {
            c if is_word_byte(c) => {
                let word = self.word();
                nests = NESTING_WORDS.contains(&word);
                self.prev_value = !nests && !EXPRESSION_WORDS.contains(&word);
            }
            b'=' => match self.b.get(self.i + 1) {
                Some(b'>') => {
                    self.i += 2;
                    nests = true;
                    self.prev_value = false;
                }
                Some(b'=') => {
                    self.i += 2;
                    nests = false;
                    self.prev_value = false;
                }
                _ => {
                    self.i += 1;
                    nests = true;
                    self.prev_value = false;
                }
            },
            b'+' | b'-' => {
                if self.b.get(self.i + 1) == Some(&c) {
                    // `++`/`--`: postfix keeps a value, prefix nests.
                    self.i += 2;
                    nests = !self.prev_value;
                } else {
                    self.i += 1;
                    // Unary nests what follows; binary (`a + b + c`) lengthens a left-leaning
                    // chain, which nests too.
                    nests = !self.prev_value || operators;
                    self.prev_value = false;
                }
            }
            b'!' | b'~' | b'?' | b':' | b'<' => {
                self.i += 1;
                nests = true;
                self.prev_value = false;
            }
            _ => {
                self.i += 1;
                // After a value, `.`, `*`, `%`, `&`, `|`, `^`, `>` join a left-leaning chain.
                nests = operators && self.prev_value && matches!(c, b'.' | b'*' | b'%' | b'&' | b'|' | b'^' | b'>');
                self.prev_value = false;
            }
        }
        nests
    }

    fn check(&self, level: usize) -> Result<(), (u32, u32)> {
        if level <= self.max {
            return Ok(());
        }
        let col = self.src.get(self.line_start..self.i).map_or(0, |s| s.chars().count()) + 1;
        Err((self.line, u32::try_from(col).unwrap_or(u32::MAX)))
    }

    fn newline_at(&mut self, i: usize) {
        self.line += 1;
        self.line_start = i + 1;
    }

    /// Skips whitespace and comments; says whether a newline was crossed.
    fn skip_trivia(&mut self) -> bool {
        let mut newline = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\n' => {
                    newline = true;
                    self.newline_at(self.i);
                    self.i += 1;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.b.get(self.i).is_some_and(|&c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    while let Some(&c) = self.b.get(self.i) {
                        if c == b'*' && self.b.get(self.i + 1) == Some(&b'/') {
                            self.i += 2;
                            break;
                        }
                        if c == b'\n' {
                            newline = true;
                            self.newline_at(self.i);
                        }
                        self.i += 1;
                    }
                    if self.i > self.b.len() {
                        self.i = self.b.len();
                    }
                }
                _ => break,
            }
        }
        newline
    }

    /// Whether the next token is a word that continues the statement before it, so a boundary
    /// here does not end the nesting (`x; else if ...`).
    fn next_word_continues(&self) -> bool {
        let mut probe = NestingScan {
            src: self.src,
            b: self.b,
            i: self.i,
            line: self.line,
            line_start: self.line_start,
            max: self.max,
            counted: self.counted,
            stack: Vec::new(),
            level: 0,
            prev_value: false,
            angles: 0,
        };
        probe.skip_trivia();
        probe.b.get(probe.i).is_some_and(|&c| is_word_byte(c)) && CONTINUING_WORDS.contains(&probe.word())
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        while self.b.get(self.i).is_some_and(|&c| is_word_byte(c)) {
            self.i += 1;
        }
        self.src.get(start..self.i).unwrap_or("")
    }

    /// A quoted string; an unescaped newline ends it (that is a syntax error swc reports).
    fn skip_string(&mut self, quote: u8) {
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => {
                    if self.b.get(self.i + 1) == Some(&b'\n') {
                        self.newline_at(self.i + 1);
                    }
                    self.i += 2;
                }
                b'\n' => return,
                c => {
                    self.i += 1;
                    if c == quote {
                        return;
                    }
                }
            }
        }
    }

    /// Template text up to the closing backtick (false) or a `${` (true).
    fn skip_template_text(&mut self) -> bool {
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'`' => {
                    self.i += 1;
                    return false;
                }
                b'$' if self.b.get(self.i + 1) == Some(&b'{') => {
                    self.i += 2;
                    return true;
                }
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        false
    }

    /// A regex literal: up to the next `/` outside a character class, on the same line.
    fn skip_regex(&mut self) {
        self.i += 1;
        let mut in_class = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'\n' => return,
                b'[' => {
                    in_class = true;
                    self.i += 1;
                }
                b']' => {
                    in_class = false;
                    self.i += 1;
                }
                b'/' if !in_class => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'\\' | b'#') || c >= 0x80
}

/// Words that nest the expression or statement after them without a bracket.
const NESTING_WORDS: &[&str] = &[
    "new", "typeof", "void", "delete", "await", "yield", "else", "if", "while", "for", "do", "with", "extends",
    "keyof", "infer", "throw", "return", "case",
];
/// Words after which an expression starts (so `/` begins a regex and `-` is unary).
const EXPRESSION_WORDS: &[&str] = &["in", "of", "instanceof", "as", "satisfies", "is"];
/// Words that continue the previous statement across a boundary.
const CONTINUING_WORDS: &[&str] = &[
    "else",
    "instanceof",
    "in",
    "as",
    "satisfies",
    "extends",
    "implements",
    "of",
];

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Counted; 2] = [Counted::Operators, Counted::TypeArguments];

    #[test]
    fn text_that_is_not_code_does_not_count() {
        let n = 2000;
        // Brackets and operators inside strings, comments, regexes and template text.
        let src = format!(
            "// {}\n/* {} */\nconst s = \"{}\";\nconst t = '{}';\nconst r = /[(]{}/;\nconst u = `{}`;\n",
            "(".repeat(n),
            "!".repeat(n),
            "[".repeat(n),
            "?".repeat(n),
            "\\(".repeat(n),
            "{".repeat(n),
        );
        for counted in BOTH {
            assert_eq!(check(&src, 500, counted), Ok(()), "{counted:?}");
        }
    }

    #[test]
    fn brackets_and_type_arguments_count_in_both_modes() {
        let parens = format!("export const x = {}1{};\n", "(".repeat(600), ")".repeat(600));
        let generics = format!("type X = {}string{};\n", "Array<".repeat(600), ">".repeat(600));
        for counted in BOTH {
            // `export const x = ` is 17 characters, and its `=` a level of its own when operators
            // count: the bracket past the limit is the 500th, else the 501st.
            let col = if counted == Counted::Operators { 517 } else { 518 };
            assert_eq!(check(&parens, 500, counted), Err((1, col)), "{counted:?}");
            assert!(check(&generics, 500, counted).is_err(), "{counted:?}");
        }
    }

    #[test]
    fn only_operators_mode_counts_chained_operators() {
        for src in [
            format!("export const n = {}true;\n", "!".repeat(600)),
            format!("export const f = {}1;\n", "a=>".repeat(600)),
        ] {
            assert!(check(&src, 500, Counted::Operators).is_err(), "{src:.30}");
            assert_eq!(check(&src, 500, Counted::TypeArguments), Ok(()), "{src:.30}");
        }
        // Closed type arguments and comparisons add nothing up across statements.
        let flat = "let a: Map<string, Array<number>> = f<T>(x);\nfor (let i = 0; i<3; i++) {}\nif (1<2) {}\n";
        assert_eq!(check(&flat.repeat(600), 500, Counted::TypeArguments), Ok(()));
    }
}
