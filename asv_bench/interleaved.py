"""Interleaved best-of-N timing of every model between two installed environments.

    python asv_bench/interleaved.py ENV_A ENV_B [rounds]

ENV_A, ENV_B: virtual environments holding two commits (asv_bench/compare.sh
builds them in /tmp/edgereg-compare/env-<commit>; an editable install of the
working tree works too). Each round runs one process per environment
(alternating A, B); each process times every case (best of 3 repeats) after
compiling it. Best over the rounds, so the noise of a shared 2-core machine
falls on both. asv's two separate runs on this machine scatter by 20-30% on
unchanged code (the peers' rows move too), which is why a claim of "no
change" within a few percent is measured here.
"""

import json
import subprocess
import sys

# The cases, written once: ``case(name, fn, n)`` is given a call that handles
# n samples; ``many`` and ``one`` make the usual two. Run by this script in
# each environment's own process, and by same_process.py with ``edgereg``
# bound to either of two commits' packages in one process. Only names every
# commit has (the script runs against old commits). A call may run after the
# case list is read (same_process.py): loop variables are bound as defaults.
CASES = r'''
def many(name, make, X, Y):
    case(name, lambda: make().learn_many(X, Y), len(X))

def one(name, make, X, Y, n=5000):
    m = make()
    case(name, lambda: [m.learn_one(X[i], Y[i]) for i in range(n)], n)

for d in (10, 50):
    X = rng.normal(size=(50_000, d)); y = X[:, 0] + 0.1 * rng.normal(size=len(X))
    many(f"DFOP learn_many d={d}", lambda d=d: edgereg.DFOP(d, 0.01), X, y)
# float32 rows for a float32 model (no conversion per call): its own kernels' speed
many("DFOP learn_many d=10 float32", lambda: edgereg.DFOP(10, 0.01, dtype="float32"),
     X[:, :10].astype(np.float32), y)
X = rng.normal(size=(50_000, 10)); y = X[:, 0].copy()
one("DFOP learn_one d=10", lambda: edgereg.DFOP(10, 0.01), X, y, n=50_000)
X = rng.normal(size=(20_000, 10)); y = np.where(X[:, 0] > 0, 1.0, -1.0)
norma = lambda: edgereg.NORMAClassifier(10, budget=200)
many("NORMAClassifier learn_many d=10 budget=200", norma, X, y)
one("NORMAClassifier learn_one d=10 budget=200", norma, X, y, n=20_000)
X = rng.normal(size=(20_000, 10)); Y = X @ rng.normal(size=(10, 3))
many("MORES learn_many d=10 m=3", lambda: edgereg.MORES(10, 3), X, Y)
many("SOMOR learn_many d=10 m=3", lambda: edgereg.SOMOR(10, 3), X, Y)
many("PARegressor learn_many d=10 m=3", lambda: edgereg.PARegressor(10, 3), X, Y)
one("SOMOR learn_one d=10 m=3", lambda: edgereg.SOMOR(10, 3), X, Y, n=20_000)
def sampler(d):  # the demo-classifier test exists in every commit
    try:
        return edgereg.SelectiveSampler(d, switch_test="spec")
    except TypeError:
        return edgereg.SelectiveSampler(d)

for d in (10, 50):
    X, yy, _ = streams.switch_stream(20_000, d, switch_at=[10_000], distance=2.0, seed=1)
    many(f"SelectiveSampler learn_many d={d}", lambda d=d: sampler(d), X, yy)
one("SelectiveSampler learn_one d=10", lambda: sampler(10),
    *streams.switch_stream(20_000, 10, switch_at=[10_000], distance=2.0, seed=1)[:2], n=20_000)
X = np.zeros((20_000, 1000)); idx = rng.integers(0, 1000, size=(20_000, 10))
np.put_along_axis(X, idx, 1.0, axis=1); y = X[:, :5].sum(axis=1)
many("SparseDFOP learn_many D=1000 nnz=10 d=100", lambda: edgereg.SparseDFOP(1000, 100), X, y)
K = 100; X = rng.normal(size=(K, 2_000, 10)); Y = X[:, :, 0].copy()
case("Fleet learn_many K=100 d=10", lambda: edgereg.Fleet(K, 10).learn_many(X, Y), K * 2_000)
fleet = edgereg.Fleet(K, 10)
Xt = np.ascontiguousarray(X[:, :200].transpose(1, 0, 2))
Yt = np.ascontiguousarray(Y[:, :200].T)
case("Fleet learn_one K=100 d=10",
     lambda: [fleet.learn_one(Xt[t], Yt[t]) for t in range(200)], K * 200)
D = 1000; Xs = rng.normal(size=(2000, D)) * (rng.random((2000, D)) < 0.01)
sparse = edgereg.SparseDFOP(D, 100)
case("SparseDFOP learn_one D=1000 d=100",
     lambda: [sparse.learn_one(Xs[i], 1.0) for i in range(2000)], 2000)
'''

CODE = r'''
import json, time, numpy as np, edgereg
from edgereg import streams
rng = np.random.default_rng(0)
out = {}

def case(name, fn, n, repeat=3):
    fn()
    t = 1e9
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); t = min(t, time.perf_counter() - t0)
    out[name] = n / t
''' + CASES + r'''
print(json.dumps(out))
'''

def main() -> None:
    a, b = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    best = {a: {}, b: {}}
    for _ in range(rounds):
        for env in (a, b):
            run = subprocess.run([f"{env}/bin/python", "-c", CODE], capture_output=True, text=True,
                                 cwd="/tmp", check=True)
            for k, v in json.loads(run.stdout.strip().splitlines()[-1]).items():
                best[env][k] = max(best[env].get(k, 0.0), v)
    name = lambda env: env.rstrip("/").split("env-")[-1][:8]  # noqa: E731
    print(f"| case | {name(a)} (samples/s) | {name(b)} | ratio |")
    print("|---|---:|---:|---:|")
    for k in best[a]:
        print(f"| {k} | {best[a][k]:,.0f} | {best[b][k]:,.0f} | {best[b][k] / best[a][k]:.3f} |")


if __name__ == "__main__":
    main()
