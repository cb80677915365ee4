//! The one script-side SDK: `sdk-ts/src/index.ts` is its only source. Every runtime serves its
//! build by the project's own swc: QuickJS as the `@trailblaze/scripting` module, the Node
//! subprocess as a file it imports. The build is kept beside this file (`sdk.js`) rather than made
//! at every start (~2 ms of each process's first engine); a test rebuilds it and fails
//! when it differs (`TRAILBLAZE_BLESS=1` rewrites it).

/// The module name scripts import the SDK by.
pub const MODULE: &str = "@trailblaze/scripting";

/// The SDK's TypeScript source, compiled into the binary.
pub const SOURCE: &str = include_str!("../../../../sdk-ts/src/index.ts");

/// Every file of `sdk-ts/src/`, by name: what `trailblaze dts` vendors into a trailmap so `tsc` finds
/// the SDK's types wherever the workspace is (`index.ts` imports its selector types from the other).
pub const FILES: &[(&str, &str)] = &[
    ("index.ts", SOURCE),
    ("selectors.ts", include_str!("../../../../sdk-ts/src/selectors.ts")),
];

/// The SDK as JavaScript (types stripped by swc).
pub fn javascript() -> Result<&'static str, &'static String> {
    Ok(BUILT)
}

/// swc's build of [`SOURCE`], checked by `the_kept_build_is_swcs_build_of_the_source`.
const BUILT: &str = include_str!("sdk.js");

#[cfg(test)]
mod tests {
    use super::*;

    /// Drift guard: the compiled-in source is the file in sdk-ts/ byte for byte, and its build has no
    /// imports left (QuickJS serves it as a self-contained module).
    #[test]
    fn the_kept_build_is_swcs_build_of_the_source() {
        let built = crate::script::transpile::transpile_uncached("@trailblaze/scripting.ts", SOURCE)
            .expect("the SDK transpiles")
            .code;
        if std::env::var_os("TRAILBLAZE_BLESS").is_some() {
            std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/src/script/sdk.js"), &built).expect("write sdk.js");
            return;
        }
        assert!(
            built == BUILT,
            "runtime/core/src/script/sdk.js is not swc's build of sdk-ts/src/index.ts: \
             run `TRAILBLAZE_BLESS=1 cargo test -p trailblaze-core --lib sdk::` and commit it"
        );
    }

    #[test]
    fn the_embedded_sdk_is_sdk_ts_and_self_contained() {
        let on_disk = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk-ts/src/index.ts"))
            .expect("sdk-ts/src/index.ts");
        assert_eq!(on_disk, SOURCE);
        let js = javascript().expect("transpiles");
        for line in js.lines() {
            let t = line.trim_start();
            assert!(
                !t.starts_with("import ") && (!t.starts_with("export ") || !t.contains(" from ")),
                "the SDK build still imports: {line}"
            );
        }
        // Every source file is vendored, byte for byte: a file added to sdk-ts/src/ without a line in
        // FILES fails here (and would leave the vendored copy's imports dangling).
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk-ts/src");
        let mut names: Vec<String> = std::fs::read_dir(src)
            .expect("sdk-ts/src")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let vendored: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, vendored, "sdk-ts/src/ and sdk::FILES list the same files");
        for (name, text) in FILES {
            let on_disk = std::fs::read_to_string(format!("{src}/{name}")).expect("an SDK file");
            assert_eq!(&on_disk, text, "{name} drifted from its compiled-in copy");
        }
        for name in [
            "makeContext",
            "unwrapEnvelope",
            "selectors",
            "trailblaze",
            "TrailblazeToolError",
        ] {
            assert!(js.contains(name), "the SDK build lacks {name}");
        }
    }
}
