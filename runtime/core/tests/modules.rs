//! The workspace's modules import each other without circles, at every level of every crate's
//! module tree: the files of a folder as much as the crate's top-level modules.
//!
//! Each crate's modules are found from its root by its `mod name;` declarations (`name.rs`,
//! `name/mod.rs`); a file's imports are the paths it names after `crate::`, `super::` and `self::`
//! (in `use` lines and in code, `{...}` groups unfolded, comments stripped). An import from module S
//! to module T counts at the level of their nearest common ancestor P, as an edge between the child
//! of P that holds S and the one that holds T; a module naming its own ancestor or descendant is
//! structure, not an edge. Any cycle among the children of any P fails, with the files that make
//! it. (An item re-exported by a parent hides where it lives: `super::Item` counts as the parent.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// A crate's modules: path from the crate root (`["agent", "openai"]`) → file.
fn modules(root: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn visit(file: &Path, path: ModPath, is_dir_owner: bool, out: &mut BTreeMap<ModPath, PathBuf>) {
        let Ok(src) = std::fs::read_to_string(file) else { return };
        // `lib.rs`, `main.rs`, `mod.rs` own their folder; `foo.rs` owns `foo/`.
        let dir = if is_dir_owner {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            file.with_extension("")
        };
        out.insert(path.clone(), file.to_path_buf());
        for name in declared_modules(&strip_comments(&src)) {
            let mut child = path.clone();
            child.push(name.clone());
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            if flat.is_file() {
                visit(&flat, child, false, out);
            } else if nested.is_file() {
                visit(&nested, child, true, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, Vec::new(), true, &mut out);
    out
}

/// The names of `mod name;` declarations (not inline `mod name { ... }` blocks, which are part of
/// their file).
fn declared_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let mut l = line.trim();
        // Attributes on the same line (`#[cfg(test)] mod tests;`) and visibility.
        while let Some(rest) = l.strip_prefix("#[") {
            l = rest.split_once(']').map_or("", |(_, r)| r).trim_start();
        }
        if let Some(rest) = l.strip_prefix("pub") {
            l = rest.trim_start();
            if let Some(rest) = l.strip_prefix('(') {
                l = rest.split_once(')').map_or("", |(_, r)| r).trim_start();
            }
        }
        if let Some(rest) = l.strip_prefix("mod ") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
    }
    out
}

/// The code of a Rust file without `//` comments (doc comments included) and without the
/// contents of string literals, so a message that says `crate::x` is no import.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                if c == '"' && prev != '\\' {
                    in_str = false;
                    out.push('"');
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            // A char literal `'"'` is no string.
            if c == '"' && prev != '\'' {
                in_str = true;
            }
            out.push(c);
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every path the code names after `crate::`, `super::` or `self::`, as written (`super::super::x`
/// keeps its `super`s), with `{...}` groups unfolded into one path per leaf.
fn named_paths(code: &str) -> Vec<ModPath> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_path = ["crate::", "super::", "self::"].iter().any(|p| {
            chars[i..].iter().take(p.len()).copied().eq(p.chars())
                && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':'))
        });
        if starts_path {
            let mut at = i;
            parse_tree(&chars, &mut at, Vec::new(), &mut out);
            i = at.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Parses `seg::seg::{tree, tree}` at `*at`, pushing each full path onto `out`.
fn parse_tree(chars: &[char], at: &mut usize, mut prefix: ModPath, out: &mut Vec<ModPath>) {
    loop {
        skip_space(chars, at);
        if chars.get(*at) == Some(&'{') {
            *at += 1;
            loop {
                skip_space(chars, at);
                match chars.get(*at) {
                    Some('}') => {
                        *at += 1;
                        return;
                    }
                    Some(',') => *at += 1,
                    None => return,
                    _ => {
                        let before = *at;
                        parse_tree(chars, at, prefix.clone(), out);
                        if *at == before {
                            *at += 1;
                        }
                    }
                }
            }
        }
        let seg: String = chars[*at..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        if seg.is_empty() {
            out.push(prefix);
            return;
        }
        *at += seg.chars().count();
        if seg != "self" || prefix.is_empty() {
            prefix.push(seg);
        }
        if chars.get(*at) == Some(&':') && chars.get(*at + 1) == Some(&':') {
            *at += 2;
        } else {
            out.push(prefix);
            return;
        }
    }
}

fn skip_space(chars: &[char], at: &mut usize) {
    while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
        *at += 1;
    }
}

/// The module an import from `from` names: `written` made absolute, cut to the longest known module.
fn resolve(from: &ModPath, written: &ModPath, known: &BTreeMap<ModPath, PathBuf>) -> Option<ModPath> {
    let mut abs: ModPath = match written.first().map(String::as_str) {
        Some("crate") => written[1..].to_vec(),
        Some("self") => from.iter().chain(&written[1..]).cloned().collect(),
        Some("super") => {
            let ups = written.iter().take_while(|s| *s == "super").count();
            let base = from.len().checked_sub(ups)?;
            from[..base].iter().chain(&written[ups..]).cloned().collect()
        }
        _ => return None,
    };
    while !known.contains_key(&abs) {
        abs.pop()?;
    }
    Some(abs)
}

/// For each module P with children, the edges among its children: (from, to) → a witness.
type Levels = BTreeMap<ModPath, BTreeMap<(String, String), String>>;

fn levels(known: &BTreeMap<ModPath, PathBuf>) -> Levels {
    let mut levels = Levels::new();
    for (from, file) in known {
        let Ok(src) = std::fs::read_to_string(file) else {
            continue;
        };
        for written in named_paths(&strip_comments(&src)) {
            let Some(to) = resolve(from, &written, known) else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                // The same module, an ancestor or a descendant.
                continue;
            }
            let edge = (from[common].clone(), to[common].clone());
            levels
                .entry(from[..common].to_vec())
                .or_default()
                .entry(edge)
                .or_insert_with(|| format!("{} names {}", file.display(), written.join("::")));
        }
    }
    levels
}

/// A cycle among one level's children, as the path that closes it.
fn find_cycle(edges: &BTreeMap<(String, String), String>) -> Option<Vec<String>> {
    let mut g: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        g.entry(a).or_default().push(b);
    }
    fn visit<'a>(
        n: &'a str,
        g: &BTreeMap<&'a str, Vec<&'a str>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| *s == n) {
            let mut cycle: Vec<String> = stack[i..].iter().map(|s| s.to_string()).collect();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if !done.insert(n) {
            return None;
        }
        stack.push(n);
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|n| visit(n, &g, &mut Vec::new(), &mut done))
}

/// Every circle of a crate, each with the imports that make it.
fn circles(root: &Path) -> (usize, Vec<String>) {
    let known = modules(root);
    let mut found = Vec::new();
    for (parent, edges) in levels(&known) {
        if let Some(cycle) = find_cycle(&edges) {
            let witnesses: Vec<&str> = cycle
                .windows(2)
                .filter_map(|w| edges.get(&(w[0].clone(), w[1].clone())).map(String::as_str))
                .collect();
            let at = if parent.is_empty() {
                "the crate root".to_string()
            } else {
                parent.join("::")
            };
            found.push(format!(
                "in {at}: {}\n    {}",
                cycle.join(" -> "),
                witnesses.join("\n    ")
            ));
        }
    }
    (known.len(), found)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every crate of the workspace, by its root file.
const CRATES: &[&str] = &[
    "runtime/core/src/lib.rs",
    "runtime/web/src/lib.rs",
    "runtime/android/src/lib.rs",
    "runtime/agent/src/lib.rs",
    "runtime/fetch/src/lib.rs",
    "runtime/reports/src/lib.rs",
    "runtime/gates/src/lib.rs",
    "runtime/trailblaze/src/lib.rs",
    "runtime/cli/src/main.rs",
    "runtime/ffi/src/lib.rs",
    "host-functions/src/lib.rs",
    "tests/lib.rs",
    "tests/e2e/main.rs",
];

#[test]
fn no_module_of_any_crate_is_in_a_circle_at_any_level() {
    let mut all = Vec::new();
    for root in CRATES {
        let (n, found) = circles(&workspace().join(root));
        assert!(n >= 1, "{root}: the walk found its modules ({n})");
        all.extend(found.into_iter().map(|c| format!("{root}: {c}")));
    }
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

#[test]
fn the_engine_knows_no_dispatcher_and_the_reader_sees_real_imports() {
    let known = modules(&workspace().join("runtime/core/src/lib.rs"));
    assert!(known.len() > 100, "the core's modules were found ({})", known.len());
    let l = levels(&known);
    let top = &l[&Vec::new()];
    let has = |a: &str, b: &str| top.contains_key(&(a.to_string(), b.to_string()));
    assert!(has("dispatch", "state") && has("session", "dispatch"), "{top:?}");
    assert!(known.contains_key(&vec!["script".to_string(), "quickjs".to_string()]));
    // The engine knows no dispatcher, session or catalog: only the port's other side does.
    for m in ["dispatch", "session", "state", "catalog", "tool"] {
        assert!(!has("script", m), "script imports {m}");
    }
}

fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let found = circles(&dir.path().join("lib.rs")).1;
    (dir, found)
}

#[test]
fn a_planted_circle_between_files_of_a_folder_is_found_with_its_files() {
    let lib = "pub mod a;\nmod c;\n";
    let a = "pub mod x;\npub mod y;\npub use x::Thing;\n";
    // A control first: a child naming its parent's items and a sibling one way is no circle.
    let (_d, found) = planted(&[
        ("lib.rs", lib),
        ("a.rs", a),
        ("a/x.rs", "use super::y::Other;\npub struct Thing;\n"),
        (
            "a/y.rs",
            "use super::Thing as _; // the parent's re-export\npub struct Other;\n",
        ),
        ("c.rs", "use crate::a::Thing;\n"),
    ]);
    assert!(found.is_empty(), "{found:?}");
    // y now names x itself, in a group: a circle inside `a`.
    let (_d, found) = planted(&[
        ("lib.rs", lib),
        ("a.rs", a),
        ("a/x.rs", "use super::y::Other;\npub struct Thing;\n"),
        ("a/y.rs", "use super::{\n    x::{self, Thing},\n};\npub struct Other;\n"),
        ("c.rs", "use crate::a::Thing;\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("in a: x -> y -> x"), "{}", found[0]);
    assert!(
        found[0].contains("a/y.rs names super::x"),
        "the file that makes it: {}",
        found[0]
    );
}

#[test]
fn a_planted_circle_between_top_level_modules_is_found() {
    // `mod.rs` folders, `crate::` paths in code (not only in `use`), and a string that names a
    // path but is none.
    let (_d, found) = planted(&[
        ("lib.rs", "mod b;\nmod c;\n"),
        ("b/mod.rs", "mod inner;\npub fn f() { let _ = \"crate::c::g\"; }\n"),
        ("b/inner.rs", "pub fn h() { crate::c::g(); }\n"),
        ("c.rs", "pub fn g() {}\n"),
    ]);
    assert!(found.is_empty(), "one way is no circle: {found:?}");
    let (_d, found) = planted(&[
        ("lib.rs", "mod b;\nmod c;\n"),
        ("b/mod.rs", "mod inner;\npub fn f() {}\n"),
        ("b/inner.rs", "pub fn h() { crate::c::g(); }\n"),
        ("c.rs", "pub fn g() { crate::b::f(); }\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("in the crate root: b -> c -> b"), "{}", found[0]);
}

/// The files that break the one module convention (`foo.rs` beside `foo/`, never `foo/mod.rs`) in
/// the module trees of `roots`.
fn mod_rs_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .flat_map(|root| modules(root).into_values())
        .filter(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
        .collect()
}

#[test]
fn every_crate_follows_one_module_convention_foo_rs_beside_foo() {
    let roots: Vec<PathBuf> = CRATES.iter().map(|r| workspace().join(r)).collect();
    let found = mod_rs_files(&roots);
    assert!(
        found.is_empty(),
        "`foo/mod.rs` where the workspace uses `foo.rs` beside `foo/`: {found:?}"
    );
    // Control: a tree that declares a module as `b/mod.rs` is found.
    let (dir, _) = planted(&[("lib.rs", "mod b;\n"), ("b/mod.rs", "mod inner;\n"), ("b/inner.rs", "")]);
    let planted = mod_rs_files(&[dir.path().join("lib.rs")]);
    assert_eq!(planted, [dir.path().join("b/mod.rs")]);
}
