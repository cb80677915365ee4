use std::path::Path;

use super::*;
use crate::trail::Trail;
use crate::trail::parse::parse_walked;
use crate::yaml::corpus::{Rng, mutate, project_yaml, repo};

fn file() -> &'static Path {
    Path::new("t.trail.yaml")
}

/// Whether the quick path took `text`; when it did, the walk must read the same trail from it
/// (config, trailhead, steps: every text, call, argument, position and path).
fn agrees(text: &str) -> bool {
    let Some((config, trailhead, steps)) = read(text, file()) else {
        return false;
    };
    match parse_walked(text.to_string(), file()) {
        Ok(t) => assert!(
            (&config, &trailhead, &steps) == (&t.config, &t.trailhead, &t.steps),
            "the paths differ on:\n{text}\nquick: {config:?}\n{trailhead:?}\n{steps:#?}\nwalk: {t:#?}"
        ),
        Err(e) => panic!("the quick path took what the walk refuses ({}):\n{text}", e[0]),
    }
    true
}

const HEAD: &str = "config:\n  id: demo/x\n  target: demo\n";

/// A trail of `HEAD` and these steps.
fn with_steps(steps: &str) -> String {
    format!("{HEAD}trail:\n{steps}")
}

#[test]
fn the_projects_trails_are_taken_and_read_as_the_walk_reads_them() {
    let trails: Vec<_> = project_yaml()
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().ends_with("trail.yaml"))
        .collect();
    assert!(trails.len() >= 10, "{} trails found", trails.len());
    let mut taken_n = 0;
    for (path, text) in &trails {
        let taken = agrees(text);
        taken_n += usize::from(taken);
        // The control: what users write most is taken.
        if path.starts_with(repo().join("trailmaps")) {
            assert!(taken, "{} left the quick path", path.display());
        }
    }
    eprintln!("{taken_n} of {} trails read quickly", trails.len());
}

#[test]
fn the_common_forms_are_taken() {
    let taken = [
        // The items at the key's column, a verify, retries, recordable, comments and blank lines.
        "- step: One\n  recording:\n    tools:\n      - tap: { x: 1, y: 2 }\n\n# between\n- verify: 'it''s there'\n  maxRetries: 2\n- step: Agent only\n  recordable: false\n",
        // Arguments as a block, a call with none, a deliberate no-op, a sequence at its key's column.
        "  - step: Two\n    recording:\n      tools:\n      - inputText:\n          text: hi   # a comment\n          nodeSelector: { androidAccessibility: { hintTextRegex: Email } }\n      - back: {}\n      android: []\n      ios: {}\n",
        // Keys in another order, a number and a bool as step text, a block scalar, unicode.
        "  - recording:\n      web:\n        - click: { ref: 'é1' }\n    step: 12\n  - step: true\n  - step: |\n      Two\n      lines\n  - step: café ☕ { x }\n",
    ];
    for steps in taken {
        let text = with_steps(steps);
        assert!(agrees(&text), "left to the walk:\n{text}");
    }
    // A trailhead and a file with no config (the part before `trail:` is the walk's, taken with it).
    let head =
        "trailhead:\n  step: Start\n  recording:\n    tools:\n      - launchApp: { appId: a.b }\ntrail:\n  - step: x\n";
    assert!(agrees(head));
    assert!(agrees("trail:\n- step: only\n"));
    // Device keys declared in the config key recordings.
    let devices = "config:\n  devices:\n    pixel: android\ntrail:\n  - step: x\n    recording:\n      pixel:\n        - tap: { x: 1 }\n";
    assert!(agrees(devices));
    // Device classifiers key recordings too (the walk's rule: a near miss of a known key does not).
    for key in ["android-phone", "desktop", "ios-iphone"] {
        let text = with_steps(&format!(
            "  - step: x\n    recording:\n      {key}:\n        - tap: {{ x: 1 }}\n"
        ));
        assert!(agrees(&text), "{key}");
    }
}

#[test]
fn what_the_quick_path_does_not_know_is_left_to_the_walk() {
    let left = [
        // The walk reports these.
        "  - stp: typo\n",
        "  - step: a\n    verify: b\n",
        "  - step: a\n    step: b\n",
        "  - recording:\n      tools:\n        - tap: { x: 1 }\n",
        "  - step: a\n    recordable: false\n    recording:\n      tools:\n        - tap: { x: 1 }\n",
        "  - step: a\n    maxRetries: -1\n",
        "  - step: a\n    recordable: yes please\n",
        "  - step: ~\n",
        "  - step:\n",
        "  - step: a\n    recording:\n      tool:\n        - tap: {}\n",
        "  - step: a\n    recording:\n      tools:\n        - tap\n",
        "  - step: a\n    recording:\n      tools:\n        - tap: 3\n",
        "  - step: a\n    recording:\n      tools:\n        - tap: { x: 1 }\n          y: 2\n",
        "  - step: a\n    recording:\n      tools:\n        - tap: { x: 1 }\n      tools:\n        - tap: { x: 1 }\n",
        "  - just text\n",
        // Forms the walk reads and this path leaves to it.
        "  - step: a\n    recording: { tools: [ { tap: { x: 1 } } ] }\n",
        "  - step: a\n    recording:\n      tools: { tap: { x: 1 } }\n",
        "  - step: a\n    recording:\n      tools: [ { tap: {} } ]\n",
        "  - step: a\n    recording:\n      andriod:\n        - tap: {}\n",
        "  - step: a\n    recording:\n      tools:\n        - web.tap: {}\n",
        "  - step: a\n    recording:\n      tools:\n        - tap:\n",
        "  - step: &a x\n",
        "  - step: a\n\tb\n",
    ];
    for steps in left {
        let text = with_steps(steps);
        assert!(read(&text, file()).is_none(), "taken:\n{text}");
    }
    // `trail` not last, twice, in the older list form, or with a config the walk reports.
    for text in [
        "trail:\n  - step: a\nconfig:\n  id: x\n",
        "trail: []\ntrail:\n  - step: a\n",
        "- config:\n    id: x\n- prompts:\n  - step: a\n",
        "config:\n  idd: x\ntrail:\n  - step: a\n",
        "config:\n  id: x\ntrail: # nothing below\n",
        "config:\n  title: 'open\ntrail:\n  - step: a\n",
    ] {
        assert!(read(text, file()).is_none(), "taken:\n{text}");
    }
    // The control: the same shapes, written as the quick path reads them, are taken.
    assert!(agrees(&with_steps(
        "  - step: a\n    maxRetries: 1\n    recordable: true\n"
    )));
    assert!(agrees("config:\n  id: x\ntrail: # the steps\n  - step: a\n"));
}

/// A trail of `n` steps of a few shapes (a broken one after step `broken`: a step the walk reports).
fn long_trail(n: usize, broken: Option<usize>) -> String {
    let mut t = String::from(HEAD);
    t.push_str("trail:\n");
    for i in 0..n {
        t.push_str(&match i % 3 {
            0 => format!("  - step: Step {i}\n    recording:\n      tools:\n        - tap: {{ x: {i}, y: 2 }}\n"),
            1 => format!("  - verify: Check {i}\n    maxRetries: 1\n"),
            _ => format!(
                "  - step: Type {i}\n    recording:\n      android:\n        - inputText:\n            text: t{i}\n"
            ),
        });
        if broken == Some(i) {
            t.push_str("  - stepp: a typo\n");
        }
    }
    t
}

#[test]
fn a_long_trail_is_read_in_halves_and_a_step_the_walk_reports_leaves_it_all_to_the_walk() {
    let text = long_trail(3 * SPLIT_STEPS, None);
    assert!(agrees(&text));
    let (_, _, steps) = read(&text, file()).expect("taken");
    assert_eq!(steps.len(), 3 * SPLIT_STEPS);
    assert!(
        steps
            .iter()
            .enumerate()
            .all(|(i, s)| s.number == i + 1 && s.path == format!("trail[{i}]"))
    );
    // Control: a step the walk reports, in either half, and the whole file is the walk's.
    for broken in [5, 3 * SPLIT_STEPS - 5] {
        let text = long_trail(3 * SPLIT_STEPS, Some(broken));
        assert!(read(&text, file()).is_none(), "broken at {broken}");
        let errors = parse_walked(text, file()).expect_err("the walk reports it");
        assert!(errors[0].message.contains("stepp"), "{}", errors[0]);
    }
}

#[test]
fn mutated_trails_are_read_alike_or_left_to_the_walk() {
    // `TRAILBLAZE_YAML_MUTANTS=<n>` for a longer run by hand.
    let per_file = std::env::var("TRAILBLAZE_YAML_MUTANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut texts: Vec<String> = project_yaml()
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().ends_with("trail.yaml"))
        .map(|(_, t)| t)
        .collect();
    texts.push(long_trail(40, None));
    let (mut taken, mut total) = (0usize, 0usize);
    for text in &texts {
        // Half the edits where the steps are, half anywhere: the part before `trail:` is read by
        // the walk on its own, which must read it as it reads it within the whole file.
        let steps_from = text.find("\ntrail:").unwrap_or(0);
        for k in 0..per_file {
            let from = if k % 2 == 0 { steps_from } else { 0 };
            let t = mutate(&mut rng, text, from..usize::MAX);
            total += 1;
            taken += usize::from(agrees(&t));
        }
    }
    eprintln!("{taken} of {total} mutants read quickly");
    assert!(
        taken * 10 > total && taken * 10 < total * 9,
        "{taken} of {total} mutants read quickly"
    );
}

#[test]
fn the_comparison_sees_a_moved_position_and_a_changed_path() {
    // The companion of the tests above: the models they compare differ where one detail does.
    let text = with_steps("  - step: a\n    recording:\n      tools:\n        - tap: { x: 1 }\n");
    let (_, _, steps) = read(&text, file()).expect("taken");
    let walked = parse_walked(text.clone(), file()).expect("parses");
    assert_eq!(steps, walked.steps);
    let mut moved = steps.clone();
    moved[0].pos.col += 1;
    assert_ne!(moved, walked.steps);
    let mut renamed = steps.clone();
    if let Some(rec) = renamed[0].recording.as_mut() {
        rec.entries[0].1[0].path.push('x');
    }
    assert_ne!(renamed, walked.steps);
}

#[test]
fn a_trail_read_quickly_positions_its_findings_from_the_text() {
    let text = with_steps(
        "  - step: a\n    recording:\n      tools:\n        - tap: { x: 1 }\n        - inputText:\n            text: hi\n",
    );
    let trail = Trail::parse(&text, file()).expect("parses");
    assert!(trail.doc.get().is_none(), "the document is made when asked for");
    for (_, _, call) in trail.calls() {
        assert_eq!(trail.doc().position(&call.path), call.pos, "{}", call.path);
    }
    let e = trail.error_in_call(
        &trail.steps[0].recording.as_ref().expect("rec").entries[0].1[1],
        "text",
        "bad",
    );
    assert_eq!((e.pos.line, e.pos.col), (10, 13));
    assert_eq!(e.source_line, "            text: hi");
    // Control: the walk's trail has its document from the start.
    let walked = parse_walked(text, file()).expect("parses");
    assert!(walked.doc.get().is_some());
}
