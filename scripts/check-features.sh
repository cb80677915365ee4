#!/usr/bin/env bash
# The feature matrix (docs/ndk.md): the library builds with none of its optional parts (what the
# on-device library for an APK uses) and with all of them (the CLI), and the minimal library
# carries no adb client and no HTTP client or server. The core crate's own graph holds no part at
# all (runtime/core/tests/no_switches.rs checks its manifest and sources).
#   scripts/check-features.sh            debug build, into target/minimal (its own: a build with
#                                        other features overwrites the .so the C and JNI tests
#                                        load; test.sh runs it last, in target/, where it reuses
#                                        the dependencies: CHECK_FEATURES_TARGET_DIR=target)
#   scripts/check-features.sh --release  also prints the release .so size and the dependency
#                                        counts that docs/ndk.md quotes
set -euo pipefail
cd "$(dirname "$0")/.."
profile=debug
flags=()
if [ "${1:-}" = "--release" ]; then
  profile=release
  flags=(--release)
fi
optional='adb_client|ureq|rustls|axum|hyper|tokio|roxmltree|resvg|usvg|gif|tungstenite|png'
crates() { cargo tree -e normal --prefix none "$@" | sed 's/ .*//' | sort -u; }
core=$(crates -p trailblaze-core)
if grep -qxE "$optional" <<<"$core"; then
  echo "check-features: the core depends on an optional part:" >&2
  echo "$core" | grep -xE "$optional" >&2
  exit 1
fi
# The minimal set's dependency graph holds no optional part; control: the full one holds each.
minimal=$(crates -p trailblaze-ffi --no-default-features)
if grep -qxE "$optional" <<<"$minimal"; then
  echo "check-features: the minimal library depends on an optional part:" >&2
  echo "$minimal" | grep -xE "$optional" >&2
  exit 1
fi
full=$(crates -p trailblaze-ffi --no-default-features --features adb,agent,fetch)
for c in adb_client ureq rustls resvg; do
  grep -qx "$c" <<<"$full" || { echo "check-features: control failed: no $c with every feature" >&2; exit 1; }
done
# The minimal library itself (the FFI crate with no features at all, no JNI either: the C ABI
# alone), built into a folder of its own: a build with other features would overwrite the .so the
# C and JNI tests load.
cargo build --quiet -p trailblaze-ffi --no-default-features --target-dir "${CHECK_FEATURES_TARGET_DIR:-target/minimal}" "${flags[@]}"
so=${CHECK_FEATURES_TARGET_DIR:-target/minimal}/$profile/libtrailblaze_ffi.so
[ -f "$so" ] || { echo "check-features: $so was not built" >&2; exit 1; }
# Rust symbols keep their crate's name (legacy mangling: `10adb_client5...`, `$LT$ureq..agent`);
# control: the same reading finds the script engine's.
syms=$(nm "$so" 2>/dev/null || true)
bad=$(echo "$syms" | grep -E "[0-9\$]($optional)(\.\.|[0-9])" | head -5 || true)
if [ -n "$bad" ]; then
  echo "check-features: the minimal library holds code of an optional part:" >&2
  echo "$bad" >&2
  exit 1
fi
grep -qE '[0-9$]rquickjs_core(\.\.|[0-9])' <<<"$syms" || { echo "check-features: control failed: no rquickjs symbol in $so" >&2; exit 1; }
# The full set compiles (the CLI's, with every feature).
cargo check --quiet -p trailblaze --features adb,agent,fetch,ios,raster,web
echo "minimal: $(echo "$minimal" | wc -l) crates, $(du -k "$so" | cut -f1) KiB ($profile .so)"
echo "full:    $(crates -p trailblaze-cli | wc -l) crates (the CLI)"
