//! The tests never fill the user's cache: the CLI they start caches in the build's folder.

use std::process::Command;

use trailblaze_e2e::{Fixture, trailblaze_bin};

/// The folder every process of this test binary caches in (set before `main`, in main.rs).
pub const DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/e2e-cache");

/// Files under `dir`, recursively (0 when it does not exist).
fn files_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.path().is_dir() {
            true => files_under(&e.path()),
            false => 1,
        })
        .sum()
}

/// `trailblaze tool` of a tool of the fixture's own (so the transpile cache gets an entry no other
/// test makes), with a fresh `$HOME`; `keep_setting: false` removes the cache setting.
fn probe(keep_setting: bool) -> (std::process::Output, tempfile::TempDir) {
    let f = Fixture::new("probe");
    f.file("trailmap.yaml", "id: probe\ntarget:\n  tools: [privateCacheProbe]\n");
    f.file(
        "tools/privateCacheProbe.ts",
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         /** Returns a marker. */\n\
         export const privateCacheProbe = trailblaze.tool<{}, { n: number }>(async () => ({ n: 7340 }));\n",
    );
    let home = tempfile::tempdir().expect("home");
    let mut cmd = Command::new(trailblaze_bin());
    cmd.arg("--trailmaps")
        .arg(f.root())
        .args(["tool", "--trailmap", "probe", "privateCacheProbe"])
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        // `tool` writes its log under the working folder: the throwaway home, not the source tree.
        .current_dir(home.path());
    if !keep_setting {
        cmd.env_remove("TRAILBLAZE_CACHE_DIR");
    }
    let o = cmd.output().expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("7340"));
    (o, home)
}

/// A CLI started with no cache setting of its own writes its transpiled tools under [`DIR`], and
/// nothing under `$HOME/.cache` (a fresh home, so the count means something).
#[test]
fn the_cli_a_test_starts_caches_in_the_builds_folder_not_the_users() {
    assert_eq!(std::env::var("TRAILBLAZE_CACHE_DIR").as_deref(), Ok(DIR));
    let (_, home) = probe(true);
    assert_eq!(
        files_under(&home.path().join(".cache")),
        0,
        "the CLI wrote into the user's cache"
    );
    assert!(files_under(std::path::Path::new(DIR)) > 0, "nothing cached in {DIR}");
}

/// Control: the same command with the setting removed does write into `$HOME/.cache`, so the
/// empty home above is the private folder's doing.
#[test]
fn control_without_the_setting_the_cli_caches_in_home() {
    let (_, home) = probe(false);
    assert!(
        files_under(&home.path().join(".cache")) > 0,
        "nothing cached in $HOME/.cache"
    );
}
