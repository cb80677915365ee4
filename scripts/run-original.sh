#!/usr/bin/env bash
# The shared part of the by-hand proofs over a checkout of the original Trailblaze
# (scripts/original-web.sh, scripts/original-ios.sh): finds the checkout (PATH, else
# $TRAILBLAZE_ORIGINAL), refuses one without FOLDER, builds as the suite does and runs the ignored
# end-to-end TEST, which stages what it needs and fails when the checkout is missing.
#
#   scripts/run-original.sh FOLDER TEST [PATH-TO-A-CHECKOUT]
set -euo pipefail
folder=${1:?usage: run-original.sh FOLDER TEST [PATH]} test=${2:?usage: run-original.sh FOLDER TEST [PATH]}
orig=${3:-${TRAILBLAZE_ORIGINAL:-}}
if [ -z "$orig" ] || [ ! -d "$orig/$folder" ]; then
  echo "give the path of a checkout of the original Trailblaze (one holding $folder), or set TRAILBLAZE_ORIGINAL" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
TRAILBLAZE_ORIGINAL=$(cd "$orig" && pwd)
export TRAILBLAZE_ORIGINAL
cd "$here"
# The same features as the suite (`--all-targets`), so nothing is built twice.
cargo build --workspace --all-targets
TRAILBLAZE_E2E_BIN="${CARGO_TARGET_DIR:-$here/target}/debug/trailblaze" \
  cargo test --workspace --test e2e -- --ignored --exact --nocapture "$test"
