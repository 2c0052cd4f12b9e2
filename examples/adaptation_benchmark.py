"""Adaptation benchmark: switch tests, drift alarms (and, when present, automatic forgetting).

Prints the tables of docs/results.md ("Switches and drift alarms"):

switch  SelectiveSampler, default test ("compare") against today's ("eprocess")
        and detection off:
        S1 false switches on stationary ``switch_stream`` runs (d = 3, 5, 10);
        S2 sign flips at tau: found within 1,500 rounds, median and largest delay;
        S3 stationary streams the linear model cannot fit (threshold and XOR
           labels, elec2 and weather with rows shuffled): runs with a switch;
        S4 every classification stream ``edgereg.datasets`` loads, features
           scaled to [0, 1] + bias (first 50,000 rows) and own features + bias
           (whole stream): accuracy, switches, delays on usenet1/2 and SEA.
alarm   DriftAlarm, default ("compare", no noise scale nor bound given) against
        "eprocess" (given both):
        A1 stationary streams (fixed nonlinear target, t(2) noise,
           heteroscedastic noise): runs with an alarm;
        A2 a jump in a synthetic stream: delay;
        A3 debutanizer and both SRU targets: alarm counts;
        A4 time against DFOP alone (same process; asv_bench/benchmarks/bench_drift.py
           has the benchmark).
forgetting  ``examples/adaptation_forgetting.py``'s ``main`` (when that file exists).

Usage::

    python examples/adaptation_benchmark.py --part switch|alarm|forgetting|all \\
        [--root DIR] [--seeds 200] [--n 100000] [--misfit-runs 20] [--sections S1,S2,...]

``--root`` is a folder holding the original files
(``root/<dataset>/<files>``), by default ``$EDGEREG_DATA_ROOT``; without
either, the sets edgereg does not bundle are read from its data folder
(``edgereg data fetch``), and a missing one is named and skipped. All runs use ``process_many`` /
``learn_many`` (one compiled call per stream).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

from edgereg import DFOP, DriftAlarm, SelectiveSampler
from edgereg.datasets import BUNDLED, load
from edgereg.streams import switch_stream

CLASSIFICATION = ["elec2", "weather", "sea", *[f"hyperplane{k}" for k in range(1, 10)], "chess",
                  "luxembourg", "usenet1", "usenet2", "powersupply", "1CDT", "2CDT", "1CHT",
                  "2CHT", "1CSurr", "UG_2C_2D", "MG_2C_2D", "GEARS_2C_2D"]
#: Known change points: (first, period) of the concept changes.
KNOWN = {"usenet1": 300, "usenet2": 300, "sea": 12_500}
SWITCH_TESTS = ("compare", "eprocess")


# ------------------------------------------------------------------ helpers
def _labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    return np.where(y == np.unique(y)[-1], 1.0, -1.0)


def load_xy(name: str, root: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows of a classification stream (labels in {-1, +1}); None when unavailable
    (``root`` None: edgereg's data folder, filled by ``edgereg data fetch``)."""
    kw = {"binarize": True} if name == "powersupply" else {}
    try:
        data = load(name, root=root if name not in BUNDLED else None, **kw)
    except Exception as exc:  # a missing file: say so, keep going
        print(f"  ({name}: {exc})")
        return None
    return np.asarray(data.X, dtype=np.float64), _labels(data.y)


def scaled(X: np.ndarray) -> np.ndarray:
    """Features min-max scaled to [0, 1] (over the rows given), plus a bias column."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.column_stack([(X - lo) / span, np.ones(len(X))])


def own(X: np.ndarray) -> np.ndarray:
    return np.column_stack([X, np.ones(len(X))])


def first_after(switches: np.ndarray, tau: int, until: int) -> int | None:
    after = switches[(switches >= tau) & (switches < until)]
    return int(after[0] - tau) if after.size else None


def sampler(d: int, test: str | None) -> SelectiveSampler:
    if test is None:
        return SelectiveSampler(d, detect_switch=False)
    return SelectiveSampler(d, switch_test=test)


def run_sampler(X: np.ndarray, y: np.ndarray, test: str | None) -> tuple[float, np.ndarray]:
    m = sampler(X.shape[1], test)
    p, _ = m.process_many(X, y)
    return float(np.mean(p == y)), m.switches_ if m.n_switches_ <= 64 else np.full(
        m.n_switches_, -1)


# ------------------------------------------------------------------ switch
def s1_false_switches(n: int, seeds: int) -> None:
    print(f"\nS1. stationary switch_stream, {n:,} rounds, {seeds} seeds, delta = 0.1: "
          "runs with a false switch (rate)")
    print(f"{'d':>3} " + " ".join(f"{t:>16}" for t in SWITCH_TESTS) + f" {'s (compare)':>12}")
    for d in (3, 5, 10):
        row = []
        t0 = time.perf_counter()
        for test in SWITCH_TESTS:
            hits = 0
            for seed in range(seeds):
                X, y, _, _ = switch_stream(n, d, switch_at=n, seed=1000 + seed)
                m = SelectiveSampler(d, switch_test=test)
                m.process_many(X, y)
                hits += m.n_switches_ > 0
            row.append(f"{hits}/{seeds} ({hits / seeds:.3f})")
        print(f"{d:>3} " + " ".join(f"{c:>16}" for c in row)
              + f" {time.perf_counter() - t0:>12.0f}", flush=True)


def s2_flips(seeds: int) -> None:
    horizon = 1_500
    print(f"\nS2. sign flip (distance 2) at tau, {seeds} seeds: found within {horizon} rounds, "
          "median and largest delay, false switches before tau")
    print(f"{'d':>3} {'tau':>7} {'test':>9} {'found':>7} {'median':>7} {'max':>7} {'false':>6}")
    for d in (3, 5, 10):
        for tau in (2_000, 10_000, 50_000):
            for test in SWITCH_TESTS:
                delays, false = [], 0
                for seed in range(seeds):
                    X, y, _, _ = switch_stream(tau + 2 * horizon, d, switch_at=tau,
                                               distance=2.0, seed=seed)
                    m = SelectiveSampler(d, switch_test=test)
                    m.process_many(X, y)
                    false += int(np.sum(m.switches_ < tau))
                    delays.append(first_after(m.switches_, tau, tau + 2 * horizon))
                found = [x for x in delays if x is not None and x <= horizon]
                med = f"{np.median(found):.0f}" if found else "-"
                mx = f"{max(found)}" if found else "-"
                print(f"{d:>3} {tau:>7} {test:>9} {len(found):>3}/{seeds:<3} {med:>7} {mx:>7} "
                      f"{false:>6}", flush=True)


def _misfit_streams(root: str | None):
    """(name, maker(seed) -> (X, y)) of stationary streams not of the linear model's form."""
    def threshold(seed):
        r = np.random.default_rng(seed)
        Z = r.random((20_000, 2))
        return own(Z), np.where(Z[:, 0] + 0.5 * Z[:, 1] > 0.7, 1.0, -1.0)

    def xor(seed):
        r = np.random.default_rng(seed)
        Z = r.random((20_000, 2))
        return own(Z), np.where((Z[:, 0] > 0.5) != (Z[:, 1] > 0.5), 1.0, -1.0)

    out = [("threshold [0,1]^2", threshold), ("XOR [0,1]^2", xor)]
    for name in ("elec2", "weather"):
        xy = load_xy(name, root)
        if xy is None:
            continue
        for prep, f in (("scaled", scaled), ("own", own)):
            out.append((f"{name} shuffled, {prep}", _shuffler(f(xy[0]), xy[1])))
    return out


def _shuffler(X: np.ndarray, y: np.ndarray):
    def shuffled(seed):
        idx = np.random.default_rng(seed).permutation(len(y))
        return X[idx], y[idx]
    return shuffled


def s3_misfit(root: str | None, runs: int = 20) -> None:
    print(f"\nS3. stationary streams the linear model cannot fit, {runs} runs: runs with a "
          "switch (switches in all runs)")
    print(f"{'stream':<26} " + " ".join(f"{t:>14}" for t in SWITCH_TESTS))
    for name, make in _misfit_streams(root):
        cells = []
        for test in SWITCH_TESTS:
            hit = total = 0
            for seed in range(runs):
                X, y = make(seed)
                m = SelectiveSampler(X.shape[1], switch_test=test)
                m.process_many(X, y)
                hit += m.n_switches_ > 0
                total += m.n_switches_
            cells.append(f"{hit}/{runs} ({total})")
        print(f"{name:<26} " + " ".join(f"{c:>14}" for c in cells), flush=True)


def s4_real(root: str | None) -> None:
    print("\nS4. real streams in time order: prequential accuracy (process_many), switches; "
          "default = 'compare'; diff = default - off (points)")
    print(f"{'stream':<12} {'prep':<7} {'rows':>7} {'off':>7} {'default':>13} {'diff':>6} "
          f"{'eprocess':>13} {'delays (compare)':>24}")
    for name in CLASSIFICATION:
        xy = load_xy(name, root)
        if xy is None:
            continue
        X0, y0 = xy
        for prep in ("scaled", "own"):
            if prep == "scaled":
                X, y = scaled(X0[:50_000]), y0[:50_000]
            else:
                X, y = own(X0), y0
            acc_off, _ = run_sampler(X, y, None)
            cells, delays = [], ""
            accs = {}
            for test in SWITCH_TESTS:
                m = SelectiveSampler(X.shape[1], switch_test=test)
                p, _ = m.process_many(X, y)
                accs[test] = float(np.mean(p == y))
                cells.append(f"{accs[test]:.3f} ({m.n_switches_})")
                if test == "compare" and name in KNOWN:
                    period = KNOWN[name]
                    sw = m.switches_
                    found = [first_after(sw, c, c + period) for c in range(period, len(y), period)]
                    got = [f for f in found if f is not None]
                    delays = (f"{len(got)}/{len(found)} med "
                              f"{np.median(got):.0f}" if got else f"0/{len(found)}")
            diff = 100 * (accs["compare"] - acc_off)
            print(f"{name:<12} {prep:<7} {len(y):>7} {acc_off:>7.3f} {cells[0]:>13} "
                  f"{diff:>+6.1f} {cells[1]:>13} {delays:>24}", flush=True)


# ------------------------------------------------------------------- alarm
def _regression_stationary():
    def nonlinear(r, n, d):
        X = r.normal(size=(n, d))
        return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * X[:, 2] * X[:, 3] + 0.3 * r.normal(
            size=n)

    def t2(r, n, d):
        X = r.normal(size=(n, d))
        return X, X @ np.linspace(-1, 1, d) + r.standard_t(2, size=n)

    def hetero(r, n, d):
        X = r.normal(size=(n, d))
        return X, X @ np.linspace(-1, 1, d) + (0.1 + 2 * np.abs(X[:, 0])) * r.normal(size=n)

    return [("fixed nonlinear target", nonlinear), ("t(2) noise", t2),
            ("heteroscedastic noise", hetero)]


def a1_stationary(runs: int = 20, n: int = 20_000, d: int = 5, width: float = 2.0) -> None:
    print(f"\nA1. DriftAlarm on stationary regression streams ({runs} runs of {n:,}, d = {d}, "
          "x ~ N(0, I); x100: X and y times 100): runs with an alarm (alarms)")
    print(f"{'stream':<24} {'model':<10} {'compare':>10} {'x100':>10} {'eprocess*':>10}")
    for name, make in _regression_stationary():
        for mu in (0.01, "auto"):
            cells = []
            for variant in ("compare", "x100", "eprocess"):
                hit = total = 0
                for seed in range(runs):
                    X, y = make(np.random.default_rng(500 + seed), n, d)
                    if variant == "x100":
                        X, y = X * 100.0, y * 100.0
                    if variant == "eprocess":
                        # noise and bound "given correctly": the residual sd of the
                        # best linear fit and 2 ||u||
                        A = np.column_stack([X])
                        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
                        sd = float(np.std(y - A @ coef))
                        m = DriftAlarm(DFOP(d, mu), noise=sd,
                                       coef_bound=2 * float(np.linalg.norm(coef)) + 1e-9)
                    else:
                        m = DriftAlarm(DFOP(d, mu), width=width)
                    m.learn_many(X, y)
                    hit += m.n_drifts_ > 0
                    total += m.n_drifts_
                cells.append(f"{hit}/{runs} ({total})")
            print(f"{name:<24} {mu!s:<10} {cells[0]:>10} {cells[1]:>10} {cells[2]:>10}",
                  flush=True)
    print("  * eprocess given the residual sd of the best linear fit as noise and twice "
          "its coefficients' norm as coef_bound")


def a2_jump(runs: int = 20, width: float = 2.0) -> None:
    print(f"\nA2. a jump of the coefficients at row 3,000 (d = 4, noise 0.1; {runs} seeds): "
          "delay of the first alarm after it, alarms before it")
    print(f"{'model':<8} {'test':<9} {'found<=200':>11} {'median':>7} {'max':>6} {'false':>6}")
    for mu in (0.01, "auto"):
        for test in ("compare", "eprocess"):
            delays, false = [], 0
            for seed in range(runs):
                rng = np.random.default_rng(seed)
                X = rng.normal(size=(6000, 4))
                u, v = rng.normal(size=4), rng.normal(size=4)
                y = np.where(np.arange(6000) < 3000, X @ u, X @ v) + 0.1 * rng.normal(size=6000)
                m = (DriftAlarm(DFOP(4, mu), width=width) if test == "compare"
                     else DriftAlarm(DFOP(4, mu), noise=0.1, coef_bound=10.0))
                m.learn_many(X, y)
                false += int(np.sum(m.drifts_ < 3000))
                delays.append(first_after(m.drifts_, 3000, 6000))
            found = [x for x in delays if x is not None and x <= 200]
            print(f"{mu!s:<8} {test:<9} {len(found):>4}/{runs:<6} "
                  f"{np.median(found) if found else float('nan'):>7.0f} "
                  f"{max(found) if found else -1:>6} {false:>6}", flush=True)


def a3_real() -> None:
    print("\nA3. DriftAlarm(DFOP(d, mu)) on the regression streams (own features + bias, time "
          "order): alarms, rows")
    print(f"{'stream':<18} {'rows':>6} {'mu=0.01':>8} {'auto':>6}")
    streams = []
    deb = load("debutanizer")
    streams.append(("debutanizer", np.asarray(deb.X, float), np.asarray(deb.y, float).ravel()))
    sru = load("sru")
    Y = np.asarray(sru.y, float).reshape(len(sru.y), -1)
    for k, tname in enumerate(("sru H2S", "sru SO2")):
        streams.append((tname, np.asarray(sru.X, float), Y[:, k]))
    for name, X, y in streams:
        Xb = own(X)
        cells = []
        for mu in (0.01, "auto"):
            m = DriftAlarm(DFOP(Xb.shape[1], mu))
            m.learn_many(Xb, y)
            cells.append(m.n_drifts_)
        print(f"{name:<18} {len(y):>6} {cells[0]:>8} {cells[1]:>6}", flush=True)


def a4_cost(repeat: int = 7) -> None:
    print(f"\nA4. learn_many time, DriftAlarm(DFOP(d, 0.01)) / DFOP(d, 0.01), 20,000 rows, "
          f"best of {repeat}, alternating in one process (a shared machine scatters these; "
          "asv_bench/benchmarks/bench_drift.py measures the same)")
    rng = np.random.default_rng(0)
    for d in (10, 50):
        X = rng.normal(size=(20_000, d))
        y = X.sum(axis=1) + rng.normal(size=20_000)
        models = {"dfop": DFOP(d, 0.01), "compare": DriftAlarm(DFOP(d, 0.01)),
                  "eprocess": DriftAlarm(DFOP(d, 0.01), noise=1.0, coef_bound=10.0)}
        for m in models.values():
            m.learn_many(X[:10], y[:10])
        best = {k: np.inf for k in models}
        for _ in range(repeat):
            for k, m in models.items():
                m.reset()
                t = time.perf_counter()
                m.learn_many(X, y)
                best[k] = min(best[k], time.perf_counter() - t)
        ratio = {k: best[k] / best["dfop"] for k in ("compare", "eprocess")}
        print(f"  d = {d}: DFOP {best['dfop'] / 2e4 * 1e9:.0f} ns a row; compare "
              f"{ratio['compare']:.2f}x, eprocess {ratio['eprocess']:.2f}x", flush=True)


# ------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("switch", "alarm", "forgetting", "all"), default="all")
    ap.add_argument("--root", default=os.environ.get("EDGEREG_DATA_ROOT") or None,
                    help="a folder laid out like the shared data (default: "
                         "$EDGEREG_DATA_ROOT, else edgereg's data folder)")
    ap.add_argument("--seeds", type=int, default=200, help="S1's stationary runs per d")
    ap.add_argument("--flip-seeds", type=int, default=20)
    ap.add_argument("--misfit-runs", type=int, default=20, help="S3's runs per stream")
    ap.add_argument("--n", type=int, default=100_000, help="S1's stream length")
    ap.add_argument("--width", type=float, default=2.0,
                    help="A1 and A2: DriftAlarm's width (its default 2; the clipping range)")
    ap.add_argument("--sections", default=None, help="e.g. S1,S4,A2 (default: all of the part)")
    args = ap.parse_args(argv)
    want = None if args.sections is None else set(args.sections.split(","))

    def on(code: str) -> bool:
        return want is None or code in want

    if args.part in ("switch", "all"):
        if on("S4"):
            s4_real(args.root)
        if on("S3"):
            s3_misfit(args.root, args.misfit_runs)
        if on("S2"):
            s2_flips(args.flip_seeds)
        if on("S1"):
            s1_false_switches(args.n, args.seeds)
    if args.part in ("alarm", "all"):
        if on("A1"):
            a1_stationary(width=args.width)
        if on("A2"):
            a2_jump(width=args.width)
        if on("A3"):
            a3_real()
        if on("A4"):
            a4_cost()
    if args.part in ("forgetting", "all"):
        path = Path(__file__).with_name("adaptation_forgetting.py")
        if path.exists():
            spec = importlib.util.spec_from_file_location("adaptation_forgetting", path)
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            sys.modules["adaptation_forgetting"] = module
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            module.main()
        elif args.part == "forgetting":
            print("examples/adaptation_forgetting.py is not in this tree")


if __name__ == "__main__":
    main()
