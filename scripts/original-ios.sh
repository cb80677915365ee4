#!/usr/bin/env bash
# A by-hand proof: the original Trailblaze's `trails/ios-contacts` trails, run as its own CI runs
# them (TRAILBLAZE_CONFIG_DIR=examples/ios-contacts/trails/config, `--device ios`), against the fake
# WebDriverAgent serving the Contacts-like app of tests/fake_wda (tests/e2e/ios/original.rs, ignored
# in CI, which has no checkout of the original). The checkout is read, never written: its files are
# staged into a temporary folder by scripts/stage-original-ios.sh. Prints each trail's outcome and
# the count; exits non-zero when a recorded trail that is not skipped fails, or the checkout is missing.
#
#   scripts/original-ios.sh PATH-TO-A-CHECKOUT       (or set TRAILBLAZE_ORIGINAL)
set -euo pipefail
exec "$(dirname "$0")/run-original.sh" trails/ios-contacts ios::original::the_originals_ios_contacts_trails_run_on_the_fake "$@"
