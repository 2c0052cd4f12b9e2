"""How close the float64 auto bank is on a board whose libm ``exp`` is not the JIT's.

    python docs/design/scripts/bank_exp_across_targets.py [--rows 300] [--target cortex-m4f]

The float64 ``forgetting="auto"`` bank calls libm's ``exp`` (its weights): the
JIT's is glibc's (LLVM's intrinsic, resolved in numba's process), a board's is
its C library's (newlib on the Cortex-M4F). This exports the bank (d = 6,
``on_invalid="skip"``) for the target, runs learn_one over the export tests'
hostile stream on qemu, prints every prediction's bits through semihosting,
and compares them with the JIT's: rows equal, the first row that differs and
the largest difference, absolute and relative to the prediction. It also
calls the board's ``exp`` on the arguments the weights take (0 down to -40)
and counts how many differ from glibc's (Python's ``math.exp``) and by how
many units in the last place. Needs the toolchains of ``.ci/export-tools.sh``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import export_support as S  # noqa: E402

import edgereg  # noqa: E402
from edgereg.export import export_batch  # noqa: E402

#: The arguments of exp in the weights' range (a loss difference times the rate).
ARGS = np.concatenate([-np.geomspace(1e-8, 40.0, 300), np.linspace(-40.0, 0.0, 101)])


def source(prefix: str, X: np.ndarray, Y: np.ndarray) -> str:
    n, d = X.shape
    return f"""#include <stdint.h>
#include <string.h>
#include <math.h>
#include "{prefix}.h"
void semihost_write(const char *);
{S._hex_array("Xbits", X, "uint64_t", "uint64")}{S._hex_array("Ybits", Y, "uint64_t", "uint64")}
{S._hex_array("Abits", ARGS, "uint64_t", "uint64")}
static {prefix}_state s;
static void put_hex(const char *tag, uint64_t v) {{
    char line[32], *p = line;
    while (*tag) *p++ = *tag++;
    for (int k = 60; k >= 0; k -= 4) *p++ = "0123456789abcdef"[(v >> k) & 15u];
    *p++ = '\\n'; *p = 0;
    semihost_write(line);
}}
int main(void) {{
    double x[{d}], y, yhat, a;
    uint64_t bits;
    {prefix}_init(&s);
    for (int t = 0; t < {n}; t++) {{
        memcpy(x, Xbits + (size_t)t * {d}, sizeof x);
        memcpy(&y, Ybits + t, sizeof y);
        {prefix}_learn_one(&s, x, y, &yhat);
        memcpy(&bits, &yhat, sizeof bits);
        put_hex("P ", bits);
    }}
    for (int k = 0; k < {ARGS.size}; k++) {{
        memcpy(&a, Abits + k, sizeof a);
        a = exp(a);
        memcpy(&bits, &a, sizeof bits);
        put_hex("E ", bits);
    }}
    return 0;
}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--target", default="cortex-m4f", choices=sorted(S.BARE_TARGETS))
    args = parser.parse_args()
    d = 6
    X, Y, _ = S.stream(d, args.rows)
    model = edgereg.DFOP(d, "auto", on_invalid="skip")
    triple, cpu = S.BARE_TARGETS[args.target][:2]
    out = Path(tempfile.mkdtemp(prefix="edgereg-bank-exp-"))
    info = export_batch([dict(model=model, target=triple, cpu=cpu,
                              abi=S.TARGET_ABI.get(args.target, ""), out=str(out))])[0]
    text, _ = S.build_and_run_bare(out, info, source(info["prefix"], X, Y), args.target)
    lines = text.splitlines()
    board = np.array([int(v.split()[1], 16) for v in lines if v.startswith("P ")],
                     dtype=np.uint64).view(np.float64)
    board_exp = np.array([int(v.split()[1], 16) for v in lines if v.startswith("E ")],
                         dtype=np.uint64).view(np.float64)
    fresh = edgereg.DFOP(d, "auto", on_invalid="skip")
    jit = np.array([fresh.learn_one(X[t], Y[t]) for t in range(args.rows)])
    same = (board.view(np.uint64) == jit.view(np.uint64)) | (np.isnan(board) & np.isnan(jit))
    ok = np.isfinite(board) & np.isfinite(jit)
    diff = np.abs(board - jit)[ok]
    rel = (diff / np.maximum(np.abs(jit[ok]), 1e-300))
    first = int(np.flatnonzero(~same)[0]) if (~same).any() else -1
    print(f"{args.target}: predictions equal to the JIT's on {int(same.sum())} of {args.rows} "
          f"rows; first differing row {first}; largest difference {diff.max():.3g} "
          f"(relative {rel.max():.3g}; median over differing rows "
          f"{np.median(rel[~same[ok]]) if (~same[ok]).any() else 0:.3g})")
    glibc = np.array([math.exp(a) for a in ARGS])
    ulps = np.abs(board_exp.view(np.int64) - glibc.view(np.int64))
    print(f"exp on {ARGS.size} arguments in [-40, 0]: {int((ulps != 0).sum())} differ from "
          f"glibc's, by at most {int(ulps.max())} ulp")


if __name__ == "__main__":
    main()
