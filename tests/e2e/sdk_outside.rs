//! The SDK used from a project outside this repository, as a user would: a workspace in a temp
//! folder, the real `trailblaze dts`, the real `tsc -p`; and the npm package packed, installed
//! offline from its tarball and compiled against.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use trailblaze_e2e::{copy_dir, repo_root, trailblaze_bin};

const GOOD_TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Greets someone on the screen. */
export const greet = trailblaze.tool<{ name: string }, { said: string }>(async (input, ctx) => {
  await ctx.tools.inputText({ text: `hi ${input.name}` });
  await ctx.tools.pressKey({ keyCode: "ENTER" });
  return { said: input.name };
});
"#;

/// `keyCode` is an enum in the generated surface: `SPACEBAR` is not one of its values.
const BAD_TOOL: &str = r#"import { trailblaze } from "@trailblaze/scripting";
/** Presses a key that does not exist. */
export const bad = trailblaze.tool<{}, {}>(async (_input, ctx) => {
  await ctx.tools.pressKey({ keyCode: "SPACEBAR" });
  return {};
});
"#;

/// Where tsc must report BAD_TOOL's error, as `bad.ts(line,col)`.
fn bad_position() -> String {
    let (i, line) = BAD_TOOL
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("SPACEBAR"))
        .expect("the bad line");
    let col = line.find("keyCode").expect("keyCode") + 1;
    format!("bad.ts({},{col}): error TS2322", i + 1)
}

/// The repository's pinned compiler, by absolute path: the workspace has no TypeScript of its own.
fn tsc() -> PathBuf {
    let tsc = repo_root().join("sdk-ts/node_modules/.bin/tsc");
    assert!(tsc.is_file(), "the pinned tsc is missing: run `npm ci --prefix sdk-ts`");
    tsc
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `<ws>/trailmaps/shop` with one tool; then the real `trailblaze dts shop`, run from `ws`.
fn workspace_with_dts(ws: &Path) -> PathBuf {
    let map = ws.join("trailmaps/shop");
    std::fs::create_dir_all(map.join("tools")).expect("mkdir");
    std::fs::write(map.join("trailmap.yaml"), "id: shop\n").expect("write");
    std::fs::write(map.join("tools/greet.ts"), GOOD_TOOL).expect("write");
    let out = run(Command::new(trailblaze_bin())
        .arg("--trailmaps")
        .arg(ws.join("trailmaps"))
        .args(["dts", "shop"])
        .current_dir(ws)
        .env_remove("TRAILBLAZE_SDK"));
    assert!(out.status.success(), "dts failed: {}", text(&out));
    map
}

/// `tsc -p <project> --noEmit --pretty false`, run from `cwd`.
fn tsc_p(project: &Path, cwd: &Path) -> Output {
    run(Command::new(tsc())
        .arg("-p")
        .arg(project)
        .args(["--noEmit", "--pretty", "false"])
        .current_dir(cwd))
}

#[test]
fn dts_makes_a_workspace_anywhere_type_check_with_only_tsc() {
    let ws = tempfile::tempdir().expect("temp dir");
    let map = workspace_with_dts(ws.path());
    let tsconfig = std::fs::read_to_string(map.join("tools/tsconfig.json")).expect("tsconfig");
    let repo = repo_root().display().to_string();
    assert!(
        !tsconfig.contains(&repo) && !tsconfig.contains("sdk-ts"),
        "the tsconfig must not point back into trailblaze's checkout:\n{tsconfig}"
    );
    // The vendored SDK is the repository's source, byte for byte after its banner line.
    for name in ["index.ts", "selectors.ts"] {
        let vendored = std::fs::read_to_string(map.join("tools/.trailblaze/scripting").join(name)).expect(name);
        let source = std::fs::read_to_string(repo_root().join("sdk-ts/src").join(name)).expect(name);
        assert_eq!(
            vendored.split_once('\n').map(|(_, rest)| rest),
            Some(source.as_str()),
            "{name}"
        );
    }

    // Moved elsewhere (another folder, another depth), the trailmap still compiles: green.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let moved = elsewhere.path().join("a/b/c/shop");
    copy_dir(&map, &moved);
    let tools = moved.join("tools");
    let green = tsc_p(&tools.join("tsconfig.json"), elsewhere.path());
    assert!(green.status.success(), "tsc on the moved trailmap: {}", text(&green));

    // Control: a type error is reported at file:line:col, so the green run above really checked.
    std::fs::write(tools.join("bad.ts"), BAD_TOOL).expect("write");
    let red = tsc_p(&tools.join("tsconfig.json"), &tools);
    assert!(!red.status.success());
    assert!(
        text(&red).contains(&bad_position()),
        "want {}:\n{}",
        bad_position(),
        text(&red)
    );
    std::fs::remove_file(tools.join("bad.ts")).expect("rm");

    // Control: without the vendored copy the SDK does not resolve, so it is what tsc used.
    std::fs::remove_dir_all(tools.join(".trailblaze")).expect("rm");
    let unresolved = tsc_p(&tools.join("tsconfig.json"), &tools);
    assert!(
        text(&unresolved).contains("error TS2307: Cannot find module '@trailblaze/scripting'"),
        "{}",
        text(&unresolved)
    );
}

/// Packs sdk-ts from a copy (so the checkout gets no `dist/`) into `dest`; returns the tarball.
fn npm_pack(scratch: &Path, dest: &Path) -> PathBuf {
    let sdk = repo_root().join("sdk-ts");
    let pkg = scratch.join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    for f in ["package.json", "tsconfig.json", "tsconfig.build.json", "README.md"] {
        std::fs::copy(sdk.join(f), pkg.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    copy_dir(&sdk.join("src"), &pkg.join("src"));
    // The build step (`prepack`) needs the pinned typescript, which the copy borrows.
    #[cfg(unix)]
    std::os::unix::fs::symlink(sdk.join("node_modules"), pkg.join("node_modules")).expect("symlink");
    let out = run(Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(dest)
        .arg("--cache")
        .arg(scratch.join("npm-cache"))
        .current_dir(&pkg));
    assert!(out.status.success(), "npm pack: {}", text(&out));
    let name = String::from_utf8_lossy(&out.stdout)
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    let tarball = dest.join(&name);
    assert!(
        name.starts_with("trailblaze-scripting-") && tarball.is_file(),
        "no tarball: {}",
        text(&out)
    );
    tarball
}

#[test]
fn the_npm_package_installs_offline_and_types_a_users_tool() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let ws = tempfile::tempdir().expect("temp dir");
    let tarball = npm_pack(scratch.path(), ws.path());
    let install = run(Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund", "--cache"])
        .arg(scratch.path().join("npm-cache"))
        .arg(&tarball)
        .current_dir(ws.path()));
    assert!(install.status.success(), "npm install: {}", text(&install));
    let installed = ws.path().join("node_modules/@trailblaze/scripting");
    assert!(installed.join("dist/index.d.ts").is_file() && installed.join("dist/index.js").is_file());

    // The package runs under plain Node too (its main is the built JavaScript).
    let node = run(Command::new("node")
        .args(["--input-type=module", "-e"])
        .arg("import { trailblaze } from '@trailblaze/scripting'; console.log(typeof trailblaze.tool);")
        .current_dir(ws.path()));
    assert_eq!(
        String::from_utf8_lossy(&node.stdout).trim(),
        "function",
        "{}",
        text(&node)
    );

    // The user's own tsconfig, no `paths`: the import resolves to the installed package, and the
    // generated trailblaze-client.d.ts augments it.
    let map = workspace_with_dts(ws.path());
    let tsconfig = ws.path().join("tsconfig.json");
    std::fs::write(
        &tsconfig,
        r#"{ "compilerOptions": { "target": "ES2022", "lib": ["ES2022"], "module": "ESNext",
  "moduleResolution": "Bundler", "strict": true, "noEmit": true, "types": [] },
  "include": ["trailmaps/*/tools/*.ts"] }"#,
    )
    .expect("write");
    let green = tsc_p(&tsconfig, ws.path());
    assert!(
        green.status.success(),
        "tsc with the installed package: {}",
        text(&green)
    );
    let listed = run(Command::new(tsc())
        .arg("-p")
        .arg(&tsconfig)
        .arg("--listFiles")
        .current_dir(ws.path()));
    assert!(
        text(&listed).contains("node_modules/@trailblaze/scripting/dist/index.d.ts"),
        "the installed declarations were used: {}",
        text(&listed)
    );

    // Control: the same setup reports a tool's type error at file:line:col.
    std::fs::write(map.join("tools/bad.ts"), BAD_TOOL).expect("write");
    let red = tsc_p(&tsconfig, ws.path());
    assert!(!red.status.success());
    assert!(text(&red).contains(&bad_position()), "{}", text(&red));
}
