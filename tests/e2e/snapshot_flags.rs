//! `trailblaze snapshot --bounds|--offscreen|--all|--screenshot FILE|--url URL`: each flag changes
//! the output as its help says, beside the default output as a control; a flag that cannot apply is a
//! usage error naming it (exit 2); and the flags work in a live session too.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use trailblaze_e2e::web_site::{Site, require_chromium};
use trailblaze_e2e::{Fixture, copy_dir, repo_root, trailblaze_bin};

/// `trailblaze --trailmaps <fixture> ARGS`, in the fixture's folder, with no session to join.
fn cmd(f: &Fixture, args: &[&str]) -> Command {
    let mut c = Command::new(trailblaze_bin());
    c.arg("--trailmaps")
        .arg(f.root())
        .args(args)
        .current_dir(f.root().parent().expect("the fixture's folder"))
        .env("TRAILBLAZE_OUT", f.out())
        .env("TRAILBLAZE_CACHE_DIR", f.cache())
        .env("NO_COLOR", "1")
        .env_remove("TRAILBLAZE_SESSION")
        .env_remove("TRAILBLAZE_DEVICE")
        .env_remove("TRAILBLAZE_TRAILMAP")
        .stdin(Stdio::null());
    c
}

fn run(f: &Fixture, args: &[&str]) -> Output {
    cmd(f, args).output().expect("trailblaze runs")
}

/// `trailblaze ARGS`, which must succeed: its stdout.
fn ok(f: &Fixture, args: &[&str]) -> String {
    let o = run(f, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "trailblaze {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `trailblaze ARGS`, which must be a usage error (exit 2) whose message names `flag`.
fn usage_error(f: &Fixture, args: &[&str], flag: &str) {
    let o = run(f, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "trailblaze {args:?}: {err}");
    assert!(err.contains(flag), "the error names {flag}: {err}");
    assert!(
        o.stdout.is_empty(),
        "no snapshot printed: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Whether `line` ends with bounds `{x,y,w,h}`.
fn ends_with_bounds(line: &str) -> bool {
    let Some(open) = line.rfind(" {") else {
        return false;
    };
    let inner = &line[open + 2..];
    let Some(inner) = inner.strip_suffix('}') else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<i32>().is_ok())
}

#[test]
fn snapshot_bounds_end_each_line_with_the_nodes_bounds() {
    let f = Fixture::demo();
    let plain = ok(&f, &["snapshot"]);
    assert!(plain.lines().all(|l| !ends_with_bounds(l)), "{plain}");
    let with = ok(&f, &["snapshot", "--bounds"]);
    assert_eq!(with.lines().count(), plain.lines().count(), "{with}");
    assert!(with.lines().all(ends_with_bounds), "{with}");
    // The same lines, each with its bounds added.
    for (a, b) in plain.lines().zip(with.lines()) {
        assert!(b.starts_with(a), "{b} extends {a}");
    }
    // The email field, laid out on the simulator's 1080-wide screen: inside it, with a size.
    let email = with
        .lines()
        .find(|l| l.contains("hint=\"Email\""))
        .expect("the email field");
    let inner = &email[email.rfind('{').expect("bounds") + 1..email.len() - 1];
    let n: Vec<i32> = inner.split(',').map(|p| p.parse().expect("a number")).collect();
    assert!(n[0] >= 0 && n[2] > 0 && n[0] + n[2] <= 1080 && n[3] > 0, "{email}");
    // --json keeps its shape, the text with the bounds.
    let v: serde_json::Value = serde_json::from_str(&ok(&f, &["snapshot", "--bounds", "--json"])).expect("JSON");
    assert!(v["root"]["children"].is_array(), "{v}");
    assert!(v["text"].as_str().expect("text").lines().all(ends_with_bounds), "{v}");
}

#[test]
fn snapshot_offscreen_adds_the_nodes_below_the_screen_marked() {
    let f = Fixture::new("far");
    f.file(
        "app.yaml",
        "id: com.example.far\nstart: home\nscreens:\n  home:\n    title: Far\n    nodes:\n      - { id: near, class: android.widget.Button, text: Near button }\n      - { id: far, class: android.widget.Button, text: Far button, bounds: [0, 3000, 1080, 3100] }\n",
    );
    let plain = ok(&f, &["snapshot"]);
    assert!(plain.contains("\"Near button\""), "{plain}");
    assert!(
        !plain.contains("Far button"),
        "the default leaves out what is off the screen: {plain}"
    );
    let with = ok(&f, &["snapshot", "--offscreen"]);
    let far = with
        .lines()
        .find(|l| l.contains("\"Far button\""))
        .unwrap_or_else(|| panic!("{with}"));
    assert!(far.ends_with("(offscreen)"), "{far}");
    let near = with.lines().find(|l| l.contains("\"Near button\"")).expect("near");
    assert!(!near.contains("offscreen"), "{near}");
    // With --bounds: the far one's bounds are below the 2400-high screen.
    let both = ok(&f, &["snapshot", "--offscreen", "--bounds"]);
    assert!(both.contains("\"Far button\" (offscreen) {0,3000,1080,100}"), "{both}");
    let v: serde_json::Value = serde_json::from_str(&ok(&f, &["snapshot", "--offscreen", "--json"])).expect("JSON");
    assert!(v["text"].as_str().expect("text").contains("Far button"), "{v}");
}

#[test]
fn snapshot_all_lists_the_layout_containers_too() {
    let f = Fixture::demo();
    let plain = ok(&f, &["snapshot"]);
    let all = ok(&f, &["snapshot", "--all"]);
    assert!(all.lines().count() > plain.lines().count(), "{plain}\n---\n{all}");
    // Every default line is there, and lines the default has not (the root, a container).
    for line in plain.lines() {
        let r = &line.trim_start()[..line.trim_start().find(']').expect("a ref") + 1];
        assert!(all.contains(r), "{r} in\n{all}");
    }
    let first = all.lines().next().expect("a line");
    assert!(
        !first.starts_with(' ') && !plain.lines().any(|l| l.trim_start() == first),
        "{first}"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&f, &["snapshot", "--all", "--json"])).expect("JSON");
    assert_eq!(v["text"].as_str().expect("text").trim_end(), all.trim_end());
}

#[test]
fn snapshot_screenshot_writes_the_picture_in_the_format_its_name_says() {
    let f = Fixture::demo();
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("screen.svg");
    let plain = ok(&f, &["snapshot"]);
    let o = run(&f, &["snapshot", "--screenshot", svg.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), plain, "the same snapshot");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("screen.svg"),
        "the picture's path is told"
    );
    let bytes = std::fs::read(&svg).expect("the picture was written");
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    assert!(head.starts_with("<svg") || head.starts_with("<?xml"), "{head}");
    // --json names it.
    let json_svg = dir.path().join("j.svg");
    let v: serde_json::Value = serde_json::from_str(&ok(
        &f,
        &["snapshot", "--json", "--screenshot", json_svg.to_str().expect("utf-8")],
    ))
    .expect("JSON");
    assert_eq!(v["screenshot"].as_str(), json_svg.to_str());
    assert!(json_svg.is_file());
    // An extension that names no picture format, and one the simulator does not give: refused.
    let gif = dir.path().join("screen.gif");
    usage_error(
        &f,
        &["snapshot", "--screenshot", gif.to_str().expect("utf-8")],
        "--screenshot",
    );
    let png = dir.path().join("screen.png");
    usage_error(
        &f,
        &["snapshot", "--screenshot", png.to_str().expect("utf-8")],
        "--screenshot",
    );
    assert!(!gif.exists() && !png.exists(), "nothing written for a refused name");
}

#[test]
fn snapshot_url_is_refused_off_the_web() {
    let f = Fixture::demo();
    usage_error(&f, &["snapshot", "--url", "https://example.com"], "--url");
}

/// A copy of the repository's `web-demo` trailmap.
fn web_fixture() -> Fixture {
    let f = Fixture::new("web-demo");
    let _ = std::fs::remove_dir_all(f.map_dir());
    copy_dir(&repo_root().join("trailmaps/web-demo"), &f.map_dir());
    f
}

#[test]
fn snapshot_url_opens_the_page_first_and_a_png_screenshot_is_png() {
    require_chromium();
    let site = Site::start();
    let f = web_fixture();
    let blank = ok(&f, &["snapshot", "--device", "web"]);
    assert!(!blank.contains("Fixture home"), "{blank}");
    let dir = tempfile::tempdir().expect("temp dir");
    let png = dir.path().join("page.png");
    let home = site.url("index.html");
    let page = ok(
        &f,
        &[
            "snapshot",
            "--device",
            "web",
            "--url",
            &home,
            "--screenshot",
            png.to_str().expect("utf-8"),
        ],
    );
    assert!(page.contains("heading \"Fixture home\""), "{page}");
    let bytes = std::fs::read(&png).expect("the picture was written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG magic");
    // An SVG name for a browser's PNG: refused, naming the flag.
    let svg = dir.path().join("page.svg");
    usage_error(
        &f,
        &[
            "snapshot",
            "--device",
            "web",
            "--screenshot",
            svg.to_str().expect("utf-8"),
        ],
        "--screenshot",
    );
}

/// A sessions folder of the test's own; dropping it stops every session in it.
struct Sessions<'a> {
    f: &'a Fixture,
    dir: tempfile::TempDir,
}

impl Sessions<'_> {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = cmd(self.f, args);
        c.env("TRAILBLAZE_SESSIONS_DIR", self.dir.path());
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.cmd(args).output().expect("trailblaze runs");
        assert_eq!(
            o.status.code(),
            Some(0),
            "trailblaze {args:?}:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Sessions<'_> {
    fn drop(&mut self) {
        // Best effort, never a panic: this may run while a failed assertion unwinds.
        if let Ok(mut child) = self
            .cmd(&["session", "stop", "--all"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            let until = Instant::now() + Duration::from_secs(30);
            while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn snapshot_flags_travel_into_a_live_session() {
    let f = Fixture::demo();
    let live = Sessions {
        f: &f,
        dir: tempfile::tempdir().expect("temp dir"),
    };
    assert_eq!(live.ok(&["session", "start", "--name", "snap"]).trim(), "snap");
    let plain = live.ok(&["snapshot", "--session", "snap"]);
    assert!(plain.contains("hint=\"Email\""), "{plain}");
    assert!(plain.lines().all(|l| !ends_with_bounds(l)), "{plain}");
    let with = live.ok(&["snapshot", "--session", "snap", "--bounds"]);
    assert!(with.lines().all(ends_with_bounds), "{with}");
    assert_eq!(with.lines().count(), plain.lines().count());
    let all = live.ok(&["snapshot", "--session", "snap", "--all"]);
    assert!(all.lines().count() > plain.lines().count(), "{all}");
    // The picture, written by the session's process at the path given relative to here.
    let shot = live.ok(&["snapshot", "--session", "snap", "--screenshot", "live.svg"]);
    assert_eq!(shot, plain);
    let written = f.root().parent().expect("folder").join("live.svg");
    let bytes = std::fs::read(&written).expect("the session wrote the picture");
    assert!(bytes.starts_with(b"<svg") || bytes.starts_with(b"<?xml"), "SVG");
    // Refused in the session as on a fresh device.
    let o = live
        .cmd(&["snapshot", "--session", "snap", "--screenshot", "live.png"])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--screenshot"));
    let o = live
        .cmd(&["snapshot", "--session", "snap", "--url", "https://example.com"])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--url"));
    assert!(!Path::new(&f.root().parent().expect("folder").join("live.png")).exists());
}
