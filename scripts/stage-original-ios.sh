#!/usr/bin/env bash
# Stages the original Trailblaze's iOS Contacts trails as its own CI runs them (never committed):
# examples/ios-contacts/trails/config (the workspace anchor, the `contacts` trailmap and its scripted
# tools) and trails/ios-contacts/*/trail.yaml, at the same relative places under DEST. Its CI sets
# TRAILBLAZE_CONFIG_DIR to that config folder; so does tests/e2e/ios/original.rs.
# The original is read from $TRAILBLAZE_ORIGINAL, else /work/orig. Exit 3 when it is absent.
set -euo pipefail
dest="${1:?usage: stage-original-ios.sh DEST}"
orig="${TRAILBLAZE_ORIGINAL:-/work/orig}"
config="$orig/examples/ios-contacts/trails/config"
if [[ ! -d "$orig/trails/ios-contacts" || ! -f "$config/trailblaze.yaml" ]]; then
  echo "the original Trailblaze is not at $orig (set TRAILBLAZE_ORIGINAL)" >&2
  exit 3
fi
mkdir -p "$dest/examples/ios-contacts/trails" "$dest/trails"
cp -r "$config" "$dest/examples/ios-contacts/trails/"
cp -r "$orig/trails/ios-contacts" "$dest/trails/"
ls "$dest/trails/ios-contacts"
