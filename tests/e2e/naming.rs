//! One way to name a trailmap: every command that acts on one takes `--trailmap ID` and
//! `TRAILBLAZE_TRAILMAP` (`dts` too); and `check --tsc` writes its generated files under the cache
//! folder, never into `trails/`, and leaves none behind for a trail that was deleted.

use std::path::{Path, PathBuf};

use trailblaze_e2e::{Fixture, in_dir, text, trailblaze_bin};

/// The demo trailmap and a second one, `second`, with one trail: a workspace of two.
fn two_maps() -> Fixture {
    let f = Fixture::demo();
    let second = f.root().join("second");
    std::fs::create_dir_all(second.join("trails")).expect("mkdir");
    std::fs::create_dir_all(second.join("tools")).expect("mkdir");
    std::fs::write(second.join("trailmap.yaml"), "id: second\n").expect("write");
    std::fs::copy(f.map_dir().join("app.yaml"), second.join("app.yaml")).expect("copy");
    std::fs::write(
        second.join("trails/launch.trail.yaml"),
        "config:\n  id: second/launch\n  target: second\ntrail:\n  - step: Launch\n    recording:\n      tools:\n        - launchApp: { appId: com.example.demo }\n",
    )
    .expect("write");
    f
}

fn with_env(f: &Fixture, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(trailblaze_bin())
        .current_dir(f.dir.path())
        .args(args)
        .envs(env.iter().copied())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs")
}

#[test]
fn dts_check_and_run_take_the_trailmap_by_flag_and_by_environment() {
    let f = two_maps();
    let dts = |map: &str| f.root().join(map).join("tools/trailblaze-client.d.ts");
    // Control: with two trailmaps and no name, `dts` asks for `--trailmap`…
    let o = in_dir(&f, f.dir.path(), &["dts"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("pass --trailmap ID"), "{}", text(&o).1);
    // …and takes it, as the flag and as the variable.
    let o = in_dir(&f, f.dir.path(), &["dts", "--trailmap", "second"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(dts("second").is_file());
    let o = with_env(&f, &["dts"], &[("TRAILBLAZE_TRAILMAP", "second")]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("second"), "{}", text(&o).0);
    // The argument wins over the variable; two different names on the command line are refused.
    let o = with_env(&f, &["dts", "demo"], &[("TRAILBLAZE_TRAILMAP", "second")]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("demo"), "{}", text(&o).0);
    let o = in_dir(&f, f.dir.path(), &["dts", "demo", "--trailmap", "second"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("two trailmaps named"), "{}", text(&o).1);

    // `check` and `run`: the named trailmap's trails alone (control: without it, both trailmaps').
    let checked = |o: &std::process::Output| {
        let out = text(o).0;
        let n = out
            .split("checked ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok());
        (n, out)
    };
    let (all, err) = checked(&in_dir(&f, f.dir.path(), &["check"]));
    assert_eq!(all, Some(4), "{err}");
    let (one, err) = checked(&in_dir(&f, f.dir.path(), &["check", "--trailmap", "second"]));
    assert_eq!(one, Some(1), "{err}");
    let (one, err) = checked(&with_env(&f, &["check"], &[("TRAILBLAZE_TRAILMAP", "second")]));
    assert_eq!(one, Some(1), "{err}");
    let o = in_dir(&f, f.dir.path(), &["check", "--trailmap", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("no trailmap `nope`"), "{}", text(&o).1);
    let o = in_dir(&f, f.dir.path(), &["run", "--trailmap", "second"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn check_tsc_writes_nothing_into_the_trails_and_leaves_nothing_for_a_deleted_trail() {
    let f = Fixture::demo();
    let before = files_under(&f.map_dir().join("trails"));
    // A trail tsc rejects: the gen files were compiled (the positive control for "nothing written").
    f.file(
        "trails/doomed.trail.yaml",
        "config:\n  id: demo/doomed\n  target: demo\ntrail:\n  - step: Type\n    recording:\n      tools:\n        - inputText: { text: 12 }\n",
    );
    let o = in_dir(&f, f.dir.path(), &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("doomed.trail.yaml:8:") && out.contains("TS"), "{out}");
    let mut after = files_under(&f.map_dir().join("trails"));
    after.retain(|p| !p.ends_with("doomed.trail.yaml"));
    assert_eq!(after, before, "check --tsc wrote into trails/");
    let everywhere = || {
        files_under(f.dir.path())
            .into_iter()
            .filter(|p| {
                let name = p.to_string_lossy();
                name.contains(".gen.ts") || name.contains("trail-gen") || name.contains("trails.d.ts")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(everywhere(), Vec::<PathBuf>::new(), "generated files left behind");
    assert!(
        !f.map_dir().join(".trailblaze").exists(),
        "nothing under the trailmap either"
    );
    // Deleted: the next check has nothing of it anywhere, and passes.
    std::fs::remove_file(f.map_dir().join("trails/doomed.trail.yaml")).expect("rm");
    let o = in_dir(&f, f.dir.path(), &["check", "--tsc"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let mentions: Vec<PathBuf> = files_under(f.dir.path())
        .into_iter()
        .filter(|p| std::fs::read(p).is_ok_and(|b| String::from_utf8_lossy(&b).contains("doomed")))
        .collect();
    assert_eq!(mentions, Vec::<PathBuf>::new(), "a file still names the deleted trail");
}
