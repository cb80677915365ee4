use std::path::Path;

use saphyr::Scalar;

use super::super::corpus::{Rng, mutate, project_yaml, repo};
use super::super::parse_events;
use super::*;

/// Whether the quick reader took `text`; when it did, its tree must be saphyr's, value and positions.
fn agrees(text: &str) -> bool {
    let Some(lean) = parse(text) else {
        return false;
    };
    match parse_events(text, Path::new("x.yaml")) {
        // Keys compared by what they read (the quick reader's are spans of the text).
        Ok(full) => assert!(
            (&lean.0, lean.1.resolved(text)) == (&full.0, full.1.resolved(text)),
            "the readers differ on:\n{text}\nquick: {lean:?}\nsaphyr: {full:?}"
        ),
        Err(e) => panic!("the quick reader took what saphyr refuses ({}):\n{text}", e.message),
    }
    true
}

#[test]
fn the_quick_reader_takes_the_projects_trails_and_agrees_with_saphyr_on_every_file() {
    let files = project_yaml();
    assert!(
        files.len() >= 30,
        "the project's YAML was found ({} files)",
        files.len()
    );
    let mut taken = 0;
    for (path, text) in &files {
        let ok = agrees(text);
        taken += usize::from(ok);
        // The control: the fast path is really taken for what users write most.
        if path.starts_with(repo().join("trailmaps")) && path.to_string_lossy().ends_with(".trail.yaml") {
            assert!(ok, "{} left the quick reader", path.display());
        }
    }
    assert!(
        taken * 10 >= files.len() * 8,
        "only {taken} of {} files were read quickly",
        files.len()
    );
}

#[test]
fn the_subset_is_read_and_everything_else_is_left_to_saphyr() {
    let taken = [
        "",
        "# only a comment\n",
        "a: 1\nb: -2.5\nc: true\nd: ~\ne: null\nf: 0x1f\ng: '12'\nh: \"x\"\n",
        "config:\n  id: a/b\n  tags: [smoke, 'slow one', \"x\"]\ntrail:\n  - step: One\n    recording:\n      tools:\n        - tap: { x: 1, y: 2 }\n",
        "tools:\n- a\n- b: { c: [1, 2, {d: e}] }\nnext: x\n",
        "- key:\n  - a\n  - b\n- other: 1\n",
        "a:   spaced value   # a comment\nb: x#y\nc: a:b\nd: -x\n'quoted key': 1\n\"dq\": 2\n1: int key\ntrue: bool key\n",
        "s: 'it''s'\nd: \"tab\\there \\\"q\\\" \\u00e9 \\x41 \\\\\"\n",
        "naïve: café\nnext: { clé: 'été', n: 1 }\n",
        "a:\n\n  # a comment inside\n  b: 1\n\n",
        "a: {}\nb: []\nc: { }\n",
        "-   a: 1\n    b: 2\n-   c\n",
        "a: 1\n",
        "a: 1",
        "a: |\n  one\n    two\n\n  # text, not a comment\nb: >-\n  folded\n  line\n\n  para\n",
        "- step: >\n    Find the field\n    and type.\n\n- step: |+\n    kept\n\n\n- x\n",
        "a: > # header comment\n  x\nb: 1\n",
    ];
    for text in taken {
        assert!(agrees(text), "the quick reader left this to saphyr:\n{text}");
    }
    let left = [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: |2\n  indented\n",
        "a: >\n\n  leading blank\n",
        "a: >\n  x\n    more indented\n",
        "a: |\n  no final break",
        "a: multi\n  line\n",
        "a: 'two\n  lines'\n",
        "a: { b: 1,\n  c: 2 }\n",
        "---\na: 1\n",
        "a:\tb\n",
        "a: 1\r\n",
        "a:\n",
        "a: 1\na: 2\n",
        "? complex\n: key\n",
        "- - nested\n",
        "a: [1, 2, ]\n",
        "a: { b }\n",
        "a: [b: c]\n",
        "a: \"\\N\"\n",
        "a: .nan\n",
        "null: 1\n",
        "  indented: root\n",
        "a: b: c\n",
        "[1, 2]\n",
        "a: x\n b: y\n",
    ];
    for text in left {
        assert!(
            !agrees(text),
            "the quick reader took what it should leave to saphyr:\n{text}"
        );
    }
}

/// A long sequence of varied items (maps, block scalars, flow maps, nested lists, comments and
/// blank lines between items), `n` of them, under `trail:` at column `col`, a key after it.
fn long_sequence(n: usize, col: usize, broken: Option<usize>) -> String {
    let pad = " ".repeat(col);
    let mut t = String::from("config:\n  id: demo/long\ntrail:\n");
    for i in 0..n {
        let item = match i % 5 {
            0 => format!(
                "{pad}- step: Step {i}\n{pad}  recording:\n{pad}    tools:\n{pad}      - tap: {{ x: {i}, y: 2 }}\n"
            ),
            1 => format!("{pad}- step: |\n{pad}    two\n{pad}      lines {i}\n{pad}  maxRetries: 1\n"),
            2 => format!("\n{pad}# a comment between items\n{pad}- verify: 'it''s {i}'\n"),
            3 => format!("{pad}- [a, {{b: {i}}}]\n"),
            _ => format!("{pad}- plain {i}\n"),
        };
        t.push_str(&item);
        if broken == Some(i) {
            t.push_str(&format!("{pad}- &anchor left to saphyr\n"));
        }
    }
    t.push_str("after: 1\n");
    t
}

#[test]
fn a_long_sequence_read_in_two_halves_is_saphyrs_and_a_half_it_cannot_read_leaves_it_all() {
    for col in [0, 2] {
        let text = long_sequence(700, col, None);
        // The sequence is long enough to be read in halves here (where a second core is).
        let lines = lines(&text).expect("lines");
        let at = lines
            .iter()
            .position(|l| l.indent == col && text[l.start + col..].starts_with("- "))
            .expect("an item");
        let r = Reader::new(&text, &lines, at, 1);
        if crate::cores::second() {
            let (mid, end) = r.halves(col).expect("split");
            assert!(at < mid && mid < end && end == lines.len() - 1, "{at} {mid} {end}");
        }
        assert!(agrees(&text), "column {col}");
        // Control: what the quick reader does not take, in either half, leaves the whole file to saphyr.
        for broken in [10, 650] {
            assert!(
                parse(&long_sequence(700, col, Some(broken))).is_none(),
                "broken at {broken}"
            );
        }
    }
    // A short one is read on this thread alone.
    let text = long_sequence(SPLIT_ITEMS - 1, 2, None);
    let lines = lines(&text).expect("lines");
    let at = lines
        .iter()
        .position(|l| l.indent == 2 && text[l.start + 2..].starts_with("- "))
        .expect("an item");
    assert!(Reader::new(&text, &lines, at, 1).halves(2).is_none());
    assert!(agrees(&text));
}

#[test]
fn mutants_of_a_long_sequence_about_its_middle_are_read_alike_or_left_to_saphyr() {
    // Edits where the halves meet: each mutant is read as saphyr reads it, or left to saphyr.
    let text = long_sequence(600, 2, None);
    let mid = text.len() / 2;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut taken, mut total) = (0usize, 0usize);
    for _ in 0..200 {
        let t = mutate(&mut rng, &text, mid - 600..mid + 600);
        total += 1;
        taken += usize::from(agrees(&t));
    }
    assert!(taken > 0 && taken < total, "{taken} of {total} mutants read quickly");
}

#[test]
fn the_comparison_sees_a_moved_position() {
    // The companion of the tests above: two trees with the same value and one position apart differ.
    let a = parse("a: { b: 1 }\n").unwrap();
    let b = parse("a: {  b: 1 }\n").unwrap();
    assert_eq!(a.0, b.0);
    assert!(a.1 != b.1, "positions are compared");
}

#[test]
fn mutated_files_are_read_alike_or_left_to_saphyr() {
    // `TRAILBLAZE_YAML_MUTANTS=<n>` for a longer run by hand.
    let per_file = std::env::var("TRAILBLAZE_YAML_MUTANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut taken, mut total) = (0usize, 0usize);
    for (_, text) in project_yaml() {
        for _ in 0..per_file {
            let t = mutate(&mut rng, &text, 0..usize::MAX);
            total += 1;
            taken += usize::from(agrees(&t));
        }
    }
    // Both paths ran often: the mutants are neither all inside the subset nor all outside it.
    eprintln!("{taken} of {total} mutants read quickly");
    assert!(
        taken * 5 > total && taken * 5 < total * 4,
        "{taken} of {total} mutants read quickly"
    );
}

#[test]
fn what_is_surely_text_is_text_to_saphyr_too() {
    let tokens =
        "nodeSelector a x1.5 e5 E1 inf Infinity nan NaN nullx yes no on n t truE tRUE False1 b0x1 o17 Null_ ABC z~";
    for t in tokens.split(' ') {
        assert!(
            scalars::surely_text(t),
            "{t} starts with a letter and is no null or bool"
        );
        assert!(
            matches!(Scalar::parse_from_cow(Cow::Borrowed(t)), Scalar::String(_)),
            "saphyr reads {t} as something else"
        );
        assert_eq!(plain(t), Some(Value::String(t.to_string())));
        assert_eq!(plain_key(t).as_deref(), Some(t));
    }
    // Controls: what saphyr reads as another type is left to it.
    for t in [
        "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "~", "12", "-1", ".inf", "+.5",
        "0x1f", "",
    ] {
        assert!(!scalars::surely_text(t), "{t}");
    }
    assert_eq!(plain("TRUE"), Some(Value::Bool(true)));
    assert_eq!(plain_key("12").as_deref(), Some("12"));
}
