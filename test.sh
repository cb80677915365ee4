#!/usr/bin/env bash
# The whole test suite: Rust (unit + end-to-end) and the TypeScript SDK's own tsc fixtures.
set -euo pipefail
cd "$(dirname "$0")"
# The pinned TypeScript compiler, for the SDK's tests and `check --tsc`; installed once.
[ -x sdk-ts/node_modules/.bin/tsc ] || npm ci --prefix sdk-ts --no-audit --no-fund
[ -x /usr/bin/chromium ] || { apt-get update && apt-get install -y --no-install-recommends chromium; } # report_browser test
# The official MCP TypeScript SDK client, for tests/e2e/mcp.rs.
[ -d tests/mcp-client/node_modules ] || npm ci --prefix tests/mcp-client --no-audit --no-fund
# playwright-core driving the system's Chromium, for tests/e2e/trace_viewer.rs: report.html's trace viewer.
[ -d tests/viewer-client/node_modules ] || npm ci --prefix tests/viewer-client --no-audit --no-fund
# A real JSON Schema validator (ajv), for tests/e2e/schemas.rs: the editor schemas against the gates.
[ -d tests/schema-validator/node_modules ] || npm ci --prefix tests/schema-validator --no-audit --no-fund
# npm's har-validator (the HAR 1.2 JSON schemas), for tests/e2e/web_trace.rs: a web trace's requests.
[ -d tests/har-validator/node_modules ] || npm ci --prefix tests/har-validator --no-audit --no-fund
# Appium's Python client, for tests/e2e/fake_wda.rs: the fake WebDriverAgent checked against a real client.
tests/wda-client/.venv/bin/python -c 'import appium' 2>/dev/null || { python3 -m venv tests/wda-client/.venv && tests/wda-client/.venv/bin/pip install -q -r tests/wda-client/requirements.txt; }
command -v adb >/dev/null || (apt-get update && apt-get install -y --no-install-recommends adb) # the adb tests check the fake device against the real client
command -v javac >/dev/null || (apt-get update && apt-get install -y --no-install-recommends openjdk-17-jdk-headless) # runtime/ffi: the JNI test runs on a real JVM
command -v valgrind >/dev/null || (apt-get update && apt-get install -y --no-install-recommends valgrind) # runtime/ffi: the C test runs under memcheck
# The binary the CLI tests run is the one this build makes (the CLI's benches need it, so
# `cargo test --workspace --all-targets` builds it with the workspace's features before any test
# starts). Building it apart with `-p trailblaze-cli` unifies features differently (syn, tokio,
# zerocopy) and so compiled the whole graph twice: 14 of CI's minutes.
TRAILBLAZE_E2E_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/trailblaze" \
  cargo test --workspace --all-targets --no-fail-fast
npm test --prefix sdk-ts
# The library's API docs build without a broken link or a private item named in public docs.
RUSTDOCFLAGS="-D warnings" cargo doc -p trailblaze --no-deps
# The feature matrix: the on-device library with no optional part (no adb or HTTP client) and the
# CLI's with all. Last: its minimal .so replaces the one the C and JNI tests loaded.
CHECK_FEATURES_TARGET_DIR=target scripts/check-features.sh
