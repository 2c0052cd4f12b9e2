r"""DriftAlarm: an anytime-valid drift alarm on a regressor's prequential predictions.

Wraps a regressor (DFOP with a fixed or automatic forgetting factor, RLS,
NORMARegressor, ...): every sample is learnt by the model. The default test
(``test="compare"``, ``edgereg/_kernels/compare_drift.py``) compares the model's
prequential predictions with those of an RLS that never forgets, started at
the epoch's beginning (the incumbent), on squared losses clipped to a range
estimated from the epoch's past targets: it alarms when the model has been
doing better than the incumbent, which a model that forgets does only when
the stream changes. It needs no noise scale nor coefficient bound:

    P(an alarm in an epoch) <= delta

whenever, from each of the test's instance starts on, the cumulative
conditional mean of the clipped loss difference (incumbent's minus model's)
stays <= 0, for any data law (a stationary stream of any shape, the
misfit of a linear fit included, where the model forgets and the incumbent
does not). ``test="eprocess"`` (given ``noise`` and ``coef_bound``) is the
change-point e-process of ``edgereg/_kernels/eprocess.py`` against "one
linear model with sub-Gaussian noise for the whole epoch". An alarm
restarts the test, not the model (its forgetting already tracks the change;
``model.reset()`` is the user's choice). Derivations: docs/design/switch-tests.md
and docs/design/selective.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, model_class, ring_record
from ._jit import python_function
from ._kernels.compare import compare_faults, compare_init, compare_score, compare_size
from ._kernels.compare_drift import (
    CODE_COMPARE_BURN,
    CODE_COMPARE_SPAN,
    HYPER_COMPARE_DELTA,
    HYPER_COMPARE_WIDTH,
    N_COMPARE_CODES,
    N_COMPARE_HYPER,
    compare_drift_run,
    drift_burn,
    drift_span,
)
from ._kernels.eprocess import (
    COUNT_ALARMS,
    COUNT_SEEN,
    DRIFT_RECORD,
    GLOBAL_LAST,
    HYPER_DELTA,
    HYPER_SCALE_X,
    HYPER_SCALE_Y,
    N_COUNTS,
    N_HYPER,
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

    Default test ("compare"): with m_t the model's prediction, f_t that of
    an RLS learning every sample of the epoch without forgetting, and
    [lo_t, hi_t] = mean_t -+ width * mean absolute deviation_t of the
    epoch's past targets,

        delta_t = ((c(y_t) - c(f_t))^2 - (c(y_t) - c(m_t))^2) / B_t,

        B_t = min(abs(mc - fc) max(abs(2 lo_t - fc - mc), abs(2 hi_t - fc - mc)), (hi_t - lo_t)^2),

    c the clipping to [lo_t, hi_t], fc = c(f_t), mc = c(m_t): B_t is the most
    the difference can be given both predictions, so delta_t in [-1, 1] (0
    when they are equal). The log e-value of
    an instance of the test started at row s_j is
    log((1 / K) sum_k exp(b_k)) + log pi_j over K fixed bets l_k, b_k a lower
    bound of sum_{t >= s_j} log(1 + l_k delta_t) from four running sums
    (docs/design/switch-tests.md); an alarm when it reaches log(1 / delta).

    Parameters
    ----------
    model : OnlineModel or dict
        The regressor (``DFOP(d, mu)``, ``DFOP(d, "auto")``, ``RLS(d)``, ...),
        or ``{"class": "DFOP", "params": {...}}``. It learns every sample.
    noise, coef_bound : float > 0, optional
        Only for ``test="eprocess"``: sigma (the noise is sigma-sub-Gaussian)
        and a bound on ||u|| of the stationary linear model.
    test : {"compare", "eprocess"}, optional
        Default "compare"; "eprocess" when ``noise`` and ``coef_bound`` are
        given (files and code written before "compare" existed keep it).
    delta : float in (0, 1), default 0.1
        "compare": P(any alarm in an epoch) <= delta whenever the model does
        not beat the incumbent cumulatively from any of the test's instance
        starts (true of a stationary stream for a model that forgets, up to
        the small advantage the model may have early in an epoch; see
        docs/design/switch-tests.md). "eprocess": P(any alarm in an epoch of
        one linear model with that noise) <= delta.
    width : float > 0, default 2.0
        "compare": the clipping range is the epoch's mean target -+ width
        mean absolute deviations (predictable: from the past rows only).
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
    "compare" asks whether the model predicts better than an RLS that does
    not forget. A model without forgetting (RLS) rarely does on a
    stationary stream (d = 4, 20 seeds: no alarm), but it can after an
    abrupt change: its fit and the incumbent's differ a little (their
    priors differ), and each row's difference is scaled by the most it can
    be given both predictions, so a small difference that persists counts
    in full (d = 4, coefficients redrawn at row 3000, 5 seeds: an alarm
    49-144 rows later in each). A nonlinear model (NORMARegressor) alarms
    on a stationary nonlinear stream (it beats the linear incumbent). After
    an alarm the incumbent restarts and the test waits ``10 d + 20`` rows.
    Memory: the model's, plus d^2 + d + 32 float64 of the test
    ("eprocess": 2 d^2 + 2 d + 24), 2 d of scratch and 68 int64; time per
    sample one pass over the incumbent's d x d matrix (the next row's
    product fused into the update).

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

    def __init__(self, model: Any, noise: float | None = None,
                 coef_bound: float | None = None, *, test: str | None = None,
                 delta: float = 0.1, width: float = 2.0, dtype: Any = None,
                 on_invalid: Any = None) -> None:
        self.model = _as_model(model, dtype, on_invalid)
        if test is None:
            test = "compare" if noise is None and coef_bound is None else "eprocess"
        if test not in ("compare", "eprocess"):
            raise ValueError(f"test must be 'compare' or 'eprocess', got {test!r}")
        self.test = test
        if test == "eprocess":
            if noise is None or coef_bound is None:
                raise ValueError("test='eprocess' needs noise and coef_bound")
            self.noise = check_float("noise", noise, 0.0, 1e150, low_open=True)
            self.coef_bound = check_float("coef_bound", coef_bound, 0.0, 1e150, low_open=True)
        else:
            if noise is not None or coef_bound is not None:
                raise ValueError("noise and coef_bound are the 'eprocess' test's: the "
                                 "'compare' test needs neither")
            self.noise = self.coef_bound = None
        self.delta = check_float("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        self.width = check_float("width", width, 0.0, 1e6, low_open=True)
        self.n_features = self.model.n_features
        self.dtype = self.model.dtype
        self.on_invalid = self.model.on_invalid
        self._skip = self.model._skip
        self._row_shape = self.model._row_shape
        d = self.n_features
        if test == "eprocess":
            self._span = eprocess_span(d)
            self._hyper = np.zeros(N_HYPER)
            self._hyper[HYPER_SCALE_X] = self.coef_bound / self.noise
            self._hyper[HYPER_SCALE_Y] = 1.0 / self.noise
            self._hyper[HYPER_DELTA] = self.delta
            self._codes = np.array([self._span], dtype=np.int64)
        else:
            self._span = drift_span(d)
            self._hyper = np.zeros(N_COMPARE_HYPER)
            self._hyper[HYPER_COMPARE_DELTA] = self.delta
            self._hyper[HYPER_COMPARE_WIDTH] = self.width
            self._codes = np.zeros(N_COMPARE_CODES, dtype=np.int64)
            self._codes[CODE_COMPARE_SPAN] = self._span
            self._codes[CODE_COMPARE_BURN] = drift_burn(d)
        self._y1 = np.zeros(1)
        self._m1 = np.zeros(1)
        self.reset()

    def get_params(self) -> dict[str, Any]:
        """The model as ``{"class", "params"}`` (JSON, for ``save``) and the test's parameters."""
        params = {"model": {"class": type(self.model).__name__,
                            "params": self.model.get_params()},
                  "noise": self.noise, "coef_bound": self.coef_bound, "delta": self.delta}
        if self.test == "compare":  # files of the e-process alone hold neither key
            params.update(test="compare", width=self.width)
        return params

    # ------------------------------------------------------------------ state
    def _allocate(self) -> tuple[NamedTuple, NamedTuple]:
        """The model's fresh state and workspace, with the test's arrays after them."""
        inner_state, inner_work = self.model._allocate()
        d = self.n_features
        if self.test == "eprocess":
            E = np.zeros(eprocess_size(d, False))
            python_function(eprocess_init)(E, d, self._span)
        else:
            E = np.zeros(compare_size(d, True))
            python_function(compare_init)(E, d, self._span)
        N = np.zeros(DRIFT_RECORD + N_COUNTS, dtype=np.int64)
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
        if self.test == "eprocess":
            faults += eprocess_faults(state.drift, d, self._span, False, False,  # type: ignore[attr-defined]
                                      "drift")
        else:
            faults += compare_faults(state.drift, d, self._span, True, "drift")  # type: ignore[attr-defined]
        counts = state.drift_counts  # type: ignore[attr-defined]
        if np.any(counts < 0) or counts[COUNT_ALARMS] > counts[COUNT_SEEN]:
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
        return int(self._state.drift_counts[COUNT_ALARMS])

    @property
    def drift_score_(self) -> float:
        """The test's current log e-value (an alarm at log(1 / delta))."""
        if self.test == "compare":
            return float(python_function(compare_score)(self._state.drift))
        return float(python_function(eprocess_score)(self._state.drift, self.n_features))

    @property
    def last_drift_score_(self) -> float:
        """The log e-value that raised the latest alarm (NaN before any)."""
        return float(self._state.drift[GLOBAL_LAST]) if self.n_drifts_ else float("nan")

    # --------------------------------------------------------------- learning
    def learn_one(self, x: Any, y: Any) -> float:
        """The model learns (x, y); then its prediction (made before y) goes to the test.

        Returns the model's prequential prediction. A sample the model
        refuses raises (``on_invalid="raise"``) with nothing changed."""
        yhat = self.model.learn_one(x, y)
        self._y1[0] = np.asarray(y, dtype=np.float64).reshape(-1)[0]
        self._m1[0] = yhat
        xr = self.model._row(x)
        self._run(xr.reshape((1, xr.shape[0])), self._y1, self._m1, 1)
        return yhat

    def _run(self, X: np.ndarray, Y: np.ndarray, M: np.ndarray, rows: int) -> int:
        if self.test == "compare":
            return compare_drift_run(X, Y, M, rows, self._E, self._N, self._scratch,
                                     self._hyper, self._codes, DRIFT_RECORD, N_COUNTS)
        return drift_run(X, Y, M, rows, self._E, self._N, self._scratch, self._hyper,
                         self._codes)

    def _check_X(self, X: Any) -> np.ndarray:
        return self.model._check_X(X)

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return self.model._targets_many(Y, n)

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        return self.model._invalid_message(x, y, where)

    def _learn_block(self, X, Y, out, **kw):  # type: ignore[override]
        bad = self.model._learn_block(X, Y, out, **kw)
        self._run(X, Y, out, X.shape[0] if bad < 0 else bad)
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
            {"model": {"class": "DFOP", "params": {"n_features": 4, "forgetting": 0.05}}},
            {"model": {"class": "DFOP", "params": {"n_features": 3, "forgetting": "auto"}},
             "delta": 0.01, "width": 2.0},
            {"model": {"class": "DFOP", "params": {"n_features": 4, "forgetting": 0.05}},
             "noise": 1.0, "coef_bound": 10.0},
            {"model": {"class": "DFOP", "params": {"n_features": 3, "forgetting": "auto"}},
             "noise": 0.5, "coef_bound": 5.0, "delta": 0.01},
        ]
