//! Running the pinned TypeScript compiler (`sdk-ts/node_modules/.bin/tsc`) and reading its
//! `--pretty false` diagnostics.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the pinned compiler lives, relative to the repository root.
pub const TSC_IN_REPO: &str = "sdk-ts/node_modules/.bin/tsc";

/// The environment variable that names another `tsc` binary.
pub const TSC_ENV: &str = "TRAILBLAZE_TSC";

/// How to install the pinned compiler, for error messages.
pub const INSTALL_HINT: &str =
    "run `npm ci --prefix sdk-ts` in the repository to install the pinned TypeScript compiler";

/// Output shown in an error is cut to this many bytes.
const MAX_OUTPUT: usize = 4000;

/// One diagnostic as tsc printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TscDiagnostic {
    /// The file as tsc names it: relative to the project's folder when [`run_tsc`] ran it; `""` for
    /// a diagnostic about no file (a bad option, say).
    pub file: String,
    /// 1-based; 0 when there is no file.
    pub line: usize,
    /// 1-based; 0 when there is no file.
    pub col: usize,
    /// `TS2353`.
    pub code: String,
    /// The first line, then each indented continuation line, trimmed and joined with a space.
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TscError {
    #[error("TypeScript project not found: {path}")]
    NoProject { path: PathBuf },
    #[error("TypeScript compiler not found at {path}: {INSTALL_HINT}")]
    NotInstalled { path: PathBuf },
    #[error("cannot run the TypeScript compiler {path}: {source}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// tsc ran but failed without a diagnostic to show (a crash, or no Node.js to run it).
    #[error("the TypeScript compiler {path} failed ({status}) without diagnostics{hint}:\n{output}")]
    Failed {
        path: PathBuf,
        status: String,
        hint: &'static str,
        output: String,
    },
}

/// Parses `tsc --pretty false` output: `path(line,col): error TSxxxx: message`, continuation lines
/// indented below it, and file-less `error TSxxxx: message` lines. Anything else (the summary
/// line `Found 3 errors`) ends the current diagnostic and is skipped.
pub fn parse_tsc_output(output: &str) -> Vec<TscDiagnostic> {
    let mut out: Vec<TscDiagnostic> = Vec::new();
    let mut open = false;
    for raw in output.lines() {
        let line = raw.trim_end_matches('\r');
        if line.starts_with([' ', '\t']) {
            if open && let Some(last) = out.last_mut() {
                let more = line.trim();
                if !more.is_empty() {
                    last.message.push(' ');
                    last.message.push_str(more);
                }
            }
            continue;
        }
        let parsed = located(line).or_else(|| fileless(line));
        open = parsed.is_some();
        out.extend(parsed);
    }
    out
}

/// `category TS1234: message` → (code, message).
fn category_code(rest: &str) -> Option<(String, String)> {
    let (category, rest) = rest.split_once(' ')?;
    if !matches!(category, "error" | "warning" | "message") {
        return None;
    }
    let (code, message) = rest.split_once(": ")?;
    let digits = code.strip_prefix("TS")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((code.to_string(), message.to_string()))
}

fn located(line: &str) -> Option<TscDiagnostic> {
    // The path may itself hold `(` or `): `; the position is the first `(l,c): ` followed by a
    // well-formed category and code.
    let mut from = 0;
    while let Some(i) = line[from..].find("): ").map(|i| i + from) {
        from = i + 1;
        let Some(open) = line[..i].rfind('(') else { continue };
        let Some((l, c)) = line[open + 1..i].split_once(',') else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.parse::<usize>(), c.parse::<usize>()) else {
            continue;
        };
        if let Some((code, message)) = category_code(&line[i + 3..]) {
            return Some(TscDiagnostic {
                file: line[..open].to_string(),
                line: l,
                col: c,
                code,
                message,
            });
        }
    }
    None
}

fn fileless(line: &str) -> Option<TscDiagnostic> {
    let (code, message) = category_code(line)?;
    Some(TscDiagnostic {
        file: String::new(),
        line: 0,
        col: 0,
        code,
        message,
    })
}

/// Runs `tsc --noEmit -p <project> --pretty false` and returns its diagnostics (none when the
/// project compiles). `project` is a folder holding `tsconfig.json` or a config file of any name;
/// tsc runs in its folder, so diagnostics name files relative to it. An error when tsc cannot run.
pub fn run_tsc(tsc: &Path, project: &Path) -> Result<Vec<TscDiagnostic>, TscError> {
    let tsc = std::path::absolute(tsc).unwrap_or_else(|_| tsc.to_path_buf());
    let project = std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf());
    let (dir, config) = if project.is_dir() {
        (project.clone(), PathBuf::from("."))
    } else {
        let dir = project.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = project.file_name().map_or_else(|| project.clone(), PathBuf::from);
        (dir, name)
    };
    if !tsc.is_file() {
        return Err(TscError::NotInstalled { path: tsc });
    }
    // Checked here: a missing working directory would fail the spawn like a missing binary.
    if !dir.is_dir() {
        return Err(TscError::NoProject { path: project });
    }
    let run = Command::new(&tsc)
        .arg("--noEmit")
        .arg("-p")
        .arg(&config)
        .arg("--pretty")
        .arg("false")
        .current_dir(&dir)
        .output()
        .map_err(|source| match source.kind() {
            ErrorKind::NotFound => TscError::NotInstalled { path: tsc.clone() },
            _ => TscError::Spawn {
                path: tsc.clone(),
                source,
            },
        })?;
    let stdout = String::from_utf8_lossy(&run.stdout);
    let diagnostics = parse_tsc_output(&stdout);
    if run.status.success() || !diagnostics.is_empty() {
        return Ok(diagnostics);
    }
    let mut output = format!(
        "{}{}",
        stdout.trim_end(),
        String::from_utf8_lossy(&run.stderr).trim_end()
    );
    if output.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !output.is_char_boundary(cut) {
            cut -= 1;
        }
        output.truncate(cut);
        output.push_str(" …");
    }
    // 126/127: the `#!/usr/bin/env node` line found no runnable Node.js.
    let hint = match run.status.code() {
        Some(126 | 127) => " (is Node.js installed and on PATH?)",
        _ => "",
    };
    Err(TscError::Failed {
        path: tsc,
        status: run.status.to_string(),
        hint,
        output,
    })
}

/// Where a user's own project installs tsc (`npm install --save-dev typescript`).
pub const TSC_IN_PROJECT: &str = "node_modules/.bin/tsc";

/// Finds tsc: `$TRAILBLAZE_TSC` when set, else in `start` or the nearest folder above it, the
/// repository's pinned `sdk-ts/node_modules/.bin/tsc` or a project's `node_modules/.bin/tsc`.
pub fn find_tsc(start: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(TSC_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let start = std::path::absolute(start).ok()?;
    start.ancestors().find_map(|dir| {
        [TSC_IN_REPO, TSC_IN_PROJECT].into_iter().find_map(|rel| {
            let bin = dir.join(rel);
            // On Windows npm writes a `.cmd` shim beside a shell script that cannot be spawned.
            let candidates = if cfg!(windows) {
                [bin.with_extension("cmd"), bin]
            } else {
                [bin.clone(), bin.with_extension("cmd")]
            };
            candidates.into_iter().find(|p| p.is_file())
        })
    })
}

#[cfg(test)]
pub(crate) mod testing {
    //! The real compiler for tests. Missing is a failure, never a skip: CI installs it.

    use std::path::{Path, PathBuf};

    use super::{INSTALL_HINT, find_tsc};

    pub(crate) struct Sdk {
        pub tsc: PathBuf,
        /// `sdk-ts/src/index.ts`, absolute.
        pub index: PathBuf,
        /// The `sdk-ts` folder.
        pub root: PathBuf,
    }

    pub(crate) fn sdk() -> Sdk {
        // The manifest dir finds it inside the workspace; this file's own path finds it from a
        // scratch crate that includes the module by absolute path.
        let starts = [Path::new(env!("CARGO_MANIFEST_DIR")), Path::new(file!())];
        let tsc = starts.iter().find_map(|s| find_tsc(s));
        let root = starts.iter().find_map(|s| {
            std::path::absolute(s)
                .ok()?
                .ancestors()
                .map(|d| d.join("sdk-ts"))
                .find(|d| d.join("src/index.ts").is_file())
        });
        match (tsc, root) {
            (Some(tsc), Some(root)) if tsc.is_file() => Sdk {
                tsc,
                index: root.join("src/index.ts"),
                root,
            },
            _ => panic!("the pinned TypeScript compiler (sdk-ts/node_modules/.bin/tsc) is missing: {INSTALL_HINT}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_located_fileless_and_continued_diagnostics() {
        let out = "trails/a (1).trail.gen.ts(5,6): error TS2345: Argument of type '\"x\"' is not assignable.\n\
                   trails/a.trail.gen.ts(6,19): error TS2345: Argument of type '{}' is not assignable to 'T'.\r\n  \
                   Property 'text' is missing in type '{}'.\n    \
                   Deeper.\n\
                   error TS5083: Cannot read file 'x/tsconfig.json'.\n\
                   \n\
                   Found 3 errors in 2 files.\n\
                   \x20 not a continuation after the summary\n";
        let d = parse_tsc_output(out);
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(
            d[0],
            TscDiagnostic {
                file: "trails/a (1).trail.gen.ts".into(),
                line: 5,
                col: 6,
                code: "TS2345".into(),
                message: "Argument of type '\"x\"' is not assignable.".into(),
            }
        );
        assert_eq!((d[1].line, d[1].col), (6, 19));
        assert_eq!(
            d[1].message,
            "Argument of type '{}' is not assignable to 'T'. Property 'text' is missing in type '{}'. Deeper."
        );
        assert_eq!((d[2].file.as_str(), d[2].line, d[2].code.as_str()), ("", 0, "TS5083"));
        assert!(parse_tsc_output("Version 5.9.3\n").is_empty());
    }

    #[test]
    fn missing_compiler_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_tsc(&dir.path().join("no-tsc"), dir.path()).unwrap_err();
        assert!(matches!(err, TscError::NotInstalled { .. }));
        assert!(err.to_string().contains("npm ci --prefix sdk-ts"), "{err}");
        let sdk = testing::sdk();
        let err = run_tsc(&sdk.tsc, &dir.path().join("gone/tsconfig.json")).unwrap_err();
        assert!(matches!(err, TscError::NoProject { .. }), "{err}");
    }

    #[test]
    fn finds_a_project_local_compiler_outside_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("trailmaps/demo/tools");
        std::fs::create_dir_all(&deep).unwrap();
        // Control: a temp folder outside the repository has no compiler above it.
        assert_eq!(find_tsc(&deep), None);
        let bin = dir.path().join(TSC_IN_PROJECT);
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "").unwrap();
        assert_eq!(find_tsc(&deep), Some(bin));
    }

    #[test]
    fn finds_the_pinned_compiler_and_runs_it() {
        let sdk = testing::sdk();
        // From deep inside the repository, the one in sdk-ts is found.
        let found = find_tsc(&sdk.root.join("src")).unwrap();
        assert_eq!(
            std::fs::canonicalize(found).unwrap(),
            std::fs::canonicalize(&sdk.tsc).unwrap()
        );
        // A project with one error, named relative to the project folder; a config file by path.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.ts"), "export const n: number = \"1\";\n").unwrap();
        std::fs::write(
            dir.path().join("custom.json"),
            r#"{ "compilerOptions": { "strict": true, "types": [] }, "files": ["x.ts"] }"#,
        )
        .unwrap();
        let d = run_tsc(&sdk.tsc, &dir.path().join("custom.json")).unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].col, d[0].code.as_str()),
            ("x.ts", 1, 14, "TS2322")
        );
    }
}
