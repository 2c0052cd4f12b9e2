"""Interleaved best-of-N timing of DFOP between two installed environments.

    python docs/design/dfop_interleaved_timing.py ENV_A ENV_B [rounds]

ENV_A, ENV_B: virtual environments holding two commits (asv_bench/compare.sh
builds them in /tmp/edgereg-compare/env-<commit>). Each round runs one
process per environment (alternating A, B); each process times learn_many on
10^5 rows (10^4 at d = 200; best of 5 repeats) and learn_one from Python.
Best over the rounds, so the noise of a shared 2-core machine falls on both.
"""
import json, subprocess, sys
CODE = r'''
import json, time, numpy as np, edgereg
rng = np.random.default_rng(0)
out = {}
for d, dtype, keep in [(10, "float64", True), (10, "float32", True), (50, "float64", True), (200, "float64", True), (10, "float64", False)]:
    n = 100_000 if d <= 50 else 10_000
    X = rng.normal(size=(n, d)).astype(dtype); y = X[:, 0] + 0.1 * rng.normal(size=n)
    m = edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep); m.learn_many(X[:10], y[:10])
    best = 1e9
    for _ in range(5):
        m = edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep)
        t = time.perf_counter(); m.learn_many(X, y); best = min(best, time.perf_counter() - t)
    out[f"learn_many d={d} {dtype} keep_prior={keep}"] = n / best
m = edgereg.DFOP(10, 0.01); X = rng.normal(size=(20000, 10)); y = X[:, 0]
m.learn_one(X[0], y[0]); best = 1e9
for _ in range(5):
    t = time.perf_counter()
    for i in range(20000): m.learn_one(X[i], y[i])
    best = min(best, time.perf_counter() - t)
out["learn_one d=10"] = 20000 / best
print(json.dumps(out))
'''
a, b = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
best = {a: {}, b: {}}
for r in range(rounds):
    for env in (a, b):
        res = json.loads(subprocess.run([f"{env}/bin/python", "-c", CODE], capture_output=True, text=True, cwd="/tmp", check=True).stdout)
        for k, v in res.items():
            best[env][k] = max(best[env].get(k, 0.0), v)
print(f"| case | {a.split('env-')[-1][:8]} (samples/s) | {b.split('env-')[-1][:8]} | ratio |")
print("|---|---:|---:|---:|")
for k in best[a]:
    print(f"| {k} | {best[a][k]:,.0f} | {best[b][k]:,.0f} | {best[b][k] / best[a][k]:.3f} |")
