#!/usr/bin/env bash
# A by-hand proof that the original Trailblaze's playwright-native trails that open its local
# sample pages pass on `--device web` unchanged (tests/e2e/web/original.rs, ignored in CI, which
# has no checkout of the original). The checkout is read, never written: its trails and pages are
# staged into a temporary folder by scripts/stage-original-web.sh.
#
#   scripts/original-web.sh PATH-TO-A-CHECKOUT       (or set TRAILBLAZE_ORIGINAL)
#
# Needs Chromium (Debian: apt-get install chromium). Exits non-zero when a trail fails, and when
# the checkout is missing: it never passes having run nothing.
set -euo pipefail
orig=${1:-${TRAILBLAZE_ORIGINAL:-}}
if [ -z "$orig" ] || [ ! -d "$orig/trails/playwright-native" ]; then
  echo "original-web: give the path of a checkout of the original Trailblaze (one holding trails/playwright-native), or set TRAILBLAZE_ORIGINAL" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
TRAILBLAZE_ORIGINAL=$(cd "$orig" && pwd)
export TRAILBLAZE_ORIGINAL
cd "$here"
# The same features as the suite (`--all-targets`), so nothing is built twice.
cargo build --workspace --all-targets
TRAILBLAZE_E2E_BIN="${CARGO_TARGET_DIR:-$here/target}/debug/trailblaze" \
  cargo test --workspace --test e2e -- --ignored --exact web::original::the_originals_sample_page_trails_pass_unchanged
