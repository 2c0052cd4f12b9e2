r"""DriftAlarm: an anytime-valid drift alarm on a regressor's prequential predictions.

Wraps a regressor (DFOP with a fixed or automatic forgetting factor, RLS,
NORMARegressor, ...): every sample is learnt by the model, and its
prequential prediction m_t (made before y_t) is the alternative of the
change-point e-process of ``edgereg/_kernels/eprocess.py`` against the null
"one linear model y = u^T x + e for the whole epoch, ||u|| <= coef_bound,
e sub-Gaussian of scale noise". With x' = x coef_bound / noise and
y' = y / noise the null is the unit one of that module, so

    P(an alarm in an epoch where the null holds) <= delta

for any input sequence. An alarm restarts the test (a new epoch); the model
is not touched (its forgetting already tracks the change; ``model.reset()``
is the user's choice). The derivation: docs/design/selective.md ("The
e-process switch test", and its section on the drift alarm).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, model_class, ring_record
from ._jit import python_function
from ._kernels.eprocess import (
    _D_ALARMS,
    _D_SEEN,
    _G_LAST,
    _H_DELTA,
    _H_SCALE_X,
    _H_SCALE_Y,
    _N_DRIFT_COUNTS,
    _N_DRIFT_HYPER,
    DRIFT_RECORD,
    drift_run,
    eprocess_faults,
    eprocess_init,
    eprocess_score,
    eprocess_size,
    eprocess_span,
)
from ._validate import check_float

__all__ = ["DriftAlarm"]

#: Largest input dimension: the test keeps two d x d matrices of float64.
MAX_FEATURES = 1024
_ALARM_FIELDS = ("drift", "drifts", "drift_counts")
_state_types: dict[tuple[str, ...], Any] = {}


def _state_type(fields: tuple[str, ...], name: str) -> Any:
    """A NamedTuple class of these fields (one per field list, cached)."""
    key = (name, *fields)
    if key not in _state_types:
        _state_types[key] = NamedTuple(name, [(f, np.ndarray) for f in fields])  # type: ignore[misc]
    return _state_types[key]


def _as_model(model: Any, dtype: Any, on_invalid: Any) -> OnlineModel:
    """The wrapped model: an instance, or ``{"class": name, "params": {...}}`` (what
    ``get_params`` gives, so that ``load`` rebuilds it)."""
    if isinstance(model, dict):
        if set(model) != {"class", "params"} or not isinstance(model["params"], dict):
            raise ValueError("model must be a regressor or a dict {'class': name, "
                             f"'params': {{...}}}}, got {model!r}")
        cls = model_class(str(model["class"]))
        if cls is None:
            raise ValueError(f"model names an unknown model class {model['class']!r}")
        params = dict(model["params"])
        if dtype is not None:
            params["dtype"] = dtype
        if on_invalid is not None:
            params["on_invalid"] = on_invalid
        model = cls(**params)
    elif dtype is not None or on_invalid is not None:
        raise ValueError("dtype and on_invalid are the wrapped model's: set them on it")
    if not isinstance(model, OnlineModel) or model._task != "regression":
        raise TypeError(f"model must be an edgereg regressor, got {model!r}")
    if getattr(model, "n_models", None) is not None or model.n_features > MAX_FEATURES:
        raise ValueError(f"DriftAlarm takes a single model of at most {MAX_FEATURES} "
                         f"features (the test keeps two d x d matrices), got {model!r}")
    return model


class DriftAlarm(OnlineModel):
    r"""A regressor with an anytime-valid drift alarm on its prequential predictions.

    Parameters
    ----------
    model : OnlineModel or dict
        The regressor (``DFOP(d, mu)``, ``DFOP(d, "auto")``, ``RLS(d)``, ...),
        or ``{"class": "DFOP", "params": {...}}``. It learns every sample.
    noise : float > 0
        sigma: the noise of a stationary stream is sigma-sub-Gaussian
        (Gaussian of standard deviation <= sigma, or bounded in an interval
        of length 2 sigma). The guarantee needs it; a sigma below the real
        noise makes false alarms likely.
    coef_bound : float > 0
        A bound on ||u||, the coefficients of the stationary linear model.
        Loose is cheap (the cost of a factor 10 is about (d / 2) ln 100 nats
        of evidence).
    delta : float in (0, 1), default 0.1
        P(any false alarm in a stationary epoch) <= delta.
    dtype, on_invalid : optional
        Set on the model when it is given as a dict (the contract tests'
        convention); an instance keeps its own.

    Attributes
    ----------
    model : the wrapped regressor (its ``coef_``, ``forgetting_`` ...).
    drifts_ : ndarray of int64
        Indices (among the samples tested) of the latest 64 alarms.
    n_drifts_ : int
    drift_score_ : float
        The test's current log e-value: an alarm when it reaches log(1 / delta).
    last_drift_score_ : float

    Notes
    -----
    The alarm tests "one linear model fits the whole epoch as well as the
    model's predictions do": with a nonlinear model (NORMARegressor) on a
    stationary nonlinear stream it fires too. Memory: the model's, plus
    2 d^2 + 2 d + 24 float64 of the test, 2 d of scratch and 68 int64.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP, DriftAlarm
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> u = np.array([1.0, -2.0, 0.5])
    >>> y = np.where(np.arange(2000) < 1000, X @ u, -(X @ u)) + 0.1 * rng.normal(size=2000)
    >>> alarm = DriftAlarm(DFOP(3, forgetting=0.05), noise=0.1, coef_bound=10.0)
    >>> predictions = alarm.learn_many(X, y)    # the model's prequential predictions
    >>> alarm.drifts_                           # the coefficients flipped at row 1000
    array([1004])
    """

    _task = "regression"

    def __init__(self, model: Any, noise: float, coef_bound: float, *, delta: float = 0.1,
                 dtype: Any = None, on_invalid: Any = None) -> None:
        self.model = _as_model(model, dtype, on_invalid)
        self.noise = check_float("noise", noise, 0.0, 1e150, low_open=True)
        self.coef_bound = check_float("coef_bound", coef_bound, 0.0, 1e150, low_open=True)
        self.delta = check_float("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        self.n_features = self.model.n_features
        self.dtype = self.model.dtype
        self.on_invalid = self.model.on_invalid
        self._skip = self.model._skip
        self._row_shape = self.model._row_shape
        self._span = eprocess_span(self.n_features)
        self._hyper = np.zeros(_N_DRIFT_HYPER)
        self._hyper[_H_SCALE_X] = self.coef_bound / self.noise
        self._hyper[_H_SCALE_Y] = 1.0 / self.noise
        self._hyper[_H_DELTA] = self.delta
        self._codes = np.array([self._span], dtype=np.int64)
        self._y1 = np.zeros(1)
        self._m1 = np.zeros(1)
        self.reset()

    def get_params(self) -> dict[str, Any]:
        """The model as ``{"class", "params"}`` (JSON, for ``save``), noise, coef_bound, delta."""
        return {"model": {"class": type(self.model).__name__, "params": self.model.get_params()},
                "noise": self.noise, "coef_bound": self.coef_bound, "delta": self.delta}

    # ------------------------------------------------------------------ state
    def _allocate(self) -> tuple[NamedTuple, NamedTuple]:
        """The model's fresh state and workspace, with the test's arrays after them."""
        inner_state, inner_work = self.model._allocate()
        d = self.n_features
        E = np.zeros(eprocess_size(d, False))
        python_function(eprocess_init)(E, d, self._span)
        N = np.zeros(DRIFT_RECORD + _N_DRIFT_COUNTS, dtype=np.int64)
        N[:DRIFT_RECORD] = -1
        state_t = _state_type((*inner_state._fields, *_ALARM_FIELDS), "DriftAlarmState")
        work_t = _state_type((*inner_work._fields, "drift_scratch"), "DriftAlarmWork")
        state = state_t(*inner_state, E, N[:DRIFT_RECORD], N[DRIFT_RECORD:])
        work = work_t(*inner_work, np.zeros(2 * d))
        self._inner_types = (type(inner_state), type(inner_work))
        return state, work

    def _split(self, state: NamedTuple, work: NamedTuple | None = None) -> tuple[Any, Any]:
        state_t, work_t = self._inner_types
        k = len(state_t._fields)
        inner_state = state_t(*tuple(state)[:k])
        inner_work = work_t(*tuple(work)[: len(work_t._fields)]) if work is not None else None
        return inner_state, inner_work

    def _bind_state(self) -> None:
        inner_state, inner_work = self._split(self._state, self._work)
        self.model._state, self.model._work = inner_state, inner_work
        self.model._bind_state()
        self._E = self._state.drift
        self._N = self._state.drifts.base
        self._scratch = self._work.drift_scratch

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        inner_state, _ = self._split(state)
        faults = self.model._state_faults(inner_state)
        d = self.n_features
        faults += eprocess_faults(state.drift, d, self._span, False, False,  # type: ignore[attr-defined]
                                  "drift")
        counts = state.drift_counts  # type: ignore[attr-defined]
        if np.any(counts < 0) or counts[_D_ALARMS] > counts[_D_SEEN]:
            faults.append(("drift_counts", f"holds impossible counts {counts.tolist()}"))
        return faults

    def __getstate__(self) -> dict[str, Any]:
        return {"params": self.get_params(), "state": dict(self._state._asdict())}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__init__(**d["params"])
        self._copy_state_in(dict(d["state"]), source="pickle")

    # ------------------------------------------------------------- attributes
    @property
    def drifts_(self) -> np.ndarray:
        """Indices (among the samples tested) of the latest alarms, oldest first."""
        return ring_record(self._state.drifts, self.n_drifts_)

    @property
    def n_drifts_(self) -> int:
        return int(self._state.drift_counts[_D_ALARMS])

    @property
    def drift_score_(self) -> float:
        """The test's current log e-value (an alarm at log(1 / delta))."""
        return float(python_function(eprocess_score)(self._state.drift, self.n_features))

    @property
    def last_drift_score_(self) -> float:
        """The log e-value that raised the latest alarm (NaN before any)."""
        return float(self._state.drift[_G_LAST]) if self.n_drifts_ else float("nan")

    # --------------------------------------------------------------- learning
    def learn_one(self, x: Any, y: Any) -> float:
        """The model learns (x, y); then its prediction (made before y) goes to the test.

        Returns the model's prequential prediction. A sample the model
        refuses raises (``on_invalid="raise"``) with nothing changed."""
        yhat = self.model.learn_one(x, y)
        self._y1[0] = np.asarray(y, dtype=np.float64).reshape(-1)[0]
        self._m1[0] = yhat
        xr = self.model._row(x)
        drift_run(xr.reshape((1, xr.shape[0])), self._y1, self._m1, 1, self._E, self._N,
                  self._scratch, self._hyper, self._codes)
        return yhat

    def _check_X(self, X: Any) -> np.ndarray:
        return self.model._check_X(X)

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return self.model._targets_many(Y, n)

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        return self.model._invalid_message(x, y, where)

    def _learn_block(self, X, Y, out, **kw):  # type: ignore[override]
        bad = self.model._learn_block(X, Y, out, **kw)
        drift_run(X, Y, out, X.shape[0] if bad < 0 else bad, self._E, self._N, self._scratch,
                  self._hyper, self._codes)
        return bad

    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """The model learns the block; its prequential predictions go to the test row by row.

        Identical to :meth:`learn_one` row by row; returns the predictions."""
        return self._learn_many_checked(X, y)

    def predict_one(self, x: Any) -> float:
        return self.model.predict_one(x)

    def predict_many(self, X: Any) -> np.ndarray:
        return self.model.predict_many(X)

    def _predict_block(self, X, out):  # type: ignore[override]
        self.model._predict_block(X, out)

    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self._state) + sum(a.nbytes for a in self._work))

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"model": {"class": "DFOP", "params": {"n_features": 4, "forgetting": 0.05}},
             "noise": 1.0, "coef_bound": 10.0},
            {"model": {"class": "DFOP", "params": {"n_features": 3, "forgetting": "auto"}},
             "noise": 0.5, "coef_bound": 5.0, "delta": 0.01},
        ]
