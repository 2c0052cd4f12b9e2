#!/usr/bin/env bash
# Two commits side by side in one asv session, offline:
#
#   asv_bench/compare.sh BASE HEAD [asv run options, e.g. -b "bench_dfop.LearnMany"]
#
# Each commit is checked out in a temporary worktree and installed
# (non-editable, with the bench extra) in its own virtual environment; the
# benchmarks of the current checkout then run against each install through
# asv's existing-environment mode, alternating BASE, HEAD, BASE, HEAD
# (--append-samples) so that a slow drift of the machine falls on both, and
# `asv compare` prints the ratios (for the track_* benchmarks, in samples/s,
# a ratio above 1 is faster although asv files it under "got worse"). asv's own `continuous` cannot do this
# offline (it builds environments from the network) nor with existing
# environments (it refuses a range there). Environments are kept in
# $EDGEREG_COMPARE_DIR (default /tmp/edgereg-compare) and reused per commit.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,14p "$0"; exit 2; }
cd "$(dirname "$0")"
REPO=$(git rev-parse --show-toplevel)
BASE=$(git rev-parse "$1")
HEAD=$(git rev-parse "$2")
shift 2
CACHE=${EDGEREG_COMPARE_DIR:-/tmp/edgereg-compare}
mkdir -p "$CACHE"

python_for() {  # the python of a venv holding commit $1 (built once)
  local commit=$1 env="$CACHE/env-${1:0:12}"
  if [ ! -x "$env/bin/python" ] || [ ! -f "$env/.complete" ]; then
    rm -rf "$env" "$CACHE/src-${commit:0:12}"
    git -C "$REPO" worktree add -q --detach "$CACHE/src-${commit:0:12}" "$commit"
    python3 -m venv "$env"
    "$env/bin/python" -m pip install -q "$CACHE/src-${commit:0:12}[bench]" 2>&1 | grep -v '^WARNING: Location' || true
    git -C "$REPO" worktree remove --force "$CACHE/src-${commit:0:12}"
    "$env/bin/python" -c "import edgereg" && touch "$env/.complete"
  fi
  echo "$env/bin/python"
}
# (the environments hold asv too: the bench extra)

PY_BASE=$(python_for "$BASE")
PY_HEAD=$(python_for "$HEAD")
# A configuration of this comparison's own: fresh results, nothing appended
# to earlier runs (asv_bench/results is left alone).
CONF="$CACHE/asv.conf.json"
"$PY_HEAD" - "$PWD" "$CACHE/results-${BASE:0:8}-${HEAD:0:8}" "$CONF" <<'PY'
import json, re, shutil, sys
here, results, out = sys.argv[1:]
text = open(f"{here}/asv.conf.json").read()
conf = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
conf.update(repo=f"{here}/..", benchmark_dir=f"{here}/benchmarks", results_dir=results,
             html_dir=f"{results}-html", env_dir=f"{results}-env")
shutil.rmtree(results, ignore_errors=True)
json.dump(conf, open(out, "w"), indent=1)
PY
"$PY_HEAD" -m asv --config "$CONF" machine --yes > /dev/null
# Compile every kernel once per environment before timing (numba's cache).
for py in "$PY_BASE" "$PY_HEAD"; do
  (cd /tmp && "$py" -c "import edgereg, numpy as np; m = edgereg.DFOP(n_features=3); m.learn_many(np.ones((4, 3)), np.ones(4))")
done
# asv names a result by its environment's path: both commits run through
# one path, a link switched between them, so that `asv compare` pairs them.
LINK="$CACHE/current"
for round in 1 2; do
  for commit in "$BASE" "$HEAD"; do
    ln -sfn "$CACHE/env-${commit:0:12}" "$LINK"
    echo "== round $round: ${commit:0:10}"
    "$PY_HEAD" -m asv --config "$CONF" run -E "existing:$LINK/bin/python" --set-commit-hash "$commit" --append-samples \
      --show-stderr "$@" | grep -E "failed|Traceback" || true
  done
done
"$PY_HEAD" -m asv --config "$CONF" compare --split --factor 1.02 "$BASE" "$HEAD"
