"""Statistical evaluation of SelectiveSampler (SPEC.md section 4).

Measures, on ``edgereg.streams.switch_stream`` (unit-norm x, E[y|x] = c^T x):

1. false switch detections on stationary streams over many seeds, against
   the union bound P(any false alarm) <= 2 delta (delta per estimator);
2. detection delay after one switch at ||u - v|| in {0.5, 1, 2};
3. growth of the labels used with T (log-log slope) against kappa;
4. prequential accuracy after the switch: with detection vs plain BBQ, vs
   RLS and DFOP (every label used) and river's active.EntropySampler.

Usage: ``python examples/selective_evaluation.py [--n N] [--seeds S] [--d D]``
(CI: ``--n 40000 --seeds 2``: at fewer rounds the default window is too
small for the switch test to fire before the end, see selective_sampling.py).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from edgereg import DFOP, RLS, SelectiveSampler
from edgereg.streams import switch_stream


def false_alarms(n: int, d: int, seeds: int, delta: float) -> None:
    streams_with_alarm = 0
    for seed in range(seeds):
        X, y, _, _ = switch_stream(n, d, switch_at=n, seed=1000 + seed)
        m = SelectiveSampler(d, delta=delta)
        m.process_many(X, y)
        streams_with_alarm += m.n_switches_ > 0
    print(f"stationary, d={d}, n={n}, {seeds} streams, delta={delta}: "
          f"{streams_with_alarm} with a false switch (rate {streams_with_alarm / seeds:.3f}; "
          f"bound 2*delta = {2 * delta:.2f})")


def delays(n: int, d: int, seeds: int) -> None:
    at = n // 2
    print(f"\ndetection delay, one switch at t={at}, n={n}, d={d}, {seeds} seeds")
    print(f"{'||u-v||':>8} {'window0':>8} {'detected':>9} {'median':>8} {'max':>8} {'false':>6}")
    for window0 in (50, 500):
        for dist in (0.5, 1.0, 2.0):
            dl, false = [], 0
            for seed in range(seeds):
                X, y, _, _ = switch_stream(n, d, switch_at=at, distance=dist, seed=seed)
                m = SelectiveSampler(d, window0=window0)
                m.process_many(X, y)
                sw = m.switches_
                false += int(np.sum(sw < at))
                after = sw[sw >= at]
                if after.size:
                    dl.append(int(after[0] - at))
            med = f"{np.median(dl):.0f}" if dl else "-"
            mx = f"{np.max(dl)}" if dl else "-"
            print(f"{dist:>8} {window0:>8} {len(dl):>5}/{seeds:<3} {med:>8} {mx:>8} {false:>6}")


def query_growth(n: int, d: int, kappa: float) -> None:
    X, y, _, _ = switch_stream(n, d, switch_at=n, seed=7)
    print(f"\nlabels used vs T (stationary, d={d}, kappa={kappa})")
    for detect in (False, True):
        m = SelectiveSampler(d, kappa=kappa, detect_switch=detect)
        marks = np.unique(np.logspace(np.log10(n / 100), np.log10(n), 8).astype(int))
        counts, bbq, prev = [], [], 0
        for T in marks:
            m.process_many(X[prev:T], y[prev:T])
            prev = T
            counts.append(m.n_queries_)
            bbq.append(m.n_queries_ - m.n_demo_queries_)
        slope = np.polyfit(np.log(marks), np.log(counts), 1)[0]
        slope_bbq = np.polyfit(np.log(marks), np.log(bbq), 1)[0]
        print(f"  detect_switch={detect!s:5}: labels at T={n}: {counts[-1]} "
              f"({counts[-1] / n:.1%}); log-log slope all labels {slope:.2f}, "
              f"BBQ labels {slope_bbq:.2f} (kappa = {kappa})")


def accuracy_table(n: int, d: int, seeds: int, dist: float, river_n: int) -> None:
    at = n // 2
    rows: dict[str, list[tuple[float, float, float]]] = {}

    def add(name: str, pred: np.ndarray, used: float, y: np.ndarray, bayes: np.ndarray) -> None:
        rows.setdefault(name, []).append(
            (used, float(np.mean(pred[at:] == y[at:])), float(np.mean(pred[at:] == bayes[at:])))
        )

    for seed in range(seeds):
        X, y, u, v = switch_stream(n, d, switch_at=at, distance=dist, seed=seed)
        bayes = np.where(np.r_[X[:at] @ u, X[at:] @ v] >= 0, 1.0, -1.0)
        for name, model in (
            ("SelectiveSampler", SelectiveSampler(d)),
            ("BBQ (detect_switch=False)", SelectiveSampler(d, detect_switch=False)),
        ):
            pred, asked = model.process_many(X, y)
            add(name, pred, asked.mean(), y, bayes)
        add("RLS (all labels)", RLS(d, task="classification").learn_many(X, y), 1.0, y, bayes)
        for mu in (0.01, 0.001):
            add(f"DFOP mu={mu} (all labels)",
                DFOP(d, mu, task="classification").learn_many(X, y), 1.0, y, bayes)
    print(f"\nafter a switch at t={at} (||u-v||={dist}, n={n}, d={d}, {seeds} seeds): "
          "accuracy on rows t >= switch")
    print(f"{'model':<28} {'labels used':>12} {'acc vs y':>9} {'acc vs Bayes':>13}")
    for name, vals in rows.items():
        a = np.mean(vals, axis=0)
        print(f"{name:<28} {a[0]:>11.1%} {a[1]:>9.3f} {a[2]:>13.3f}")

    try:
        from river import active, linear_model
    except ImportError:
        print("river not installed: EntropySampler comparison skipped")
        return
    # river runs in Python per sample: a shorter stream, same generator.
    X, y, u, v = switch_stream(river_n, d, switch_at=river_n // 2, distance=dist, seed=0)
    half = river_n // 2
    model = active.EntropySampler(linear_model.LogisticRegression(), seed=0)
    t0 = time.perf_counter()
    pred, asked = np.empty(river_n), np.zeros(river_n, bool)
    for t in range(river_n):
        x = dict(enumerate(X[t]))
        p, ask = model.predict_one(x)
        pred[t] = 1.0 if p else -1.0
        if ask:
            model.learn_one(x, bool(y[t] > 0))
            asked[t] = True
    river_s = time.perf_counter() - t0
    ours = SelectiveSampler(d)
    t0 = time.perf_counter()
    p2, a2 = ours.process_many(X, y)
    ours_s = time.perf_counter() - t0
    print(f"\nside by side with river, n={river_n}, switch at {half} (||u-v||={dist}):")
    print(f"{'model':<34} {'labels':>7} {'acc after':>10} {'acc all':>8} {'samples/s':>10}")
    print(f"{'river EntropySampler(LogReg)':<34} {asked.mean():>6.1%} "
          f"{np.mean(pred[half:] == y[half:]):>10.3f} {np.mean(pred == y):>8.3f} "
          f"{river_n / river_s:>10,.0f}")
    print(f"{'edgereg SelectiveSampler':<34} {a2.mean():>6.1%} "
          f"{np.mean(p2[half:] == y[half:]):>10.3f} {np.mean(p2 == y):>8.3f} "
          f"{river_n / ours_s:>10,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="stream length")
    ap.add_argument("--seeds", type=int, default=100, help="seeds for the false-alarm rate")
    ap.add_argument("--d", type=int, default=3)
    args = ap.parse_args()
    n, d = args.n, args.d
    SelectiveSampler(d).process_many(*switch_stream(100, d, seed=0)[:2])  # compile
    false_alarms(n, d, args.seeds, 0.1)
    delays(n, d, max(2, args.seeds // 5))
    query_growth(n, d, 0.5)
    for dist in (1.0, 2.0):
        accuracy_table(n, d, max(2, args.seeds // 10), dist, min(n, 20_000))


if __name__ == "__main__":
    main()
