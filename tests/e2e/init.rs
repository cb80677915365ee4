//! `trailblaze init`: into an empty folder, a workspace that passes `check` (both gates) and `run` at
//! once, for each `--device` it offers (`sim`, and `web` in the real headless Chromium); a second
//! trailmap in the same workspace; and it refuses to overwrite anything, naming the file.

use std::path::Path;
use std::process::Output;

use trailblaze_e2e::{text, trailblaze_bin};

fn tb(cwd: &Path, args: &[&str]) -> Output {
    std::process::Command::new(trailblaze_bin())
        .current_dir(cwd)
        .args(args)
        .env("TRAILBLAZE_CACHE_DIR", cwd.join(".cache"))
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .env_remove("TRAILBLAZE_TRAILMAP")
        .env_remove("TRAILBLAZE_OUT")
        .env_remove("TRAILBLAZE_DEVICE")
        .env_remove("TRAILBLAZE_CONFIG_DIR")
        .env("NO_COLOR", "1")
        .output()
        .expect("trailblaze runs")
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    out
}

#[test]
fn init_into_an_empty_folder_checks_and_runs_green_on_each_device() {
    for device in ["sim", "web"] {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = ok(&tb(tmp.path(), &["init", "ws", "--id", "shop", "--device", device]));
        let ws = tmp.path().join("ws");
        // It printed what to do next, and wrote the types and the ignore file.
        assert!(out.contains("cd ws") && out.contains("trailblaze run shop"), "{out}");
        assert!(
            ws.join("trailmaps/shop/tools/trailblaze-client.d.ts").is_file(),
            "{out}"
        );
        let ignore = std::fs::read_to_string(ws.join(".gitignore")).expect(".gitignore");
        assert!(ignore.lines().any(|l| l == "trailblaze-out/"), "{ignore}");
        let (out, err) = text(&tb(&ws, &["check"]));
        assert!(
            out.contains("checked 1 trail(s)") && out.contains(": 0 finding(s)"),
            "{device}: {out}{err}"
        );
        let o = tb(&ws, &["check", "--tsc"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{device}: {out}{err}");
        assert!(out.contains("1 tool script(s)"), "tsc compiled the tool: {out}{err}");
        let out = ok(&tb(&ws, &["run"]));
        assert!(out.contains("1 passed, 0 failed"), "{device}: {out}");
        // The scripted tool ran as a step of the trail (not skipped).
        assert!(out.contains("✓ step 2"), "{device}: {out}");
    }
}

#[test]
fn init_adds_a_second_trailmap_and_refuses_to_overwrite_anything() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ws = tmp.path();
    std::fs::write(ws.join(".gitignore"), "mine\n").expect("write");
    ok(&tb(ws, &["init", "--id", "first"]));
    assert_eq!(
        std::fs::read_to_string(ws.join(".gitignore")).expect("read"),
        "mine\n",
        "an existing .gitignore is kept as it was"
    );
    let trail = ws.join("trailmaps/first/trails/add-item.trail.yaml");
    let original = std::fs::read_to_string(&trail).expect("read");
    std::fs::write(&trail, "# mine\n").expect("write");
    // The same id again: refused, naming the folder, and nothing touched.
    let o = tb(ws, &["init", "--id", "first"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("trailmaps/first already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&trail).expect("read"), "# mine\n");
    // A file in the way of a new trailmap's: named, and nothing of the trailmap written.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join(".gitignore"), "x\n").expect("write");
    std::fs::create_dir_all(other.join("trailmaps")).expect("mkdir");
    let o = tb(&other, &["init", "--id", "ok", "--device", "web"]);
    ok(&o);
    std::fs::remove_dir_all(other.join("trailmaps/ok/tools")).expect("rm");
    std::fs::remove_dir_all(other.join("trailmaps/ok/trails")).expect("rm");
    std::fs::remove_file(other.join("trailmaps/ok/trailmap.yaml")).expect("rm");
    // Only `site/index.html` is left: init for `ok` names the folder it would fill.
    let o = tb(&other, &["init", "--id", "ok", "--device", "web"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("trailmaps/ok already exists"), "{}", text(&o).1);
    assert!(!other.join("trailmaps/ok/trailmap.yaml").exists(), "nothing written");
    // A bad id is refused before anything is written.
    let o = tb(ws, &["init", "--id", "no spaces"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("is not a trailmap id"), "{}", text(&o).1);
    // Control: a second trailmap beside the first; `check` sees both trails.
    ok(&tb(ws, &["init", "--id", "second", "--device", "web"]));
    std::fs::write(&trail, original).expect("write");
    let o = tb(ws, &["check"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("checked 2 trail(s)"), "{out}{err}");
}
