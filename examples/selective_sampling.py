"""A drifting sensor: selective sampling with switch detection (docs/algorithms/selective.md).

A sensor's decision boundary jumps several times (a recalibration, a moved
device). Labels are expensive (a technician's check), so SelectiveSampler asks
only when unsure (BBQ) plus a small demo window, and restarts when the
boundary has switched. Prints the labels used, the switches found against the
true switch points, and the prequential accuracy; draws the running accuracy
and the query times if matplotlib is installed.

Usage: ``python examples/selective_sampling.py [--n N]`` (CI: ``--n 40000``).

The switch test (docs/algorithms/selective.md) compares the estimator with a demo
classifier trained on the last L_t = window0 + floor(sqrt(t)) labelled
examples; with the default window0 = 50, three sensor channels and this label
noise it needs windows of about 150 examples to clear its threshold K_t, so a
switch in the first ~10^4 rounds goes unnoticed (n = 20,000 finds none, n =
40,000 finds all three, 460-1,176 rounds late). For short streams raise
``window0``.
"""

from __future__ import annotations

import argparse

import numpy as np

from edgereg import SelectiveSampler
from edgereg.metrics import accuracy
from edgereg.streams import switch_stream


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="stream length")
    ap.add_argument("--d", type=int, default=3, help="sensor channels")
    ap.add_argument("--plot", default="selective_sampling.png", help="figure file")
    args = ap.parse_args()
    n, d = args.n, args.d
    true_switches = [n // 4, n // 2, 3 * n // 4]
    X, y, concepts = switch_stream(n, d, switch_at=true_switches, distance=2.0, seed=42)
    X = X * 37.0 + 0.0  # raw sensor units: the model normalises each x itself

    model = SelectiveSampler(d)
    plain = SelectiveSampler(d, detect_switch=False)
    pred, asked = model.process_many(X, y)
    pred_plain, asked_plain = plain.process_many(X, y)

    print(f"stream: n={n}, d={d}, true switches at {true_switches} (||c_i+1 - c_i|| = 2)")
    print(f"labels used: {model.n_queries_} ({model.query_rate_:.1%}); "
          f"{model.n_demo_queries_} of them for the demo window")
    print(f"switches found: {model.switches_.tolist()}")
    for s in true_switches:
        found = model.switches_[model.switches_ >= s]
        print(f"  true switch {s:>7}: " + (f"detected after {found[0] - s} rounds"
                                            if found.size else "not detected"))
    print(f"prequential accuracy: {accuracy(y, pred):.3f} with switch detection, "
          f"{accuracy(y, pred_plain):.3f} plain BBQ ({plain.n_queries_} labels)")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    window = max(n // 100, 50)
    kernel = np.ones(window) / window
    fig, ax = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for p, label in ((pred, "with switch detection"), (pred_plain, "plain BBQ")):
        ax[0].plot(np.convolve(p == y, kernel, mode="valid"), label=label)
    for s in true_switches:
        ax[0].axvline(s, color="k", ls=":")
    for s in model.switches_:
        ax[0].axvline(s, color="r", ls="--")
    ax[0].set_ylabel(f"accuracy ({window}-sample window)")
    ax[0].legend()
    ax[1].eventplot([np.flatnonzero(asked), np.flatnonzero(asked_plain)], lineoffsets=[1, 0])
    ax[1].set_yticks([1, 0], ["detect", "plain"])
    ax[1].set_xlabel("t")
    ax[1].set_ylabel("label queries")
    fig.tight_layout()
    fig.savefig(args.plot)
    print(f"figure written to {args.plot}")


if __name__ == "__main__":
    main()
