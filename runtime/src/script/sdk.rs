//! The one script-side SDK: `sdk-ts/src/index.ts` is its only source. Every runtime serves a build
//! of it made by the project's own swc, once per process: QuickJS as the `@trailblaze/scripting`
//! module, the Node subprocess as a file it imports.

use std::sync::OnceLock;

use super::transpile::transpile_uncached;

/// The module name scripts import the SDK by.
pub const MODULE: &str = "@trailblaze/scripting";

/// The SDK's TypeScript source, compiled into the binary.
pub const SOURCE: &str = include_str!("../../../sdk-ts/src/index.ts");

/// Every file of `sdk-ts/src/`, by name: what `trailblaze dts` vendors into a trailmap so `tsc` finds
/// the SDK's types wherever the workspace is (`index.ts` imports its selector types from the other).
pub const FILES: &[(&str, &str)] = &[
    ("index.ts", SOURCE),
    ("selectors.ts", include_str!("../../../sdk-ts/src/selectors.ts")),
];

/// The SDK as JavaScript (types stripped by swc), built on first use.
pub fn javascript() -> Result<&'static str, &'static String> {
    static BUILT: OnceLock<Result<String, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            transpile_uncached("@trailblaze/scripting.ts", SOURCE)
                .map(|t| t.code)
                .map_err(|e| format!("the SDK does not transpile: {e}"))
        })
        .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drift guard: the compiled-in source is the file in sdk-ts/ byte for byte, and its build has no
    /// imports left (QuickJS serves it as a self-contained module).
    #[test]
    fn the_embedded_sdk_is_sdk_ts_and_self_contained() {
        let on_disk = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk-ts/src/index.ts"))
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
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk-ts/src");
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
