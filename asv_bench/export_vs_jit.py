"""Exported host C code against the JIT, samples/s, in one process (beside asv).

    python asv_bench/export_vs_jit.py [rounds [numba_opt [d ...]]]

``numba_opt`` defaults to what ``edgereg export`` uses for the host (3);
0 shows the IR that other targets get.

Exports float64 DFOP (forgetting 0.01) at d = 10 and 50 for the host as a
shared library (``shared=True``), then times learn_many over the same stream
with the JIT model and with the exported code through ``edgereg.native``
(one ctypes call per block: the call's cost is negligible against 20,000
rows), interleaved, best of ``rounds``; the ratio C / JIT is what the
exported code keeps of the JIT's speed. Then, in a fresh process, the time
from ``import edgereg.native`` (numpy imported) to the first learn_one done,
and whether numba was imported.
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import edgereg
from edgereg.export import export_batch
from edgereg.native import NativeModel

COLD = r"""
import sys, time
import numpy as np
t = time.perf_counter()
import edgereg.native
m = edgereg.native.NativeModel(sys.argv[1])
m.learn_one(np.ones(m.n_features), 1.0)
print(f"{(time.perf_counter() - t) * 1e3:.1f} ms, numba imported: {'numba' in sys.modules}")
"""


def main(rounds: int = 5, numba_opt: int | None = None, dims: tuple = (10, 50)) -> None:
    n = 20000
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [dict(model=edgereg.DFOP(d, 0.01), out=str(Path(tmp) / f"d{d}"),
                     name=f"bench_dfop_d{d}", shared=True) for d in dims]
        infos = export_batch(jobs, numba_opt=numba_opt)
        for d, info in zip(dims, infos, strict=False):
            rng = np.random.default_rng(d)
            X = rng.normal(size=(n, d))
            Y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
            jit, native = edgereg.DFOP(d, 0.01), NativeModel(info["shared"])
            assert np.array_equal(jit.learn_many(X[:500], Y[:500]),
                                  native.learn_many(X[:500], Y[:500]))  # warm, and equal
            best = {"jit": np.inf, "c": np.inf}
            for _ in range(rounds):
                for kind, model in (("jit", jit), ("c", native)):
                    t = time.perf_counter()
                    model.learn_many(X, Y)
                    best[kind] = min(best[kind], time.perf_counter() - t)
            print(f"d = {d}: JIT {n / best['jit']:,.0f} samples/s, exported C "
                  f"{n / best['c']:,.0f} samples/s, C / JIT = {best['jit'] / best['c']:.3f}")
        cold = subprocess.run([sys.executable, "-c", COLD, infos[0]["shared"]],
                              capture_output=True, text=True, check=True)
        print(f"edgereg.native cold start (import to first learn_one, d = 10): "
              f"{cold.stdout.strip()}")


if __name__ == "__main__":
    # python asv_bench/export_vs_jit.py ROUNDS NUMBA_OPT D...
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5,
         int(sys.argv[2]) if len(sys.argv) > 2 else None,  # None: the export's default
         tuple(int(d) for d in sys.argv[3:]) or (10, 50))
