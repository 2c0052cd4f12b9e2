#!/usr/bin/env bash
# The package as users meet it: build the wheel and the sdist, check their
# metadata with twine, check that the sdist carries the tests and the docs,
# install the wheel into a fresh virtual environment and run the fast test
# tier against the installed package, not the source tree: pytest runs from a
# copy of tests/ (with the README, whose examples are doctests, and the
# examples the tests run) in a temporary folder holding no edgereg/, with
# --import-mode=importlib, and the run first asserts that edgereg is imported
# from the environment's site-packages.
#
#   bash .ci/wheel.sh            # from the repository (CI calls it so)
#   PYTEST_ARGS="-x -k dfop" bash .ci/wheel.sh
#   EDGEREG_WHEEL_BOUNDSCHECK=1 bash .ci/wheel.sh   # kernels with index checks (CI)
#
# Left out of the installed run: the tests marked `install` (they pip-install
# the source tree, which the copy does not hold) and `slow` (CI's later
# stages run them against the source tree).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SECONDS=0
say() { echo "-- [wheel ${SECONDS}s] $*"; }

say "build tools in a virtual environment of their own"
python3 -m venv "$WORK/tools"
"$WORK/tools/bin/python" -m pip install -q build twine

say "python -m build: wheel and sdist (from a clean export of HEAD)"
# HEAD's files only: nothing a developer's tree holds beside them
# (__pycache__, numba caches, results) can reach the sdist.
mkdir "$WORK/src"
git archive HEAD | tar -x -C "$WORK/src"
"$WORK/tools/bin/python" -m build --outdir "$WORK/dist" "$WORK/src" > "$WORK/build.log" 2>&1 \
  || { cat "$WORK/build.log"; exit 1; }
ls -l "$WORK/dist"
WHEEL=$(ls "$WORK"/dist/edgereg-*.whl)
SDIST=$(ls "$WORK"/dist/edgereg-*.tar.gz)

say "twine check --strict"
"$WORK/tools/bin/python" -m twine check --strict "$WHEEL" "$SDIST"

say "the sdist carries the tests, the docs and the changelog; the version is the package's"
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' edgereg/_version.py)
case "$(basename "$WHEEL")" in
  "edgereg-$VERSION-"*) ;;
  *) echo "wheel $(basename "$WHEEL") does not carry edgereg/_version.py's version $VERSION"; exit 1 ;;
esac
tar -tzf "$SDIST" > "$WORK/sdist.txt"
for must in tests/conftest.py tests/test_contracts.py tests/reference.py docs/design/dfop.md \
            CHANGELOG.md README.md LICENSE examples/sensor_loop.py edgereg/data/elec2.npz; do
  grep -q "^edgereg-$VERSION/$must\$" "$WORK/sdist.txt" || { echo "sdist lacks $must"; exit 1; }
done
if grep -qE '__pycache__|\.py[co]$|\.nbi$|\.nbc$' "$WORK/sdist.txt"; then
  echo "sdist carries compiled files"; exit 1
fi
# (the listing goes to a file first: with pipefail, grep -q stopping at its
# first match can kill unzip with SIGPIPE and fail the pipeline on a wheel
# that has the file, as a larger wheel did)
unzip -l "$WHEEL" > "$WORK/wheel.txt"
grep -q "edgereg/data/elec2.npz" "$WORK/wheel.txt" || { echo "wheel lacks bundled data"; exit 1; }

say "a fresh virtual environment with the wheel (and its test extra)"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$WHEEL[test]"

say "the fast tier against the installed package${EDGEREG_WHEEL_BOUNDSCHECK:+ (NUMBA_BOUNDSCHECK=$EDGEREG_WHEEL_BOUNDSCHECK)}"
RUN=$WORK/run
mkdir -p "$RUN"
# With the README, the docs and asv_bench: tests check their tables and
# scripts against the installed package (none of them holds an edgereg/).
cp -r "$WORK/src/tests" "$WORK/src/examples" "$WORK/src/docs" "$WORK/src/asv_bench" \
  "$WORK/src/README.md" "$WORK/src/pyproject.toml" "$RUN/"
# The tests find the shared datasets beside the repository (../shared); so
# they do beside the copy.
[ -d "$ROOT/../shared" ] && ln -s "$(cd "$ROOT/../shared" && pwd)" "$WORK/shared"
cd "$RUN"
# The tests import their helpers (reference, contract_data) as top-level
# modules: tests/ on the path, which holds no edgereg.
export PYTHONPATH="$RUN/tests"
unset NUMBA_DISABLE_JIT NUMBA_BOUNDSCHECK
# EDGEREG_WHEEL_BOUNDSCHECK=1 (CI): every kernel compiled with index checks,
# so one run of the fast tier checks both the installed package and the
# kernels' indexing.
if [ "${EDGEREG_WHEEL_BOUNDSCHECK:-0}" = 1 ]; then export NUMBA_BOUNDSCHECK=1; fi
export NUMBA_CACHE_DIR="$WORK/numba-cache"
"$WORK/venv/bin/python" - <<'PY'
import os, sysconfig
import edgereg
where = os.path.realpath(edgereg.__file__)
site = os.path.realpath(sysconfig.get_paths()["purelib"])
print("edgereg", edgereg.__version__, "imported from", os.path.dirname(where))
assert where.startswith(site + os.sep), f"edgereg imported from {where}, not from {site}"
PY
# The same check inside the pytest process (a conftest of the temp folder's
# own, so that nothing in the repository changes for it).
cat > "$RUN/tests/conftest_installed.py" <<'PY'
import os
import sysconfig

import edgereg

SITE = os.path.realpath(sysconfig.get_paths()["purelib"])
WHERE = os.path.realpath(edgereg.__file__)
assert WHERE.startswith(SITE + os.sep), f"edgereg imported from {WHERE}, not {SITE}"
PY
# shellcheck disable=SC2086
"$WORK/venv/bin/python" -m pytest -p no:cacheprovider -p conftest_installed \
  --import-mode=importlib -n 2 -q -m "not slow and not install" ${PYTEST_ARGS:-}
say "done"
