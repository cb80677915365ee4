//! Every command the docs show is run, so the docs and the program cannot drift apart. Each shell
//! block (```` ```sh ````, `bash`, `shell`, `console`) of `docs/*.md` and `README.md` holding a
//! `trailblaze ...` or `cargo run -- ...` line is run by bash and must exit 0; a ```` ```text output ````
//! block right after it lists lines its output must hold, whole (`…` stands for anything). A block
//! that cannot run here says why on a line before its fence, `<!-- not run: needs a phone -->`, and
//! `<!-- env: NAME=value ... -->` there sets variables for it (what a CI job's settings would).
//!
//! Each page gets a workspace of its own: a copy of the repository's `trailmaps/` (an empty folder
//! for a page that says `<!-- docs test: an empty folder -->`), with the page's `file=` blocks
//! written into it and TypeScript installed as a project's would be (`node_modules`). Each block runs
//! at the workspace's root in a fresh shell, with the binary under test as `trailblaze` on `PATH`
//! (`cargo run --` runs it too; any other `cargo` refuses), a private cache folder, home and
//! sessions folder (a page's live sessions are seen by its own blocks only, and any it leaves
//! running are stopped when it ends), and npm offline.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::docs::{Block, blocks};
use trailblaze_e2e::{copy_dir, repo_root, trailblaze_bin};

/// A shell block with a command in it, and what its page says of it.
#[derive(Debug, Clone, Default)]
struct Run {
    /// `docs/x.md:LINE`, the fence's line.
    at: String,
    script: String,
    not_run: Option<String>,
    env: Vec<(String, String)>,
    /// The lines of the `text output` block after it.
    output: Vec<String>,
}

/// A page, read for what the test does with it.
#[derive(Debug, Default)]
struct Page {
    empty: bool,
    files: Vec<(String, String)>,
    runs: Vec<Run>,
}

const SHELLS: [&str; 4] = ["sh", "bash", "shell", "console"];
const EMPTY_FOLDER: &str = "<!-- docs test: an empty folder -->";

/// A line that runs the binary: `trailblaze ...` or `cargo run ... -- ...` (a `$ ` prompt allowed).
fn is_command(line: &str) -> bool {
    let l = line.trim_start();
    let l = l.strip_prefix("$ ").unwrap_or(l);
    l == "trailblaze" || l.starts_with("trailblaze ") || l.starts_with("cargo run")
}

/// The `<!-- ... -->` lines right above line `fence` (1-based), blank lines skipped.
fn markers(lines: &[&str], fence: usize) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines[..fence.saturating_sub(1)].iter().rev() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        match t.strip_prefix("<!--").and_then(|r| r.strip_suffix("-->")) {
            Some(inner) => out.push(inner.trim().to_string()),
            None => break,
        }
    }
    out
}

/// Reads `md` (page `doc`): its runs and files, or what is wrong with how it marks them.
fn read_page(doc: &str, md: &str) -> Result<Page, Vec<String>> {
    let lines: Vec<&str> = md.lines().collect();
    let all = blocks(doc, md);
    let mut page = Page {
        empty: md.contains(EMPTY_FOLDER),
        ..Page::default()
    };
    let mut wrong = Vec::new();
    for (i, b) in all.iter().enumerate() {
        if let Some(file) = b.file() {
            page.files.push((file.to_string(), b.text.clone()));
        }
        let lang = b.info.first().map(String::as_str).unwrap_or("");
        let commands = b.text.lines().any(is_command);
        if !SHELLS.contains(&lang) {
            if commands && matches!(lang, "" | "text") {
                wrong.push(format!(
                    "{}: a command in a block that is not ```sh: the test cannot tell it runs",
                    b.at()
                ));
            }
            continue;
        }
        if !commands {
            continue;
        }
        let mut run = Run {
            at: b.at(),
            script: b.text.clone(),
            ..Run::default()
        };
        for m in markers(&lines, b.line) {
            if let Some(reason) = m.strip_prefix("not run:") {
                if reason.trim().is_empty() {
                    wrong.push(format!("{}: `not run` needs a reason", b.at()));
                }
                run.not_run = Some(reason.trim().to_string());
            } else if let Some(vars) = m.strip_prefix("env:") {
                // `NAME=value ... (why)`: the words before a parenthesis.
                for kv in vars.split('(').next().unwrap_or_default().split_whitespace() {
                    match kv.split_once('=') {
                        Some((k, v)) => run.env.push((k.to_string(), v.to_string())),
                        None => wrong.push(format!("{}: `env:` takes NAME=value, not `{kv}`", b.at())),
                    }
                }
            }
        }
        if let Some(next) = all.get(i + 1).filter(|n: &&Block| n.is("text", "output")) {
            run.output = next
                .text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
        }
        page.runs.push(run);
    }
    if wrong.is_empty() { Ok(page) } else { Err(wrong) }
}

/// Whether `line` is `pattern`, where each `…` in the pattern stands for any text.
fn matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return line == pattern;
    }
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// What bash runs before a block: says which command failed, and makes `cargo run --` the binary.
const PRELUDE: &str = r#"trap 'echo "docs test: this command failed: $BASH_COMMAND" >&2' ERR
cargo() {
  if [ "$1" = run ]; then
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
    [ $# -gt 0 ] && shift
    trailblaze "$@"
  else
    echo "docs test: \`cargo $1\` is not run here; mark its block <!-- not run: why -->" >&2
    return 97
  fi
}
"#;

/// The longest one block may take: a server left unmarked fails instead of hanging the suite.
const BLOCK_LIMIT: Duration = Duration::from_secs(180);

/// A page's workspace: its folder and the binary's folder for `PATH`.
struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    /// `TRAILBLAZE_SESSIONS_DIR`: the page's live sessions (docs/sessions.md), no one else's.
    sessions: PathBuf,
}

impl Drop for Workspace {
    /// A session a page started and did not stop (its block failed first) outlives every block: it
    /// runs in a process session of its own. Stopped here, not left for its idle timeout.
    fn drop(&mut self) {
        if self.sessions.is_dir() {
            let _ = Command::new(self.bin.join("trailblaze"))
                .args(["session", "stop", "--all"])
                .current_dir(&self.root)
                .env("TRAILBLAZE_SESSIONS_DIR", &self.sessions)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn workspace(page: &Page) -> Workspace {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).expect("mkdir");
    if !page.empty {
        copy_dir(&repo_root().join("trailmaps"), &root.join("trailmaps"));
    }
    for (rel, text) in &page.files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    // TypeScript as a project that installed it has it (the repository's pinned copy).
    std::os::unix::fs::symlink(repo_root().join("sdk-ts/node_modules"), root.join("node_modules")).expect("symlink");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(trailblaze_bin(), bin.join("trailblaze")).expect("symlink");
    let (home, cache) = (dir.path().join("home"), dir.path().join("cache"));
    std::fs::create_dir_all(&home).expect("mkdir");
    let sessions = dir.path().join("sessions");
    Workspace {
        _dir: dir,
        root,
        bin,
        home,
        cache,
        sessions,
    }
}

/// Runs one block in `ws`: `Err` says what went wrong, with its output.
fn run_block(ws: &Workspace, run: &Run) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![ws.bin.clone()];
    paths.extend(std::env::split_paths(&path));
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-e", "-o", "pipefail", "-c"])
        .arg(format!("{PRELUDE}{}", run.script))
        .current_dir(&ws.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("TRAILBLAZE_") || k == "NO_COLOR" || k.starts_with("npm_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env("HOME", &ws.home)
        .env("TRAILBLAZE_CACHE_DIR", &ws.cache)
        .env("TRAILBLAZE_SESSIONS_DIR", &ws.sessions)
        // The docs' `trailblaze report --open` hands the page to a command that does nothing: a
        // test never starts a browser.
        .env("TRAILBLAZE_OPENER", "true")
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        // A group of its own: what a block leaves running is killed with it, not left holding its
        // output open (which hung the suite once, on an unmarked `chromium ... &`).
        .process_group(0);
    let mut child = cmd.spawn().expect("bash runs");
    let group = child.id() as libc::pid_t;
    let readers = [
        read_all(child.stdout.take().expect("stdout")),
        read_all(child.stderr.take().expect("stderr")),
    ];
    let until = Instant::now() + BLOCK_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > until {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the block started and left: bash has ended, so nothing of the page's is still due.
    // SAFETY: kill(2) on the group this test made; no memory is shared.
    let left = unsafe { libc::kill(-group, libc::SIGKILL) } == 0 && status.is_some();
    let _ = child.wait();
    let [out, err] = readers.map(|r| r.join().expect("reader"));
    let shown = || format!("--- stdout ---\n{out}--- stderr ---\n{err}");
    let Some(status) = status else {
        return Err(format!(
            "{}: still running after {} s (a server? mark it `<!-- not run: ... -->`)\n{}",
            run.at,
            BLOCK_LIMIT.as_secs(),
            shown()
        ));
    };
    if !status.success() {
        return Err(format!("{}: exited with {status}\n{}", run.at, shown()));
    }
    if left {
        return Err(format!(
            "{}: it left a process running (a server or browser started with `&`?): stop it in the \
             block, or mark the block `<!-- not run: ... -->`\n{}",
            run.at,
            shown()
        ));
    }
    let printed: Vec<&str> = out.lines().chain(err.lines()).map(str::trim).collect();
    let missing: Vec<&String> = run
        .output
        .iter()
        .filter(|want| !printed.iter().any(|l| matches(want, l)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: the page shows lines its output does not hold: {missing:?}\n{}",
            run.at,
            shown()
        ))
    }
}

fn read_all(pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut pipe = pipe;
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs a page's blocks in order in its workspace: every failure, and the blocks left unrun.
fn check_page(doc: &str, md: &str) -> (Vec<String>, Vec<String>) {
    let page = match read_page(doc, md) {
        Ok(page) => page,
        Err(wrong) => return (wrong, Vec::new()),
    };
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let ws = workspace(&page);
    for run in &page.runs {
        match &run.not_run {
            Some(why) => skipped.push(format!("{}: {why}", run.at)),
            None => failures.extend(run_block(&ws, run).err()),
        }
    }
    (failures, skipped)
}

/// Every page: docs/*.md and README.md, as `(name, path)`.
fn pages() -> Vec<(String, PathBuf)> {
    let root = repo_root();
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| (p.strip_prefix(&root).unwrap_or(&p).display().to_string(), p))
        .collect();
    out.sort();
    out.push(("README.md".to_string(), root.join("README.md")));
    out
}

#[test]
fn every_command_the_docs_show_runs_or_says_why_not() {
    let pages = pages();
    let results: Vec<(usize, Vec<String>, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = pages
            .iter()
            .map(|(name, path)| {
                scope.spawn(move || {
                    let md = std::fs::read_to_string(path).expect("read a page");
                    let runs = read_page(name, &md).map(|p| p.runs.len()).unwrap_or(0);
                    let (failures, skipped) = check_page(name, &md);
                    (runs, failures, skipped)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a page's thread"))
            .collect()
    });
    let runs: usize = results.iter().map(|r| r.0).sum();
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    let skipped: Vec<&String> = results.iter().flat_map(|r| &r.2).collect();
    eprintln!("blocks not run, as their pages say:");
    for s in &skipped {
        eprintln!("  {s}");
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} command block(s) fail:\n\n{}",
        failures.len(),
        failures.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n")
    );
    // Control: the test saw the docs' commands, and ran most of them.
    assert!(runs >= 15, "only {runs} command blocks found");
    assert!(runs - skipped.len() >= 10, "only {} run", runs - skipped.len());
}

/// A page as the checker reads it, with a deliberately broken command among good ones.
const BROKEN_PAGE: &str = "# A page

```sh
trailblaze --version
```

```sh
trailblaze run no-such-trailmap        # not a trailmap
```

```sh
trailblaze --trailmaps trailmaps tools --trailmap demo
```

```text output
snapshot …
no tool is called this …
```

<!-- not run: -->
```sh
trailblaze mcp
```

```
trailblaze check --all
```

```sh
cargo install trailblaze-cli
cargo run -- --version
```

<!-- not run: serves until stopped -->

```sh
trailblaze mcp --http 0
```

<!-- env: TRAILBLAZE_TRAILMAP=demo -->
```sh
cargo run --quiet -- tools tap
```

```text output
tap …
```
";

#[test]
fn the_checker_fails_a_page_with_a_broken_command_and_passes_the_rest() {
    assert!(matches(
        "report: trailblaze-out/run-…/report.html",
        "report: trailblaze-out/run-x/report.html"
    ));
    assert!(matches("a…b…c", "a-b-c") && matches("a…", "abc") && matches("…c", "c"));
    assert!(!matches("3 passed, 0 failed", "3 passed, 0 failed, 3 skipped"));
    assert!(!matches("a…b", "ab-") && !matches("ab…ba", "aba"));
    // How the page is read: the bare block with a command and the reason left out are refused.
    let wrong = read_page("broken.md", BROKEN_PAGE).expect_err("marked wrongly");
    assert_eq!(
        wrong,
        [
            "broken.md:21: `not run` needs a reason",
            "broken.md:25: a command in a block that is not ```sh: the test cannot tell it runs",
        ],
        "{wrong:#?}"
    );
    // With those two fixed, what runs: the broken command, the output the page misquotes and the
    // `cargo` that is not `cargo run` fail; the rest pass.
    let fixed = BROKEN_PAGE
        .replace("<!-- not run: -->", "<!-- not run: a server -->")
        .replace("```\ntrailblaze check --all", "```sh\ntrailblaze check --all");
    let page = read_page("broken.md", &fixed).expect("marked rightly");
    assert_eq!(page.runs.len(), 8);
    assert_eq!(page.runs[3].not_run.as_deref(), Some("a server"));
    assert_eq!(page.runs[6].not_run.as_deref(), Some("serves until stopped"));
    assert_eq!(
        page.runs[7].env,
        [("TRAILBLAZE_TRAILMAP".to_string(), "demo".to_string())]
    );
    let (failures, skipped) = check_page("broken.md", &fixed);
    let at: Vec<&str> = failures
        .iter()
        .map(|f| f.split(": ").next().unwrap_or_default())
        .collect();
    assert_eq!(at, ["broken.md:7", "broken.md:11", "broken.md:29"], "{failures:#?}");
    assert!(failures[0].contains("no-such-trailmap"), "{}", failures[0]);
    assert!(failures[1].contains("no tool is called this"), "{}", failures[1]);
    assert!(
        failures[2].contains("`cargo install` is not run here"),
        "{}",
        failures[2]
    );
    assert_eq!(
        skipped,
        ["broken.md:21: a server", "broken.md:36: serves until stopped"]
    );
}

/// A block that leaves a process running fails, named by its line, and does not hang the suite; the
/// same block that stops what it started passes (the control).
#[test]
fn a_block_that_leaves_a_process_running_fails_at_once() {
    let page = |tail: &str| format!("# Page\n\n```sh\ntrailblaze --version\nsleep 600 &\n{tail}```\n");
    let started = Instant::now();
    let (failures, _) = check_page("left.md", &page(""));
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(
        failures[0].starts_with("left.md:") && failures[0].contains(": it left a process running"),
        "{}",
        failures[0]
    );
    assert!(started.elapsed() < BLOCK_LIMIT, "the left process held the block");
    let (failures, _) = check_page("stopped.md", &page("kill %1\nwait || true\n"));
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The subcommands `trailblaze --help` lists.
fn subcommands() -> Vec<String> {
    let o = Command::new(trailblaze_bin()).arg("--help").output().expect("--help");
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    let list = help.split("Commands:").nth(1).unwrap_or_default();
    let list = list.split("\n\n").next().unwrap_or_default();
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_and_cli_md_name_every_subcommand() {
    let commands = subcommands();
    assert!(
        commands.len() >= 15 && commands.contains(&"migrate".to_string()),
        "{commands:?}"
    );
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let list = readme
        .split("\nThe commands:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("the README lists the commands");
    let cli = std::fs::read_to_string(repo_root().join("docs/cli.md")).expect("cli.md");
    let rows: Vec<&str> = cli.lines().filter(|l| l.starts_with("| `")).collect();
    for c in &commands {
        assert!(list.contains(&format!("`{c}`")), "README's list lacks `{c}`: {list}");
        assert!(
            rows.iter()
                .any(|r| r.starts_with(&format!("| `{c}")) || r.contains(&format!(" `{c} "))),
            "docs/cli.md's table has no row for `{c}`"
        );
    }
}

/// Every relative link `](path)` or `](path#anchor)` of `md` (page `doc`) names a file that exists,
/// from the page's folder.
fn broken_links(doc: &Path, md: &str) -> Vec<String> {
    let dir = doc.parent().unwrap_or(Path::new("."));
    let mut bad = Vec::new();
    let mut in_code = false;
    for (i, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for (at, _) in line.match_indices("](") {
            let target = &line[at + 2..];
            let Some(end) = target.find(')') else { continue };
            let target = &target[..end];
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            if !dir.join(path).exists() {
                bad.push(format!("{}:{}: `{target}` names no file", doc.display(), i + 1));
            }
        }
    }
    bad
}

#[test]
fn every_link_between_the_pages_names_a_file_that_exists() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for (_, path) in pages() {
        let md = std::fs::read_to_string(&path).expect("read a page");
        seen += md.matches("](").count();
        bad.extend(broken_links(&path, &md));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(seen >= 50, "only {seen} links seen");
    // Control: a link written from the repository's root inside docs/ is caught.
    let planted = broken_links(
        &repo_root().join("docs/cli.md"),
        "see [ci](docs/ci.md#x) and [ok](ci.md)\n```\n[not](a link)\n```\n",
    );
    assert_eq!(planted.len(), 1, "{planted:?}");
    assert!(planted[0].contains("`docs/ci.md#x`"), "{planted:?}");
}
