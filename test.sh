#!/usr/bin/env bash
# The whole test suite: Rust (unit + end-to-end) and the TypeScript SDK's own tsc fixtures.
set -euo pipefail
cd "$(dirname "$0")"
# The pinned TypeScript compiler, for the SDK's tests and `check --tsc`; installed once.
[ -x sdk-ts/node_modules/.bin/tsc ] || npm ci --prefix sdk-ts --no-audit --no-fund
cargo test --workspace --all-targets
npm test --prefix sdk-ts
