#!/usr/bin/env bash
# Stages the original Trailblaze's playwright-native trails and the local sample pages they open
# into DEST (never committed): trails/config/trailblaze.yaml (the workspace anchor),
# trails/playwright-native/*/trail.yaml and examples/playwright-native/sample-app/*.html, at the
# same relative places, so the trails' relative URLs (../../../examples/...) resolve unchanged.
# The original is read from $TRAILBLAZE_ORIGINAL, else /work/orig. Exit 3 when it is absent.
# scripts/original-web.sh stages it this way and runs the trails (tests/e2e/web/original.rs).
set -euo pipefail
dest="${1:?usage: stage-original-web.sh DEST}"
orig="${TRAILBLAZE_ORIGINAL:-/work/orig}"
if [[ ! -d "$orig/trails/playwright-native" || ! -d "$orig/examples/playwright-native/sample-app" ]]; then
  echo "the original Trailblaze is not at $orig (set TRAILBLAZE_ORIGINAL)" >&2
  exit 3
fi
mkdir -p "$dest/trails/config" "$dest/examples/playwright-native"
cp "$orig/trails/config/trailblaze.yaml" "$dest/trails/config/"
cp -r "$orig/trails/playwright-native" "$dest/trails/"
cp -r "$orig/examples/playwright-native/sample-app" "$dest/examples/playwright-native/"
# Only the trails that open the local sample pages: the others need the network.
for t in "$dest"/trails/playwright-native/*/; do
  if ! grep -q "sample-app/" "$t/trail.yaml" 2>/dev/null; then
    rm -rf "$t"
  fi
done
rm -f "$dest/trails/playwright-native/benchmark.sh"
ls "$dest/trails/playwright-native"
