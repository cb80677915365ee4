//! `trailblaze report`: a run's report.html rebuilt and its traces' trace.js written, a session
//! folder's report made from its trace, `--open` through the opener `TRAILBLAZE_OPENER` names (no
//! browser starts), the GIF and storyboard exports within their caps, `--webp` refused, and clear
//! errors.

use std::path::Path;
use std::process::{Command, Output};

use trailblaze_e2e::{trace_fixture, trailblaze_bin};

fn report(args: &[&std::ffi::OsStr], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut cmd = Command::new(trailblaze_bin());
    cmd.arg("report")
        .args(args)
        .env_remove("TRAILBLAZE_OPENER")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("trailblaze runs")
}

fn os(p: &Path) -> &std::ffi::OsStr {
    p.as_os_str()
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_deleted_report_html_is_rebuilt_with_each_trace_js_and_open_calls_the_opener() {
    let run = tempfile::tempdir().expect("temp dir");
    trace_fixture::write_run(run.path(), 1);
    let html = run.path().join("report.html");
    let o = report(&[os(run.path())], &[]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(html.is_file() && run.path().join("sign-in/trace.js").is_file());
    std::fs::remove_file(&html).expect("rm");
    // The default folder: $TRAILBLAZE_OUT/latest; --open hands the page to the opener.
    let out = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(run.path(), out.path().join("latest")).expect("symlink");
    let said = out.path().join("opened.txt");
    let opener = out.path().join("opener.sh");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", said.display()),
    )
    .expect("opener");
    Command::new("chmod").arg("+x").arg(&opener).status().expect("chmod");
    let o = report(
        &[std::ffi::OsStr::new("--open")],
        &[("TRAILBLAZE_OUT", os(out.path())), ("TRAILBLAZE_OPENER", os(&opener))],
    );
    assert!(o.status.success(), "{}", both(&o));
    assert!(html.is_file(), "report.html is back");
    let opened = std::fs::read_to_string(&said).expect("the opener ran");
    assert!(opened.ends_with("/report.html"), "{opened}");
    assert_eq!(Path::new(&opened).canonicalize().ok(), html.canonicalize().ok());
    // An opener that cannot start is an error that names it.
    let o = report(
        &[os(run.path()), std::ffi::OsStr::new("--open")],
        &[("TRAILBLAZE_OPENER", std::ffi::OsStr::new("/nonexistent/opener"))],
    );
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        both(&o).contains("/nonexistent/opener could not be started"),
        "{}",
        both(&o)
    );
}

#[test]
fn a_session_folder_gets_a_report_of_its_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    trace_fixture::write_session(dir.path(), &trace_fixture::failed_trace("mcp-1"));
    let o = report(&[os(dir.path())], &[]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(both(&o).contains("from the session's trace"), "{}", both(&o));
    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("report.html");
    assert!(
        html.contains("class=\"open-trace\" data-dir=\"\""),
        "its one trail opens its trace"
    );
    assert!(html.contains("Sign in as jane") && html.contains("signIn"));
    let js = std::fs::read_to_string(dir.path().join("trace.js")).expect("trace.js");
    assert!(js.starts_with("trailblazeTrace(\""));
}

#[test]
fn errors_name_the_folder_and_a_bad_report_json_its_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = report(&[os(dir.path())], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(both(&o).contains("neither a run folder"), "{}", both(&o));
    let o = report(&[os(&dir.path().join("missing"))], &[]);
    assert!(both(&o).contains("no such folder"), "{}", both(&o));
    std::fs::write(dir.path().join("report.json"), "{\n  \"trails\": [\n    oops\n  ]\n}\n").expect("write");
    let o = report(&[os(dir.path())], &[]);
    assert_eq!(o.status.code(), Some(2));
    let want = format!("{}:3:5", dir.path().join("report.json").display());
    assert!(both(&o).contains(&want), "{}", both(&o));
}

#[test]
fn a_trails_steps_export_as_a_gif_and_a_storyboard_png_within_their_caps() {
    let run = tempfile::tempdir().expect("temp dir");
    trace_fixture::write_run(run.path(), 0);
    let out = tempfile::tempdir().expect("temp dir");
    let (gif, png) = (out.path().join("pr/sign-in.gif"), out.path().join("sign-in.png"));
    let trail = run.path().join("sign-in");
    let flags = [
        std::ffi::OsStr::new("--gif"),
        os(&gif),
        std::ffi::OsStr::new("--storyboard"),
        os(&png),
    ];
    let o = report(&[flags[0], flags[1], flags[2], flags[3], os(&trail)], &[]);
    assert!(o.status.success(), "{}", both(&o));
    let bytes = std::fs::read(&gif).expect("the GIF");
    assert!(bytes.len() <= 16 << 20);
    let mut d = gif::DecodeOptions::new().read_info(bytes.as_slice()).expect("a GIF");
    assert_eq!((d.width(), d.height()), (270, 600));
    let mut frames = 0;
    while d.read_next_frame().expect("a frame").is_some() {
        frames += 1;
    }
    assert_eq!(frames, 3, "a frame per step with a screen");
    let bytes = std::fs::read(&png).expect("the PNG");
    assert!(bytes.len() <= 16 << 20);
    let info = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG")
        .info()
        .clone();
    // Three steps in one row, each cell 240 + 12 wide.
    assert_eq!(info.width, 3 * 252 + 12);
    assert!(info.height <= 8192);
    // Its trace.json names the same trail.
    let o = report(&[flags[0], flags[1], os(&trail.join("trace.json"))], &[]);
    assert!(o.status.success(), "{}", both(&o));
    // --webp is refused, saying why; a folder without a trace says so.
    let o = report(
        &[
            std::ffi::OsStr::new("--webp"),
            os(&out.path().join("x.webp")),
            os(&trail),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(both(&o).contains("animated WebP"), "{}", both(&o));
    let o = report(&[flags[0], flags[1], os(out.path())], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(both(&o).contains("no trace.json there"), "{}", both(&o));
}

#[test]
fn with_no_folder_named_it_takes_the_workspaces_latest_run_from_a_subfolder() {
    let ws = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(ws.path().join("trailmaps/demo")).expect("trailmaps");
    std::fs::write(ws.path().join("trailmaps/demo/trailmap.yaml"), "id: demo\n").expect("trailmap");
    trace_fixture::write_run(&ws.path().join("trailblaze-out/latest"), 0);
    let sub = ws.path().join("trailmaps/demo");
    let o = Command::new(trailblaze_bin())
        .arg("report")
        .current_dir(&sub)
        .env_remove("TRAILBLAZE_OUT")
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .output()
        .expect("trailblaze runs");
    assert!(o.status.success(), "{}", both(&o));
    assert!(ws.path().join("trailblaze-out/latest/report.html").is_file());
    // Control: outside any workspace, with no run here, it says which folder it looked for.
    let bare = tempfile::tempdir().expect("temp dir");
    let o = Command::new(trailblaze_bin())
        .arg("report")
        .current_dir(bare.path())
        .env_remove("TRAILBLAZE_OUT")
        .env_remove("TRAILBLAZE_TRAILMAPS")
        .output()
        .expect("trailblaze runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        both(&o).contains("trailblaze-out/latest: no such folder"),
        "{}",
        both(&o)
    );
}
