#!/usr/bin/env bash
# Mutation fuzzing of the trail reader, the transpile guard, the trailmap loader and what a device
# sends (uiautomator XML, JSON view trees, shown as snapshots), for as long as asked (default an hour
# per target), in a release build. CI runs the same targets smoke-sized as part of ./test.sh.
#   tests/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
export TRAILBLAZE_FUZZ_SECONDS="${1:-3600}"
cargo test --release -p trailblaze-e2e --test e2e fuzz:: -- --nocapture --test-threads 2
