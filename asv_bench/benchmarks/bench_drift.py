"""Throughput of DriftAlarm around DFOP, against DFOP alone.

``track_*`` return samples per second (best of a few repeats, state reset
before each) on ``linear_stream``. The default comparison test costs one
pass over its incumbent RLS's d x d matrix per sample; the e-process test
(``noise`` and ``coef_bound`` given) two P x products and rank-one updates.
The target: DriftAlarm (default) at most 2.5x DFOP's time at d = 10 and 50,
read from the same run.
"""

from __future__ import annotations

from .common import linear_stream, samples_per_second

N = 20_000


class DriftAlarmThroughput:
    params = ([10, 50], ["fixed", "auto"])
    param_names = ["d", "forgetting"]
    unit = "samples/s"
    timeout = 300

    def setup(self, d: int, forgetting: str) -> None:
        from edgereg import DFOP, DriftAlarm

        self.X, self.y = linear_stream(N, d, seed=0)
        mu = 0.01 if forgetting == "fixed" else "auto"
        self.alarm = DriftAlarm(DFOP(d, mu))
        self.eprocess = DriftAlarm(DFOP(d, mu), noise=0.1, coef_bound=10.0)
        self.plain = DFOP(d, mu)
        for m in (self.alarm, self.eprocess, self.plain):
            m.learn_many(self.X[:10], self.y[:10])

    def track_drift_alarm_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.alarm.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.alarm.reset)

    def track_drift_alarm_eprocess_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.eprocess.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.eprocess.reset)

    def track_model_alone_learn_many(self, d: int, forgetting: str) -> float:
        return samples_per_second(lambda: self.plain.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.plain.reset)
