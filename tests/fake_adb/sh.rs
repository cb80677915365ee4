//! The fake device's shell parsing: what mksh does to a command line, for what trailblaze sends
//! (single and double quotes, backslashes, blanks, `;` between commands, `$?`, `$$`). Anything else a real
//! shell would expand or treat as an operator when unquoted (`&|<>()$\`*?[`, a leading `#` or `~`)
//! is refused, so a command that would inject or expand on a real device fails loudly here.

/// Stands for `$?` (the previous command's exit status) inside a word until it runs.
pub const LAST_STATUS: char = '\u{1}';
/// Stands for `$$` (the shell's process id) inside a word until it runs.
pub const SHELL_PID: char = '\u{2}';

/// The commands of `line`, each as its words.
pub fn parse(line: &str) -> Result<Vec<Vec<String>>, String> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(d @ ('$' | '`')) => return Err(format!("expansion {d:?} inside double quotes")),
                        Some(q) => word.push(q),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(e) => word.push(e),
                    None => return Err("trailing backslash".into()),
                }
            }
            ';' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                commands.push(std::mem::take(&mut words));
            }
            '$' if chars.peek() == Some(&'?') => {
                chars.next();
                in_word = true;
                word.push(LAST_STATUS);
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                in_word = true;
                word.push(SHELL_PID);
            }
            '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' => {
                return Err(format!("unquoted {c:?}: the shell would treat it specially"));
            }
            '#' | '~' if !in_word => return Err(format!("unquoted {c:?} at the start of a word")),
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    commands.push(words);
    commands.retain(|c| !c.is_empty());
    Ok(commands)
}
