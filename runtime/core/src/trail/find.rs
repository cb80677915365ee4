//! Finding trail files and splitting them across CI shards.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The suffix that marks a trail file inside a folder.
pub const TRAIL_SUFFIX: &str = ".trail.yaml";

#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{}: no such file or folder", .0.display())]
    NotFound(PathBuf),
    #[error("{}: cannot read: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// A trail file's name: `*.trail.yaml`, or the original's `trail.yaml` / `blaze.yaml`.
pub fn is_trail_name(name: &str) -> bool {
    name.ends_with(TRAIL_SUFFIX) || name == "trail.yaml" || name == "blaze.yaml"
}

/// The trail files named by `paths`: a file is taken as it is (whatever its name: it was asked for);
/// a folder is searched recursively for `*.trail.yaml`, skipping hidden folders (scratch output such
/// as `.trailblaze/` lives there). Sorted by path, each file once even when named twice.
/// `trails/x.trail.yaml` → `x` (and `blaze.yaml` → `blaze`): the name a trail file goes by.
pub fn trail_stem(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `sign-in/trail.yaml` goes by its folder's name, as in the original.
    if name == "trail.yaml"
        && let Some(folder) = file.parent().and_then(Path::file_name)
    {
        return folder.to_string_lossy().into_owned();
    }
    name.strip_suffix(".trail.yaml")
        .or_else(|| name.strip_suffix(".yaml"))
        .unwrap_or(&name)
        .to_string()
}

pub fn find_trails(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FindError> {
    let mut found = Vec::new();
    // Whether a symlink was followed: only then can one folder yield the same file twice.
    let mut linked = false;
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FindError::NotFound(path.clone()),
            _ => FindError::Io {
                path: path.clone(),
                source: e,
            },
        })?;
        if meta.is_dir() {
            walk(path, &mut found, &mut linked)?;
        } else {
            found.push(path.clone());
        }
    }
    // `./a/trail.yaml` (a walk from `.`) reads as `a/trail.yaml`, as the user would write it.
    for p in &mut found {
        if let Ok(rest) = p.strip_prefix(".")
            && !rest.as_os_str().is_empty()
        {
            *p = rest.to_path_buf();
        }
    }
    found.sort();
    // The same file reached two ways (`trails/` and `./trails/a.trail.yaml`) runs once. Resolving
    // every path costs a system call per folder above it: one folder without links needs none.
    if paths.len() > 1 || linked {
        let mut seen = HashSet::new();
        found.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    }
    Ok(found)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, linked: &mut bool) -> Result<(), FindError> {
    let io = |source| FindError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // `file_type` does not follow symlinks, so a link cycle cannot recurse forever.
        let ty = entry.file_type().map_err(io)?;
        if ty.is_dir() {
            if !name.starts_with('.') {
                walk(&path, out, linked)?;
            }
        } else if is_trail_name(&name) && (ty.is_file() || (ty.is_symlink() && path.is_file())) {
            *linked |= ty.is_symlink();
            out.push(path);
        }
    }
    Ok(())
}

/// The trail files whose `config.tags` pass the filter: with `include` non-empty, a trail must carry
/// at least one of its tags; a trail carrying any `exclude` tag is dropped (exclude wins). A file that
/// does not parse is kept, so the run reports its parse error instead of silently dropping it. Order is kept.
pub fn filter_by_tags(files: &[PathBuf], include: &[String], exclude: &[String]) -> Vec<PathBuf> {
    if include.is_empty() && exclude.is_empty() {
        return files.to_vec();
    }
    files
        .iter()
        .filter(|f| match super::load_trail(f) {
            Ok(t) => {
                let has = |tags: &[String]| tags.iter().any(|want| t.config.tags.contains(want));
                (include.is_empty() || has(include)) && !has(exclude)
            }
            Err(_) => true,
        })
        .cloned()
        .collect()
}

/// Shard `i` of `n` (1-based `i`) of `items`, which the caller has sorted (as [`find_trails`]
/// returns them): item `k` goes to shard `k % n + 1`. Round-robin keeps the shards within one item
/// of each other in size; every item lands in exactly one shard. An `i` outside `1..=n` gets nothing.
pub fn shard<T>(items: Vec<T>, i: usize, n: usize) -> Vec<T> {
    if n == 0 || i == 0 || i > n {
        return Vec::new();
    }
    items
        .into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i - 1)
        .map(|(_, t)| t)
        .collect()
}

/// Reads `--shard i/n`: `1 <= i <= n`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not a shard: expected `i/n` with 1 <= i <= n, e.g. `2/4`");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::json;

    use super::*;
    use crate::trail::load_trail;

    fn show(errs: &[crate::yaml::YamlError]) -> String {
        errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
    }

    fn demo_trails() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../trailmaps/demo/trails")
    }

    #[test]
    fn the_demo_trails_parse() {
        let files = find_trails(&[demo_trails()]).unwrap();
        let names: Vec<_> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().to_string())
            .collect();
        for want in ["sign-in.trail.yaml", "open-message.trail.yaml", "dark-mode.trail.yaml"] {
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        for f in &files {
            let t = load_trail(f).unwrap_or_else(|e| panic!("{}", show(&e)));
            assert_eq!(t.config.target.as_deref(), Some("demo"), "{}", f.display());
            assert!(t.trailhead.is_some() && !t.steps.is_empty());
            assert!(
                t.all_steps().all(|s| s.calls_for("android", None).is_some()),
                "{}",
                f.display()
            );
        }
        let sign_in = load_trail(&demo_trails().join("sign-in.trail.yaml")).unwrap();
        // The phone's recordings and the iPhone's type the same.
        for (platform, key) in [("android", None), ("ios", Some("ios-iphone"))] {
            let typed: Vec<_> = sign_in
                .all_steps()
                .flat_map(|s| s.calls_for(platform, key).unwrap_or_default())
                .filter(|c| c.tool == "inputText")
                .map(|c| &c.args["text"])
                .collect();
            assert_eq!(
                typed,
                [&json!("jane@example.com"), &json!("{{secret:DEMO_PASSWORD}}")],
                "{platform}"
            );
        }
    }

    #[test]
    fn a_linked_trail_in_one_folder_runs_once_and_two_files_twice() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.trail.yaml"), "trail: []\n").unwrap();
        std::fs::write(d.join("b.trail.yaml"), "trail: []\n").unwrap();
        // The control: two files, no link, both found (nothing resolved).
        assert_eq!(find_trails(&[d.to_path_buf()]).unwrap().len(), 2);
        std::os::unix::fs::symlink(d.join("a.trail.yaml"), d.join("c.trail.yaml")).unwrap();
        let found = find_trails(&[d.to_path_buf()]).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["a.trail.yaml", "b.trail.yaml"],
            "the link is the same trail as a.trail.yaml"
        );
    }

    #[test]
    fn find_trails_walks_folders_sorts_and_dedups() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in [
            "b.trail.yaml",
            "a.trail.yaml",
            "notes.yaml",
            "sub/c.trail.yaml",
            ".trailblaze/x.trail.yaml",
        ] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), "trail: []\n").unwrap();
        }
        let found = find_trails(&[d.join("sub/c.trail.yaml"), d.to_path_buf(), d.join("notes.yaml")]).unwrap();
        let rel: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().to_string_lossy().to_string())
            .collect();
        assert_eq!(rel, ["a.trail.yaml", "b.trail.yaml", "notes.yaml", "sub/c.trail.yaml"]);
        let missing = find_trails(&[d.join("nope")]).unwrap_err();
        assert!(
            matches!(missing, FindError::NotFound(_)) && missing.to_string().ends_with("nope: no such file or folder")
        );
        assert!(
            load_trail(&d.join("nope.trail.yaml")).unwrap_err()[0]
                .message
                .starts_with("cannot read")
        );
    }

    #[test]
    fn tags_include_and_exclude_and_keep_what_does_not_parse() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let smoke = file("a.trail.yaml", "config:\n  tags: [smoke, login]\ntrail: []\n");
        let slow = file("b.trail.yaml", "config:\n  tags: [slow]\ntrail: []\n");
        let none = file("c.trail.yaml", "trail: []\n");
        let broken = file("d.trail.yaml", "config:\n  tagz: [smoke]\ntrail: []\n");
        let all = vec![smoke.clone(), slow.clone(), none.clone(), broken.clone()];
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(load_trail(&broken).is_err(), "control: the broken file does not parse");
        assert_eq!(filter_by_tags(&all, &[], &[]), all);
        assert_eq!(
            filter_by_tags(&all, &s(&["smoke"]), &[]),
            [smoke.clone(), broken.clone()]
        );
        assert_eq!(
            filter_by_tags(&all, &s(&["slow", "login"]), &[]),
            [smoke.clone(), slow.clone(), broken.clone()]
        );
        assert_eq!(
            filter_by_tags(&all, &[], &s(&["slow"])),
            [smoke.clone(), none.clone(), broken.clone()]
        );
        assert_eq!(
            filter_by_tags(&all, &s(&["smoke"]), &s(&["login"])),
            std::slice::from_ref(&broken),
            "exclude wins"
        );
        assert_eq!(filter_by_tags(&all, &s(&["nothing"]), &[]), [broken]);
    }

    #[test]
    fn shards_cover_every_item_once() {
        let items: Vec<usize> = (0..10).collect();
        let shards: Vec<Vec<usize>> = (1..=3).map(|i| shard(items.clone(), i, 3)).collect();
        assert_eq!(shards, [vec![0, 3, 6, 9], vec![1, 4, 7], vec![2, 5, 8]]);
        let mut all: Vec<usize> = shards.concat();
        all.sort();
        assert_eq!(all, items);
        assert_eq!(shard(items.clone(), 1, 1), items);
        assert!(shard(items.clone(), 0, 3).is_empty() && shard(items.clone(), 4, 3).is_empty());
        assert!(shard(items, 1, 0).is_empty());
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
