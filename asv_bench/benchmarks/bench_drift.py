"""Throughput of DriftAlarm around DFOP, against DFOP alone.

``track_*`` return samples per second (best of a few repeats, state reset
before each) on ``linear_stream``. The default comparison test costs one
pass over its incumbent RLS's d x d matrix per sample; the e-process test
(``noise`` and ``coef_bound`` given) two P x products and rank-one updates.
The target: DriftAlarm (default) at most 2.5x DFOP's time at d = 10 and 50,
read from the same run: ``DriftAlarmCost.track_*`` report that ratio itself,
timing the two alternately in one process (best of several calls each), so
the machine's drifts fall on both.
"""

from __future__ import annotations

import time

from .common import QUICK, linear_stream, samples_per_second

N = 20_000


def _models(bench, d: int, forgetting: str) -> None:
    """The stream and the three models every benchmark here times, warmed up."""
    from edgereg import DFOP, DriftAlarm

    bench.X, bench.y = linear_stream(N, d, seed=0)
    mu = 0.01 if forgetting == "fixed" else "auto"
    bench.alarm = DriftAlarm(DFOP(d, mu))
    bench.eprocess = DriftAlarm(DFOP(d, mu), noise=0.1, coef_bound=10.0)
    bench.plain = DFOP(d, mu)
    for m in (bench.alarm, bench.eprocess, bench.plain):
        m.learn_many(bench.X[:10], bench.y[:10])


class DriftAlarmThroughput:
    params = ([10, 50], ["fixed", "auto"])
    param_names = ["d", "forgetting"]
    unit = "samples/s"
    timeout = 300

    def setup(self, d: int, forgetting: str) -> None:
        _models(self, d, forgetting)

    def track_drift_alarm_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.alarm.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.alarm.reset)

    def track_drift_alarm_eprocess_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.eprocess.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.eprocess.reset)

    def track_model_alone_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.plain.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.plain.reset)


def _best_alternating(calls, rounds):
    """Best time of each call (each after its reset), the calls alternating round by round."""
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for k, (fn, reset) in enumerate(calls):
            reset()
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


class DriftAlarmCost:
    """DriftAlarm's time over the wrapped DFOP's alone (same rows, same process).

    ``track_compare_over_dfop``: the default test; ``track_eprocess_over_dfop``:
    ``noise`` and ``coef_bound`` given. Target of the default: at most 2.5.
    """

    params = ([10, 50], ["fixed", "auto"])
    param_names = ["d", "forgetting"]
    unit = "ratio"
    timeout = 300

    def setup(self, d: int, forgetting: str) -> None:
        _models(self, d, forgetting)

    def _ratio(self, wrapped) -> float:
        X, y = self.X, self.y
        t_wrapped, t_plain = _best_alternating(
            [(lambda: wrapped.learn_many(X, y), wrapped.reset),
             (lambda: self.plain.learn_many(X, y), self.plain.reset)],
            rounds=2 if QUICK else 7)
        return t_wrapped / t_plain

    def track_compare_over_dfop(self, d: int, forgetting: str) -> float:
        return self._ratio(self.alarm)

    def track_eprocess_over_dfop(self, d: int, forgetting: str) -> float:
        return self._ratio(self.eprocess)
