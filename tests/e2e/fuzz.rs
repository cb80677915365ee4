//! Mutation fuzzing of the readers a hostile file reaches first: the trail reader (YAML and the
//! parse gate), the transpile guard (before swc) and the trailmap loader (manifest, app, composed
//! tools, host functions, up to the catalog and its surface), and what a device sends (`device`).
//! Whatever comes in, the answer is a value or an
//! error, never a panic, an abort or a hang. CI runs a smoke-sized pass; `tests/fuzz.sh` runs it for
//! as long as asked (`TRAILBLAZE_FUZZ_SECONDS`).

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use trailblaze_e2e::Rng;

mod device;

/// How long to fuzz each target: `TRAILBLAZE_FUZZ_SECONDS`, or a smoke-sized pass.
fn budget() -> (Option<Instant>, usize) {
    match std::env::var("TRAILBLAZE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(secs) => (Some(Instant::now() + Duration::from_secs(secs)), usize::MAX),
        None => (None, 1_500),
    }
}

/// One mutation of `input`: insert tokens, delete or repeat a slice (repetition makes depth and
/// length), splice another seed in.
fn mutate(rng: &mut Rng, input: &str, tokens: &[&str], seeds: &[&str]) -> String {
    let mut s: Vec<char> = input.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(s.len() + 1);
        match rng.below(5) {
            0 | 1 => {
                let t = tokens[rng.below(tokens.len())];
                s.splice(at..at, t.chars());
            }
            2 if !s.is_empty() => {
                let end = (at + rng.below(16)).min(s.len());
                s.drain(at.min(end)..end);
            }
            3 => {
                let end = (at + 1 + rng.below(8)).min(s.len());
                let slice: Vec<char> = s[at.min(end)..end].to_vec();
                let times = [2, 10, 100, 2_000][rng.below(4)];
                let repeated: Vec<char> = slice.iter().copied().cycle().take(slice.len() * times).collect();
                s.splice(at..at, repeated);
            }
            _ => {
                let other: Vec<char> = seeds[rng.below(seeds.len())].chars().collect();
                let from = rng.below(other.len());
                let end = (from + rng.below(64)).min(other.len());
                s.splice(at..at, other[from..end].iter().copied());
            }
        }
        // Keep inputs near the size of real files (the readers cap files far above this anyway).
        s.truncate(400_000);
    }
    s.into_iter().collect()
}

fn seeds_in(dir: &Path, suffix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("seed folder").flatten() {
        if e.file_name().to_string_lossy().ends_with(suffix)
            && let Ok(t) = std::fs::read_to_string(e.path())
        {
            out.push(t);
        }
    }
    assert!(!out.is_empty(), "seeds in {}", dir.display());
    out
}

/// How long one input may take before the fuzzer calls it a hang: far above any input's real cost
/// (milliseconds) so that a loaded machine never trips it, far below CI's own timeout.
const HANG: Duration = Duration::from_secs(60);

/// A thread that ends the test binary loudly, with the input saved, when no input has been answered
/// for `HANG`: a hung target never returns, so the test thread cannot fail by itself.
fn watchdog(name: &'static str) -> mpsc::Sender<Option<String>> {
    let (tx, rx) = mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        let mut current = String::new();
        loop {
            match rx.recv_timeout(HANG) {
                Ok(Some(input)) => current = input,
                Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let at = std::env::temp_dir().join(format!("trailblaze-fuzz-hang-{}.txt", name.replace(' ', "-")));
                    let _ = std::fs::write(&at, &current);
                    eprintln!(
                        "fuzz {name}: no answer within {HANG:?}; the input is in {}",
                        at.display()
                    );
                    std::process::exit(101);
                }
            }
        }
    });
    tx
}

/// Feeds mutants of `seeds` to `target` (true: accepted, false: refused with an error). Every seed
/// must be accepted (the control: the target is reached and can say yes), the mutants must include
/// refusals (the mutations reach its errors), and no input may hang.
fn fuzz(name: &'static str, seed: u64, seeds: &[String], tokens: &[&str], mut target: impl FnMut(&str) -> bool) {
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let beat = watchdog(name);
    for (i, s) in seeds.iter().enumerate() {
        let _ = beat.send(Some(s.to_string()));
        assert!(
            target(s),
            "fuzz {name}: seed {i} is refused, so the mutants test nothing"
        );
    }
    let (until, rounds) = budget();
    let started = Instant::now();
    let mut rng = Rng(seed);
    let mut corpus: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    let (mut n, mut refused) = (0usize, 0usize);
    while n < rounds && until.is_none_or(|u| Instant::now() < u) {
        let base = corpus[rng.below(corpus.len())].clone();
        let input = mutate(&mut rng, &base, tokens, &seeds);
        let _ = beat.send(Some(input.clone()));
        if !target(&input) {
            refused += 1;
        }
        // Keep some mutants as bases: mutations compound into deeper shapes.
        if corpus.len() < 256 && rng.below(8) == 0 {
            corpus.push(input);
        }
        n += 1;
    }
    let _ = beat.send(None);
    eprintln!(
        "fuzz {name}: {n} inputs ({refused} refused) in {:.1} s, corpus {}",
        started.elapsed().as_secs_f64(),
        corpus.len()
    );
    assert!(
        refused > 0 && refused < n,
        "fuzz {name}: {refused} of {n} mutants refused: the mutations miss the target's errors or never pass"
    );
}

#[test]
fn the_trail_reader_answers_every_input() {
    let root = trailblaze_e2e::repo_root();
    let seeds = seeds_in(&root.join("trailmaps/demo/trails"), ".trail.yaml");
    let tokens = [
        "- ",
        "- - - ",
        ": ",
        "[",
        "]",
        "{",
        "}",
        "&a ",
        "*a",
        "!!str ",
        "|\n",
        ">\n",
        "'",
        "\"",
        "\n",
        "\n  ",
        "#",
        "? ",
        "---\n",
        "recording:\n",
        "tools:\n",
        "config:\n",
        "step: x\n",
        "1e999",
        "~",
        "\t",
        "\u{0}",
        "é",
    ];
    fuzz("trail reader", 0xA5A5_1234_5678_9ABC, &seeds, &tokens, |text| {
        trailblaze::Trail::parse(text, Path::new("fuzz.trail.yaml")).is_ok()
    });
}

#[test]
fn the_transpile_guard_answers_every_input() {
    let root = trailblaze_e2e::repo_root();
    let seeds = seeds_in(&root.join("trailmaps/demo/tools"), ".ts");
    let tokens = [
        "(", ")", "[", "]", "{", "}", "()", ".a", " + ", "=>", "`${", "}`", "/*", "*/", "//", "\n", "'", "\"", "/re/",
        "?", ":", "<T>", "async ", "await ", "new ", "!", "-", "++", ";", ",", "\\", "\u{2028}",
    ];
    fuzz("transpile guard", 0x1357_9BDF_2468_ACE0, &seeds, &tokens, |src| {
        trailblaze::scripting::transpile_uncached("fuzz.ts", src).is_ok()
    });
}

#[test]
fn the_trailmap_loader_answers_every_input() {
    // The demo's YAML files in a trailmap of their own (no `.ts`: the transpiler has its own target);
    // each input replaces one of them, the project opens, and the catalog and surface are built.
    let root = trailblaze_e2e::repo_root().join("trailmaps/demo");
    let files = [
        "trailmap.yaml",
        "app.yaml",
        "tools/replaceEmail.tool.yaml",
        "host/env.host.yaml",
        "host/lookupCredential.host.yaml",
    ];
    let originals: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).expect("seed"))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let map = dir.path().join("trailmaps/demo");
    let write_all = || {
        for (f, text) in files.iter().zip(&originals) {
            let at = map.join(f);
            std::fs::create_dir_all(at.parent().expect("folder")).expect("folders");
            std::fs::write(at, text).expect("write");
        }
    };
    write_all();
    let opts = || trailblaze::ProjectOptions {
        cache_dir: Some(dir.path().join("cache")),
        ..trailblaze::ProjectOptions::default()
    };
    // Positive control: the untouched files load, with the composed tool in the catalog.
    let project = trailblaze::open(&dir.path().join("trailmaps"), opts()).expect("the seeds load");
    let catalog = project.catalog("demo").expect("the seeds' catalog");
    assert!(catalog.tool("replaceEmail").is_some());
    let slot = std::cell::Cell::new(0usize);
    let tokens = [
        "- ",
        ": ",
        "[",
        "]",
        "{",
        "}",
        "'",
        "\"",
        "\n",
        "\n  ",
        "#",
        "~",
        "é",
        "\u{0}",
        "1e999",
        "-1",
        "tools:\n",
        "args:\n",
        "type: string\n",
        "type: object\n",
        "required: true\n",
        "{{args.x}}",
        "{{secret:X}}",
        "$ref: '#/x'\n",
        "enum: []\n",
        "items:\n",
        "properties:\n",
        "&a ",
        "*a",
    ];
    fuzz("trailmap loader", 0x0DDB_A11C_0FFE_E123, &originals, &tokens, |text| {
        let n = slot.get();
        slot.set(n + 1);
        let f = files[n % files.len()];
        std::fs::write(map.join(f), text).expect("write the input");
        let accepted = match trailblaze::open(&dir.path().join("trailmaps"), opts()) {
            Ok(project) => project.catalog("demo").is_ok() && trailblaze::gates::surface_of(&project, "demo").is_ok(),
            Err(_) => false,
        };
        std::fs::write(map.join(f), &originals[n % files.len()]).expect("restore the seed");
        accepted
    });
}
