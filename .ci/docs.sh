#!/usr/bin/env bash
# The documentation site: install the docs extra, build the site with Sphinx
# (warnings fail the build), and run the docstrings' examples as doctests.
# Run from anywhere inside the clone, in the virtual environment to use:
#   bash .ci/docs.sh [OUTPUT_DIR]          (default: docs/_build/html)
# EDGEREG_DOCS_INSTALL=0 skips the pip step (an environment that has the extra).
set -euo pipefail
exec 2>&1
cd "$(dirname "$0")/.."
OUT=${1:-docs/_build/html}
SECONDS=0
if [ "${EDGEREG_DOCS_INSTALL:-1}" != 0 ]; then
  python -m pip install -q -e ".[docs]"
  echo "docs: extra installed ($SECONDS s)"
fi
# -E: read every source again; -W --keep-going: every warning is reported, and any fails.
python -m sphinx -E -q -W --keep-going -b html docs "$OUT"
echo "docs: site built in $OUT ($SECONDS s)"
# The docstrings' examples (every public class has one), against this tree.
PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} python -m pytest -q -p no:cacheprovider \
  --doctest-modules edgereg
echo "docs: done in $SECONDS s"
