"""Throughput of SelectiveSampler (docs/algorithms/selective.md) against DFOP and river.

The default switch test is the e-process; ``*_spec_*`` runs the
source's demo-classifier test for comparison.

``track_*`` return samples per second (best of a few repeats, state reset
before each). The stream is ``linear_stream`` turned into labels
y = sign(w.x + noise); SelectiveSampler normalises x itself. DFOP
learn_many at the same d is the reference throughput (target: SelectiveSampler
within 2x); river's active.EntropySampler around a LogisticRegression runs on
the first ``N_RIVER`` rows of the same stream.
"""

from __future__ import annotations

import numpy as np

from .common import linear_stream, samples_per_second

N = 20_000
N_RIVER = 2_000


class SelectiveThroughput:
    params = ([10, 50, 200],)
    param_names = ["d"]
    unit = "samples/s"
    timeout = 300

    def setup(self, d: int) -> None:
        from edgereg import DFOP, SelectiveSampler

        n = N if d < 200 else N // 4
        X, y = linear_stream(n, d, seed=0)
        self.n = n
        self.X = X
        self.y = np.where(y >= 0.0, 1.0, -1.0)
        self.sampler = SelectiveSampler(d)
        self.spec = SelectiveSampler(d, switch_test="spec")
        self.eprocess = SelectiveSampler(d, switch_test="eprocess")
        self.dfop = DFOP(d, task="classification")
        # Compile every path outside the timed region.
        for m in (self.sampler, self.spec, self.eprocess):
            m.learn_many(self.X[:10], self.y[:10])
            m.process_many(self.X[:10], self.y[:10])
        self.dfop.learn_many(self.X[:10], self.y[:10])

    def track_selective_process_many(self, d: int) -> float:
        return samples_per_second(
            lambda: self.sampler.process_many(self.X, self.y), self.n, repeat=3,
            reset=self.sampler.reset,
        )

    def track_selective_spec_process_many(self, d: int) -> float:
        return samples_per_second(
            lambda: self.spec.process_many(self.X, self.y), self.n, repeat=3,
            reset=self.spec.reset,
        )

    def track_selective_eprocess_process_many(self, d: int) -> float:
        """The e-process switch test (the default before the comparison test)."""
        return samples_per_second(lambda: self.eprocess.process_many(self.X, self.y), self.n,
                                  repeat=3, reset=self.eprocess.reset)

    def track_selective_learn_many(self, d: int) -> float:
        return samples_per_second(
            lambda: self.sampler.learn_many(self.X, self.y), self.n, repeat=3,
            reset=self.sampler.reset,
        )

    def track_dfop_learn_many(self, d: int) -> float:
        return samples_per_second(
            lambda: self.dfop.learn_many(self.X, self.y), self.n, repeat=3,
            reset=self.dfop.reset,
        )

    def track_river_entropy_sampler(self, d: int) -> float:
        try:
            from river import active, linear_model
        except ImportError as exc:  # river is optional
            raise NotImplementedError("river is not installed") from exc
        rows = [dict(enumerate(x)) for x in self.X[:N_RIVER]]
        labels = [bool(v > 0) for v in self.y[:N_RIVER]]
        state: dict[str, object] = {}

        def reset() -> None:
            state["model"] = active.EntropySampler(linear_model.LogisticRegression(), seed=0)

        def run() -> None:
            model = state["model"]
            for x, label in zip(rows, labels, strict=True):
                _, ask = model.predict_one(x)
                if ask:
                    model.learn_one(x, label)

        return samples_per_second(run, N_RIVER, repeat=1, reset=reset)
