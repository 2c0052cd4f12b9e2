"""No double and no fpext in the LLVM IR of MORES' float32-only kernels.

    rm -rf /tmp/ir-cache
    NUMBA_CACHE_DIR=/tmp/ir-cache nice -n 10 python asv_bench/mores_float32_ir.py

(an empty cache: numba does not keep the IR of cached code). Prints, for
``mores32_learn_many`` and ``mores32_learn_one``, the functions of the module and
the lines that name ``double`` or ``fpext``, outside numba's Python wrappers
(``cpython``/``cfunc``: the boxing of the call from Python, not on a device).
"""

from __future__ import annotations

import re

import numpy as np

import edgereg
from edgereg._kernels import mores32 as k

model = edgereg.MORES(4, 3, dtype="float32", arithmetic="float32")
X = np.zeros((2, 4), np.float32)
Y = np.zeros((2, 3), np.float32)
out = np.zeros((2, 3), np.float32)
k.mores32_learn_many(X, Y, out, *model._blocks)
k.mores32_learn_one(X[0], Y[0], out[0], *model._blocks)
for dispatcher in (k.mores32_learn_many, k.mores32_learn_one):
    for ir in dispatcher.inspect_llvm().values():
        functions = re.split(r"\ndefine ", ir)[1:]
        bad = [(f.split("(")[0][:60], line.strip()[:100]) for f in functions
               if not re.search(r"cpython|cfunc", f.split("(")[0])
               for line in f.splitlines() if re.search(r"\bdouble\b|fpext", line)]
        print(f"{dispatcher.__name__}: {len(functions)} functions, "
              f"{len(bad)} lines with double or fpext", bad[:8])
