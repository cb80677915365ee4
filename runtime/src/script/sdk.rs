//! The one script-side SDK: `sdk-ts/src/index.ts` is its only source. Every runtime serves a build
//! of it made by the project's own swc, once per process: QuickJS as the `@trailblaze/scripting`
//! module, the Node subprocess as a file it imports.

use std::sync::OnceLock;

use super::transpile::transpile_uncached;

/// The module name scripts import the SDK by.
pub const MODULE: &str = "@trailblaze/scripting";

/// The SDK's TypeScript source, compiled into the binary.
pub const SOURCE: &str = include_str!("../../../sdk-ts/src/index.ts");

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
