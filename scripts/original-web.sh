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
exec "$(dirname "$0")/run-original.sh" trails/playwright-native web::original::the_originals_sample_page_trails_pass_unchanged "$@"
