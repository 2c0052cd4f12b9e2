"""Statistical evaluation of SelectiveSampler's switch tests (docs/algorithms/selective.md).

Measures, on ``edgereg.streams.switch_stream`` (unit-norm x, E[y|x] = c^T x),
for the e-process test (``switch_test="eprocess"``, the default before the comparison test of
examples/adaptation_benchmark.py) and the
source's C_t > K_t (``"spec"``):

1. false switches on stationary streams (P(any) <= delta = 0.1 promised);
2. detection after one switch at ||u - v|| in {2, 1, 0.5} and several tau:
   detected within the horizon, median and largest delay;
3. prequential accuracy after the switch against plain BBQ restarted at the
   true switch time (the oracle) and plain BBQ never restarted;
4. labels used per 10^5 rounds with and without detection;
5. the bundled real streams (elec2, weather): accuracy and switches declared.

Usage: ``python examples/selective_evaluation.py [--n N] [--seeds S]``
(the tables of docs/design/selective.md: ``--n 100000 --seeds 20``; CI: ``--n 40000 --seeds 2``).
"""

from __future__ import annotations

import argparse

import numpy as np

from edgereg import SelectiveSampler
from edgereg.datasets import load
from edgereg.streams import switch_stream

TESTS = ("eprocess", "spec")


def first_after(switches: np.ndarray, tau: int) -> int | None:
    after = switches[switches >= tau]
    return int(after[0] - tau) if after.size else None


def false_alarms(n: int, seeds: int) -> None:
    print(f"1. stationary streams of {n} rounds, {seeds} seeds, delta = 0.1: streams with a "
          "false switch")
    print(f"{'d':>3} {'eprocess':>9} {'spec':>9}")
    for d in (3, 5, 10):
        row = []
        for test in TESTS:
            hits = 0
            for seed in range(seeds):
                X, y, _, _ = switch_stream(n, d, switch_at=n, seed=1000 + seed)
                m = SelectiveSampler(d, switch_test=test)
                m.process_many(X, y)
                hits += m.n_switches_ > 0
            row.append(f"{hits}/{seeds}")
        print(f"{d:>3} {row[0]:>9} {row[1]:>9}")


def detection(n: int, seeds: int) -> None:
    taus = [t for t in (2_000, 10_000, 50_000) if t < n]
    cases = [(2.0, 1_500, (3, 5, 10)), (1.0, 10_000, (3, 5)), (0.5, 20_000, (3, 5, 10))]
    print(f"\n2. one switch at tau, {seeds} seeds: detected within the horizon, median and "
          "largest delay (rounds), false switches before tau")
    print(f"{'dist':>5} {'d':>3} {'tau':>7} {'horizon':>8} {'test':>9} {'found':>7} "
          f"{'median':>7} {'max':>7} {'false':>6}")
    for dist, horizon, dims in cases:
        for d in dims:
            for tau in taus:
                for test in TESTS:
                    delays, false = [], 0
                    for seed in range(seeds):
                        X, y, _, _ = switch_stream(tau + 2 * horizon, d, switch_at=tau,
                                                   distance=dist, seed=seed)
                        m = SelectiveSampler(d, switch_test=test)
                        m.process_many(X, y)
                        false += int(np.sum(m.switches_ < tau))
                        delays.append(first_after(m.switches_, tau))
                    found = [x for x in delays if x is not None and x <= horizon]
                    med = f"{np.median(found):.0f}" if found else "-"
                    mx = f"{max(found)}" if found else "-"
                    print(f"{dist:>5} {d:>3} {tau:>7} {horizon:>8} {test:>9} "
                          f"{len(found):>3}/{seeds:<3} {med:>7} {mx:>7} {false:>6}")


def accuracy(n: int, seeds: int) -> None:
    tau = min(10_000, n // 4)
    after = 20_000
    print(f"\n3. accuracy on the {after} rounds after a switch at tau = {tau} ({seeds} seeds; "
          "labels: share of rounds whose label was used)")
    print(f"{'dist':>5} {'d':>3} {'eprocess':>9} {'spec':>9} {'BBQ+oracle':>11} "
          f"{'BBQ':>9} {'labels e/spec/BBQ':>20}")
    for dist in (2.0, 1.0):
        for d in (3, 5, 10):
            acc = {k: [] for k in ("eprocess", "spec", "oracle", "bbq")}
            lab = {k: [] for k in ("eprocess", "spec", "bbq")}
            for seed in range(seeds):
                X, y, _, _ = switch_stream(tau + after, d, switch_at=tau, distance=dist,
                                           seed=50 + seed)
                for test in TESTS:
                    p, asked = SelectiveSampler(d, switch_test=test).process_many(X, y)
                    acc[test].append(np.mean(p[tau:] == y[tau:]))
                    lab[test].append(asked.mean())
                p, asked = SelectiveSampler(d, detect_switch=False).process_many(X, y)
                acc["bbq"].append(np.mean(p[tau:] == y[tau:]))
                lab["bbq"].append(asked.mean())
                p2, _ = SelectiveSampler(d, detect_switch=False).process_many(X[tau:], y[tau:])
                acc["oracle"].append(np.mean(p2 == y[tau:]))
            a = {k: np.mean(v) for k, v in acc.items()}
            labels = "/".join(f"{np.mean(lab[k]):.1%}" for k in ("eprocess", "spec", "bbq"))
            print(f"{dist:>5} {d:>3} {a['eprocess']:>9.3f} {a['spec']:>9.3f} "
                  f"{a['oracle']:>11.3f} {a['bbq']:>9.3f} {labels:>20}")


def label_cost(n: int) -> None:
    print(f"\n4. labels used on a stationary stream of {n} rounds (per 10^5 rounds)")
    print(f"{'d':>3} {'BBQ only':>9} {'eprocess':>9} {'of which test':>14} {'spec':>9}")
    for d in (3, 5, 10):
        X, y, _, _ = switch_stream(n, d, switch_at=n, seed=7)
        per = 1e5 / n
        plain = SelectiveSampler(d, detect_switch=False)
        plain.process_many(X, y)
        e = SelectiveSampler(d, switch_test="eprocess")
        e.process_many(X, y)
        s = SelectiveSampler(d, switch_test="spec")
        s.process_many(X, y)
        print(f"{d:>3} {plain.n_queries_ * per:>9,.0f} {e.n_queries_ * per:>9,.0f} "
              f"{e.n_demo_queries_ * per:>14,.0f} {s.n_queries_ * per:>9,.0f}")


def real_streams() -> None:
    print("\n5. bundled real streams (bias column added): prequential accuracy, switches")
    print(f"{'stream':<9} {'rows':>7} {'BBQ':>7} {'spec':>12} {'eprocess':>12}")
    for name in ("elec2", "weather"):
        data = load(name)
        X = np.column_stack([np.asarray(data.X, dtype=np.float64), np.ones(len(data.X))])
        y = np.asarray(data.y, dtype=np.float64)
        y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
        cells = []
        for kw in ({"detect_switch": False}, {"switch_test": "spec"}, {"switch_test": "eprocess"}):
            m = SelectiveSampler(X.shape[1], **kw)
            p, _ = m.process_many(X, y)
            cells.append(f"{np.mean(p == y):.3f}" + (f" ({m.n_switches_})" if kw.get(
                "detect_switch", True) else ""))
        print(f"{name:<9} {len(y):>7} {cells[0]:>7} {cells[1]:>12} {cells[2]:>12}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="stationary stream length")
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    SelectiveSampler(3).process_many(*switch_stream(100, 3, seed=0)[:2])  # compile
    false_alarms(args.n, args.seeds)
    detection(args.n, args.seeds)
    accuracy(args.n, args.seeds)
    label_cost(args.n)
    real_streams()


if __name__ == "__main__":
    main()
