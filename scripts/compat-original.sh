#!/usr/bin/env bash
# How much of the original's corpus this host reads, measured against a checkout of
# block/trailblaze (never committed here, never written to: it is staged into a temp folder first).
#
#   scripts/compat-original.sh [PATH-TO-A-CHECKOUT]      (default: $TRAILBLAZE_ORIGINAL)
#
# For every workspace anchored by trails/config/trailblaze.yaml: `trailblaze check --json` from
# inside it (trails, waypoints, shortcuts, trailheads, toolset files). The root workspace's
# trails/ios-contacts/ are checked again as the original's CI runs them, against
# examples/ios-contacts/trails/config (TRAILBLAZE_CONFIG_DIR, see its
# .github/pr_run_ios_contacts_trails.sh). The original's framework toolset files (in its modules'
# resources) are staged into a workspace of their own and listed with `tools --toolsets`.
set -euo pipefail
repo=${1:-${TRAILBLAZE_ORIGINAL:-}}
if [ -z "$repo" ] || [ ! -d "$repo" ]; then
  echo "!!! compat-original: NO CHECKOUT OF THE ORIGINAL: pass its path or set TRAILBLAZE_ORIGINAL !!!" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --quiet --manifest-path "$here/Cargo.toml" -p trailblaze-cli
bin="$here/target/debug/trailblaze"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/original"
mkdir -p "$stage" "$work/out"
# Tracked files only when it is a git checkout (no build output, no node_modules).
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$repo" archive HEAD | tar -x -C "$stage"
else
  cp -a "$repo/." "$stage/"
fi
export TRAILBLAZE_CACHE_DIR="$work/cache" NO_COLOR=1
out="$work/out"
n=0
while IFS= read -r anchor; do
  home=$(dirname "$(dirname "$(dirname "$anchor")")")
  n=$((n + 1))
  (cd "$home" && "$bin" check --json >"$out/$n.json" 2>"$out/$n.err" || true)
  rel=${home#"$stage"}
  echo "${rel#/}" | sed 's/^$/./' >"$out/$n.home"
done < <(find "$stage" -path '*/node_modules' -prune -o -path '*/trails/config/trailblaze.yaml' -print | sort)
# The original's CI runs trails/ios-contacts against the ios-contacts example's config.
ci="$stage/.github/pr_run_ios_contacts_trails.sh"
if [ -d "$stage/trails/ios-contacts" ] && grep -q 'TRAILBLAZE_CONFIG_DIR=.*examples/ios-contacts/trails/config' "$ci" 2>/dev/null; then
  (cd "$stage" && TRAILBLAZE_CONFIG_DIR="$stage/examples/ios-contacts/trails/config" \
    "$bin" check --json trails/ios-contacts >"$out/ci-ios-contacts.json" 2>"$out/ci-ios-contacts.err" || true)
else
  echo "warning: the original's CI no longer runs trails/ios-contacts with TRAILBLAZE_CONFIG_DIR=examples/ios-contacts/trails/config; not re-checked" >&2
fi
# The framework's toolset files, staged as one trailmap's toolsets/.
ts="$work/toolsets/trails/config"
mkdir -p "$ts/trailmaps/framework/toolsets"
echo "targets: [framework]" >"$ts/trailblaze.yaml"
printf 'id: framework\ntarget:\n  display_name: the original'"'"'s framework toolsets\n' >"$ts/trailmaps/framework/trailmap.yaml"
staged=0
while IFS= read -r f; do
  module=$(echo "${f#"$stage"/}" | cut -d/ -f1)
  cp "$f" "$ts/trailmaps/framework/toolsets/$module-$(basename "$f")"
  staged=$((staged + 1))
done < <(find "$stage" -path '*/node_modules' -prune -o -path '*/src/*/resources/trails/config/trailmaps/*/toolsets/*.yaml' -print | sort)
(cd "$work/toolsets" && "$bin" tools --toolsets --json >"$out/toolsets.json" 2>"$out/toolsets.err" || true)
python3 - "$out" "$staged" <<'PY'
import json, os, re, sys, collections
out, staged = sys.argv[1], int(sys.argv[2])
total = collections.Counter()
kinds = collections.Counter()
nav_findings = []
def is_nav(f):
    return (f.get("step") or "").split(" ")[0] in ("waypoint", "shortcut", "trailhead")
def load(path, err):
    try:
        return json.load(open(path))
    except (ValueError, OSError):
        print(f"  does not load: {open(err).read().strip().splitlines()[:3] if os.path.exists(err) else '?'}")
        return None
for f in sorted(os.listdir(out), key=lambda x: (len(x), x)):
    if not re.fullmatch(r"\d+\.json", f):
        continue
    stem = f[:-5]
    home = open(os.path.join(out, stem + ".home")).read().strip()
    print(f"{home}:")
    r = load(os.path.join(out, f), os.path.join(out, stem + ".err"))
    if r is None:
        total["workspaces that do not load"] += 1
        continue
    total["workspaces"] += 1
    trail = [x for x in r["findings"] if not is_nav(x)]
    nav = [x for x in r["findings"] if is_nav(x)]
    nav_findings += [(home, x) for x in nav]
    errors = sum(not x["warning"] for x in trail)
    warnings = sum(x["warning"] for x in trail)
    n = r.get("navigation", {})
    total["trails checked"] += r["trails"]
    total["recorded calls"] += r["calls"]
    for k in ("waypoints", "shortcuts", "trailheads", "toolsets"):
        total[f"{k} loaded"] += n.get(k, 0)
    total["tool problems"] += len(r.get("toolProblems", []))
    total["trail findings (errors)"] += errors
    total["trail findings (warnings)"] += warnings
    total["navigation-file findings"] += len(nav)
    print(f"  {r['trails']} trails: {errors} error(s), {warnings} warning(s); "
          f"{n.get('waypoints', 0)} waypoints, {n.get('shortcuts', 0)} shortcuts, {n.get('trailheads', 0)} trailheads, "
          f"{n.get('toolsets', 0)} toolset files loaded; {len(nav)} finding(s) in them")
    for x in trail:
        m = re.search(r"unknown tool `([^`]+)`", x["message"])
        kinds[m.group(1) if m else x["message"][:70]] += 1
    if home == "." and os.path.exists(os.path.join(out, "ci-ios-contacts.json")):
        ci = load(os.path.join(out, "ci-ios-contacts.json"), os.path.join(out, "ci-ios-contacts.err"))
        if ci is not None:
            before = sum(1 for x in trail if "trails/ios-contacts/" in x["file"] and not x["warning"])
            print(f"  trails/ios-contacts as the original's CI runs them (TRAILBLAZE_CONFIG_DIR=examples/ios-contacts/"
                  f"trails/config): {ci['trails']} trails, {len(ci['findings'])} finding(s) (against this workspace's "
                  f"config: {before}); the rest of the workspace: {errors - before} error(s)")
print()
for k, v in total.items():
    print(f"{k}: {v}")
for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"{v:5}  {k}")
if nav_findings:
    print("\nfindings in navigation files (the original reads these leniently; this host is strict):")
    for home, x in nav_findings:
        print(f"  {home}/{x['file']}:{x['line']}:{x['col']} · {x['step']}: {x['message'][:110]}")
print()
try:
    sets = json.load(open(os.path.join(out, "toolsets.json")))
    files = [s for s in sets if s.get("file")]
    print(f"the original's framework toolset files: {len(files)} of {staged} load "
          f"({sum(bool(s['unknown']) for s in files)} list tools this host has not: "
          + ", ".join(sorted({t for s in files for t in s['unknown']})) + ")")
except (ValueError, OSError):
    print(f"the original's framework toolset files do not load: {open(os.path.join(out, 'toolsets.err')).read().strip()[:500]}")
PY
