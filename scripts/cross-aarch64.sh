#!/usr/bin/env bash
# By hand, not in CI: builds trailblaze-ffi for aarch64-unknown-linux-gnu with Debian's cross gcc
# and runs the C test program (runtime/ffi/c-tests/smoke.c) under qemu-aarch64 on the demo.
#   scripts/cross-aarch64.sh            (CARGO_TARGET_DIR defaults to target/cross-aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=aarch64-unknown-linux-gnu
command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null || {
  apt-get update && apt-get install -y --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
}
rustup target list --installed | grep -qx "$TARGET" || rustup target add "$TARGET"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/cross-aarch64}"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
cargo build -p trailblaze-ffi --target "$TARGET"
LIB="$CARGO_TARGET_DIR/$TARGET/debug"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
aarch64-linux-gnu-gcc -std=c11 -Wall -Wextra -Werror -o "$WORK/smoke" runtime/ffi/c-tests/smoke.c \
  -I runtime/ffi/include -L "$LIB" -ltrailblaze_ffi
file "$WORK/smoke" "$LIB/libtrailblaze_ffi.so"
# The demo's secrets file as the project's secrets (NAME=value lines → a JSON object).
SECRETS=$(grep -v '^#' trailmaps/demo/demo.secrets | grep '=' | sed 's/^\([^=]*\)=\(.*\)$/"\1": "\2"/' | paste -sd, -)
CANARY=canary-qemu-5b1c
OPTIONS="{\"cacheDir\": \"$WORK/cache\", \"secrets\": {$SECRETS, \"CANARY\": \"$CANARY\"}}"
QEMU_LD_PREFIX=/usr/aarch64-linux-gnu LD_LIBRARY_PATH="$LIB" \
  qemu-aarch64 "$WORK/smoke" "$PWD/trailmaps" "$OPTIONS" "$WORK/out" "$CANARY" | tee "$WORK/log"
grep -q "ALL PASSED" "$WORK/log"
echo "cross-aarch64: the C test passed on $TARGET under qemu"
