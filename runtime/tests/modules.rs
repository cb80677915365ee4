//! The library's modules import each other without circles: `crate::x` paths are read from the
//! sources (comments stripped), one node per top-level module, and any cycle fails with its path.
//! A new circle (say `dispatch` reaching back into `session`) fails this test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The code of a Rust file without `//` comments (doc comments included). Strings are kept; a `//`
/// inside a string on a line that also names a module is rare enough not to matter here.
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level modules named after `crate::`: `crate::a::b`, and `crate::{a, b::c}` groups.
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            let mut at_start = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        if !item.is_empty() {
                            out.insert(std::mem::take(&mut item));
                        }
                        at_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 1 && at_start {
                    if c.is_alphanumeric() || c == '_' {
                        item.push(c);
                    } else if !item.is_empty() {
                        out.insert(std::mem::take(&mut item));
                        at_start = false;
                    }
                }
            }
            if !item.is_empty() {
                out.insert(item);
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The graph of `src`'s top-level modules (lib.rs and main.rs are the roots, not nodes).
fn graph_of(src: &Path) -> Graph {
    fn walk(dir: &Path, src: &Path, g: &mut Graph) {
        for e in std::fs::read_dir(dir).expect("read src").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, src, g);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).expect("under src");
            let first = rel.components().next().expect("a component");
            let top = first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
            if top == "lib" || top == "main" {
                continue;
            }
            let code = strip_comments(&std::fs::read_to_string(&p).expect("read file"));
            let entry = g.entry(top.clone()).or_default();
            entry.extend(imports(&code).into_iter().filter(|m| *m != top));
        }
    }
    let mut g = Graph::new();
    walk(src, src, &mut g);
    g
}

/// A cycle, as the path of modules that closes it, if there is one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(n: &str, g: &Graph, stack: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

#[test]
fn the_runtime_modules_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph_of(&src);
    assert!(g.len() > 10, "the walk found the modules: {:?}", g.keys());
    assert!(
        g["dispatch"].contains("state") && g["session"].contains("dispatch"),
        "the reader sees real imports: {g:?}"
    );
    if let Some(cycle) = find_cycle(&g) {
        panic!("import circle: {}\nthe graph: {g:#?}", cycle.join(" -> "));
    }
    // The engine knows no dispatcher, session or catalog: only the port's other side does.
    for m in ["dispatch", "session", "state", "catalog", "tool"] {
        assert!(!g["script"].contains(m), "script imports {m}");
    }
}

#[test]
fn a_planted_circle_is_found_with_its_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("lib.rs", "pub mod a; pub mod b; pub mod c;");
    write("a.rs", "use crate::b::Thing; // crate::c in a comment is no import\n");
    write("b/mod.rs", "use crate::{\n    c::{self, More},\n    a,\n};\n");
    write("c.rs", "pub struct More;\n");
    let g = graph_of(dir.path());
    assert_eq!(g["a"], BTreeSet::from(["b".to_string()]));
    assert_eq!(g["b"], BTreeSet::from(["a".to_string(), "c".to_string()]));
    let cycle = find_cycle(&g).expect("a <-> b is a circle");
    assert!(cycle == ["a", "b", "a"] || cycle == ["b", "a", "b"], "{cycle:?}");
    // Positive control: without the back edge there is none.
    write("b/mod.rs", "use crate::c::More;\n");
    assert_eq!(find_cycle(&graph_of(dir.path())), None);
}
