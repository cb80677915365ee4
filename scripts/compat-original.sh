#!/usr/bin/env bash
# How much of the original's corpus this host reads, measured by hand against a checkout of
# block/trailblaze (never committed here): for every workspace anchored by
# trails/config/trailblaze.yaml, `trailblaze check --json` from inside it, then the totals.
#   scripts/compat-original.sh /path/to/block-trailblaze-checkout
set -euo pipefail
repo=${1:?usage: $0 PATH-TO-A-CHECKOUT-OF-block/trailblaze}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --quiet --manifest-path "$here/Cargo.toml" -p trailblaze-cli
bin="$here/target/debug/trailblaze"
out=$(mktemp -d)
n=0
while IFS= read -r anchor; do
  home=$(dirname "$(dirname "$(dirname "$anchor")")")
  n=$((n + 1))
  (cd "$home" && "$bin" check --json >"$out/$n.json" 2>"$out/$n.err" || true)
  echo "$home" >"$out/$n.home"
done < <(find "$repo" -path '*/node_modules' -prune -o -path '*/trails/config/trailblaze.yaml' -print | sort)
python3 - "$out" "$repo" <<'PY'
import json, os, re, sys, collections
out, repo = sys.argv[1], sys.argv[2]
total = collections.Counter()
kinds = collections.Counter()
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    stem = f[:-5]
    home = open(os.path.join(out, stem + ".home")).read().strip()
    text = open(os.path.join(out, f)).read()
    err = open(os.path.join(out, stem + ".err")).read()
    try:
        r = json.loads(text)
    except ValueError:
        print(f"{os.path.relpath(home, repo)}: does not load: {err.strip().splitlines()[:3]}")
        total["workspaces that do not load"] += 1
        continue
    total["workspaces"] += 1
    total["trails checked"] += r["trails"]
    total["recorded calls"] += r["calls"]
    total["notices (trails skipped by the type gate)"] += sum("not type-checked" in n for n in r["notices"])
    for fi in r["findings"]:
        m = fi["message"]
        kind = ("unknown tool" if "unknown tool" in m else "argument" if fi.get("tool") else "parse/other")
        kinds[kind] += 1
        name = re.search(r"unknown tool `([^`]+)`", m)
        kinds[f"  {kind}: {name.group(1) if name else m[:70]}"] += 1
    total["tool problems"] += len(r.get("toolProblems", []))
    print(f"{os.path.relpath(home, repo)}: {r['trails']} trails, {len(r['findings'])} findings")
print()
for k, v in total.items():
    print(f"{k}: {v}")
for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"{v:5}  {k}")
PY
