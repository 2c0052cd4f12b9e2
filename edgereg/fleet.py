"""Fleet: K independent DFOP models of one configuration, updated in one call.

A gateway that serves many sensors (one model per sensor: a soft sensor per
machine, a calibration per probe) would otherwise pay one Python dispatch per
model per call. :class:`Fleet` stacks the state of K :class:`~edgereg.DFOP`
models of the same configuration into contiguous arrays

    W (K, d),  P (K, d, d),  scratch (K, d) x 3,  counters (K, 4), (K, 1)

and updates all of them from one call of a numba kernel that runs
``prange`` over the models. Each model runs *the DFOP kernels themselves*
(``_dfop_learn_many`` / ``_dfop_learn_one`` on the model's slices,
which are views inside njit), so a fleet is bit for bit the same as K separate
:class:`~edgereg.DFOP` objects fed the same rows (docs/algorithms/dfop.md; tested),
and nothing is allocated per step.
The kernels are ``edgereg/_kernels/fleet.py``.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np

from ._base import (
    OnlineModel,
    StateFileError,
    aligned_zeros,
    block_at,
    register_format,
    symmetric_faults,
)
from ._jit import python_function
from ._kernels.dfop import LEARNT_COUNTS, LEARNT_FORGOTTEN, N_CODES, N_HYPER, N_LEARNT, scratch_size
from ._kernels.fleet import (
    _fleet_learn_many,
    _fleet_learn_one,
    _fleet_predict_many,
    _fleet_predict_one,
)
from ._validate import (
    NOT_A_LABEL,
    _as_numeric_array,
    check_dtype,
    check_int,
    check_on_invalid,
    describe_nonfinite,
    is_label,
    label_signs,
)
from .dfop import DFOP, dfop_constants, init_dfop_parameters

__all__ = ["Fleet", "FleetState", "FleetInvalidInputError"]

FLEET_FORMAT = "edgereg-fleet-1"


def _fleet_kind(params: dict[str, Any]) -> dict[str, Any]:
    """A model's parameters less those a fleet does not take, at their defaults
    (no intervals, missing inputs rejected, the default arithmetic): such a model
    is one a slot can hold."""
    optional = {"coverage": None, "missing": "reject", "arithmetic": "auto"}
    return {k: v for k, v in params.items() if not (k in optional and v == optional[k])}


class FleetState(NamedTuple):
    """What a fleet has learnt: K (d^2 + d) values of the dtype, K 5 of 8 bytes.

    Row k of every field is the :class:`~edgereg.dfop.DFOPState` field of model k.
    """

    w: np.ndarray  # (K, d) weights
    P: np.ndarray  # (K, d, d) inverse discounted correlations, exactly symmetric
    forgotten: np.ndarray  # float64 (K, 1): sum of mu since each model's last refresh
    counts: np.ndarray  # int64 (K, 4): learnt, skipped, steps since refresh, next coordinate


class FleetWork(NamedTuple):
    """A fleet's workspace: K (3s + 1) of 8 bytes of scratch (no meaning
    between calls; s is d rounded up to 8) and DFOP's constants, shared by
    the K models."""

    scratch: np.ndarray  # float64 (K, 3s): each model's DFOP scratch, 64-byte aligned
    status: np.ndarray  # int64 (K,) per model, its first invalid row (-1: none)
    hyper: np.ndarray  # float64 (N_HYPER,): DFOP's (index names in _kernels/dfop.py)
    codes: np.ndarray  # int64 (N_CODES,)


def _allocate(
    n_models: int, n_features: int, p0: float, dtype: np.dtype, forgetting: float,
    period: int, keep_prior: bool, skip: bool,
) -> tuple[FleetState, FleetWork]:
    """Model k's blocks are row k of DFOP's (``_kernels/dfop.py``'s header)."""
    K, d = n_models, n_features
    PW = aligned_zeros((K, d + 1, d), dtype)  # as DFOP's (dfop._allocate)
    idx = np.arange(d)
    PW[:, idx, idx] = p0
    L = np.zeros((K, N_LEARNT), dtype=np.float64)
    state = FleetState(
        w=PW[:, d],
        P=PW[:, :d],
        forgotten=L[:, LEARNT_FORGOTTEN : LEARNT_FORGOTTEN + 1],
        counts=L[:, LEARNT_COUNTS : LEARNT_COUNTS + 4].view(np.int64),
    )
    work = FleetWork(
        scratch=aligned_zeros((K, python_function(scratch_size)(d))),
        status=np.zeros(K, dtype=np.int64),
        hyper=np.zeros(N_HYPER, dtype=np.float64),
        codes=np.zeros(N_CODES, dtype=np.int64),
    )
    dfop_constants(forgetting, p0, period, keep_prior, skip, work.hyper, work.codes)
    return state, work


# ----------------------------------------------------------------------- class
class FleetInvalidInputError(ValueError):
    """Some models met a NaN/inf (or an unknown label) in their rows.

    Attributes
    ----------
    rows : ndarray of int64, shape (n_models,)
        For each model, the row at which it stopped (-1: it learnt its whole
        block). ``learn_one`` uses row 0 for the one sample.
    predictions : ndarray
        The prequential predictions the call would have returned; entries at
        and after a model's stopping row are meaningless.
    """

    def __init__(self, message: str, rows: np.ndarray, predictions: np.ndarray) -> None:
        super().__init__(message)
        self.rows = rows
        self.predictions = predictions

    @property
    def models(self) -> np.ndarray:
        """Indices of the models that stopped."""
        return np.flatnonzero(self.rows >= 0)


class Fleet(OnlineModel):
    r"""K independent DFOP models of one configuration, updated together (docs/algorithms/dfop.md).

    Every model k minimises its own discounted squared loss exactly as a
    :class:`~edgereg.DFOP` with the same parameters would,

    .. math::

        w^{(k)}_t = \arg\min_w \frac{\Lambda_t}{p_0}\|w\|^2
              + \sum_{i \le t} (1-\mu)^{t-i} (y^{(k)}_i - w^\top x^{(k)}_i)^2,

    with the G-DFOP update of :mod:`edgereg.dfop`. The states are stacked and a
    single call updates all models in parallel (numba ``prange`` over models,
    one thread per core), running the DFOP kernels on each model's slice:
    results are bit for bit those of K separate ``DFOP`` objects.

    Parameters
    ----------
    n_models : int
        K, the number of models (e.g. one per sensor).
    n_features : int
        Input dimension d (the same for every model).
    forgetting, task, p0, keep_prior, dtype
        As for :class:`~edgereg.DFOP`; shared by all models.
        ``forgetting="auto"`` makes every model a self-tuning
        :class:`~edgereg.DFOPBank` (the fleet is then a
        :class:`~edgereg.bank.FleetBank`).
    on_invalid : {"raise", "skip"}
        What a NaN/inf (or, for classification, a label outside {-1, 0, 1})
        in model k's row does. Models never affect each other:

        * ``"raise"``: model k stops at its first invalid row t: rows 0..t-1
          are learnt, row t and later rows are not, and model k's state is
          exactly as after row t-1. **Every other model learns its whole
          block** (or its one sample). Then a :class:`FleetInvalidInputError`
          (a ``ValueError``) names (model k, row t) for every model that
          stopped; its ``rows`` attribute holds each model's stopping row
          (-1: none) so the caller can resume model k from row t + 1.
        * ``"skip"``: invalid rows are skipped and counted per model in
          ``n_skipped_``; no error.

    Attributes
    ----------
    coef_ : ndarray of shape (n_models, n_features)
    n_seen_, n_skipped_ : ndarray of int64, shape (n_models,)

    Notes
    -----
    Memory: K (d^2 + d) values of ``dtype`` plus K (3s + 6) 8-byte scratch and
    counters (s = d rounded up to 8), fixed at construction; :meth:`nbytes`
    gives the exact figure (K = 10,000, d = 10: 13.1 MB in float64, 8.7 MB in
    float32). Per-step cost
    O(d^2) per model; no allocation per step. Calls with a different block
    length n per model are not supported: split the block.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> from edgereg.fleet import Fleet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3, 50, 2))               # 3 sensors, 50 rows each
    >>> y = X @ [1.0, -1.0]
    >>> fleet = Fleet(3, 2, forgetting=0.01)
    >>> yhat = fleet.learn_many(X, y)                 # (3, 50) prequential predictions
    >>> single = DFOP(2, 0.01)
    >>> bool(np.array_equal(single.learn_many(X[1], y[1]), yhat[1]))
    True
    >>> fleet.coef_.round(3)
    array([[ 1., -1.],
           [ 1., -1.],
           [ 1., -1.]])
    """

    _auto_bank = "FleetBank"  # Fleet(..., forgetting="auto")

    def __init__(
        self,
        n_models: int,
        n_features: int,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self.n_models = check_int("n_models", n_models)
        self.n_features = check_int("n_features", n_features)
        self.dtype = check_dtype(dtype)
        self.on_invalid = check_on_invalid(on_invalid)
        self._skip = self.on_invalid == "skip"
        init_dfop_parameters(self, self.n_features, forgetting, task, p0, keep_prior)
        self.reset()

    # ------------------------------------------------------------------ state
    # reset, state, nbytes, get_params, save, pickling: OnlineModel's.
    @property
    def _task(self) -> str:  # type: ignore[override]
        return self.task

    def _allocate(self) -> tuple[FleetState, FleetWork]:
        return _allocate(self.n_models, self.n_features, self.p0, self.dtype, self.forgetting,
                         self._period, self.keep_prior, self._skip)

    def _bind_state(self) -> None:
        s = self._state
        K, d = s.w.shape
        self._PW = block_at(s.P, (K, d + 1, d))  # the blocks (``_allocate``)
        self._L = s.forgotten.base

    @property
    def coef_(self) -> np.ndarray:
        """Weights of every model, shape (n_models, n_features) (a copy)."""
        return self._state.w.copy()

    @property
    def n_seen_(self) -> np.ndarray:  # type: ignore[override]
        """Samples learnt by each model, shape (n_models,)."""
        return self._state.counts[:, 0].copy()

    @property
    def n_skipped_(self) -> np.ndarray:  # type: ignore[override]
        """Samples skipped as invalid by each model (``on_invalid="skip"``)."""
        return self._state.counts[:, 1].copy()

    def _dfop_params(self) -> dict[str, Any]:
        p = self.get_params()
        del p["n_models"]
        return p

    def model(self, k: int) -> DFOP:
        """A standalone :class:`~edgereg.DFOP` holding a copy of model k's state.

        It continues exactly as model k would (bit for bit); changing it does
        not change the fleet.
        """
        k = self._check_index(k)
        m = DFOP(**self._dfop_params())  # a DFOPBank when forgetting="auto"
        m._copy_state_in({field: value[k] for field, value in self._state._asdict().items()},
                         source=f"fleet model {k}")
        return m

    def set_model(self, k: int, model: DFOP) -> None:
        """Copy the state of a :class:`~edgereg.DFOP` with the same parameters into slot k."""
        k = self._check_index(k)
        if not isinstance(model, DFOP) or _fleet_kind(model.get_params()) != self._dfop_params():
            raise ValueError(
                f"model must be a DFOP with parameters {self._dfop_params()}, got {model!r}"
            )
        for field, value in model._state._asdict().items():
            getattr(self._state, field)[k] = value

    def _check_index(self, k: Any) -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"model index must be an integer, got {k!r}")
        if not -self.n_models <= k < self.n_models:
            raise IndexError(f"model index {k} out of range for {self.n_models} models")
        return int(k) % self.n_models

    # ------------------------------------------------------------- validation
    def _check_X(self, X: Any, ndim: int = 3) -> np.ndarray:  # type: ignore[override]
        arr = _as_numeric_array(X, "X", self.dtype)
        K, d = self.n_models, self.n_features
        if ndim == 3 and (arr.ndim != 3 or arr.shape[0] != K or arr.shape[2] != d):
            raise ValueError(
                f"X must be a 3-D array of shape (n_models={K}, n_samples, n_features={d}), "
                f"got shape {arr.shape}"
            )
        if ndim == 2 and arr.shape != (K, d):
            raise ValueError(
                f"X must be a 2-D array of shape (n_models={K}, n_features={d}) (one sample "
                f"per model), got shape {arr.shape}"
            )
        return arr

    def _targets(self, y: Any, shape: tuple[int, ...]) -> np.ndarray:
        arr = np.asarray(y)
        if arr.shape != shape:
            raise ValueError(f"y must be an array of shape {shape}, got shape {arr.shape}")
        if self._classify:
            return label_signs(arr.reshape(-1), arr.size).reshape(shape)
        return _as_numeric_array(arr, "y", np.dtype(np.float64))

    def _finish(self, scores: np.ndarray) -> np.ndarray:
        if self._classify:
            return np.where(scores >= 0.0, 1.0, -1.0)
        return scores

    def _raise_invalid(
        self, X: np.ndarray, y_shown: Any, rows: np.ndarray, out: np.ndarray, one: bool
    ) -> None:
        bad = np.flatnonzero(rows >= 0)
        y_arr = np.asarray(y_shown)
        parts = []
        for k in bad[:5]:
            t = int(rows[k])
            x = X[k] if one else X[k, t]
            yv = y_arr[k] if one else y_arr[k, t]
            why = []
            nf = describe_nonfinite(np.asarray(x, dtype=np.float64))
            if nf:
                why.append(f"non-finite input {nf}")
            if not np.isfinite(float(yv)):
                why.append(f"non-finite or invalid target y={yv!r}")
            elif self._classify and not is_label(yv):
                why.append(f"y={float(yv)!r} {NOT_A_LABEL}")
            if not why:
                why.append("update not finite or not positive definite (input too large)")
            where = f"model {k}" if one else f"model {k}, row {t}"
            parts.append(f"{where}: {'; '.join(why)}")
        more = f" (and {bad.size - 5} more models)" if bad.size > 5 else ""
        if one:
            tail = (
                "; those models are unchanged, every other model learnt its sample "
                "(use on_invalid='skip' to skip such samples)"
            )
        else:
            tail = (
                "; each of those models learnt the rows before its invalid row and not that "
                "row or the rows after it, every other model learnt its whole block (the "
                "error's .rows gives each model's stopping row, -1 for none; use "
                "on_invalid='skip' to skip such rows)"
            )
        raise FleetInvalidInputError(
            "; ".join(parts) + more + tail, rows.copy(), self._finish(out)
        )

    # --------------------------------------------------------------- learning
    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """Model k learns the block (X[k], y[k]), prequentially, for every k at once.

        Parameters
        ----------
        X : array of shape (n_models, n_samples, n_features)
        y : array of shape (n_models, n_samples)

        Returns
        -------
        ndarray of shape (n_models, n_samples)
            Entry (k, t) is model k's prediction for X[k, t] made before
            learning it; row k equals ``DFOP.learn_many(X[k], y[k])`` bit for bit.

        Raises
        ------
        FleetInvalidInputError
            With ``on_invalid="raise"`` when some model meets an invalid row
            (see the class docstring for what was learnt).
        """
        X = self._check_X(X, 3)
        Y = self._targets(y, X.shape[:2])
        out = np.empty(X.shape[:2], dtype=np.float64)
        if self._learn_blocks(X, Y, out):
            self._raise_invalid(X, y, self._work.status, out, one=False)
        return self._finish(out)

    def _learn_blocks(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        """The block kernel: status per model in work.status; returns how many stopped."""
        w = self._work
        return _fleet_learn_many(X, Y, out, self._PW, self._L, w.scratch, w.hyper, w.codes,
                                 w.status)

    def _learn_samples(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        """The one-sample kernel: status per model in work.status; returns how many failed."""
        w = self._work
        return _fleet_learn_one(X, Y, out, self._PW, self._L, w.scratch, w.hyper, w.codes,
                                w.status)

    def learn_one(self, X: Any, y: Any) -> np.ndarray:
        """Every model k learns its one sample (X[k], y[k]); return the predictions.

        Parameters
        ----------
        X : array of shape (n_models, n_features)
        y : array of shape (n_models,)

        Returns
        -------
        ndarray of shape (n_models,)
            Model k's prediction for X[k] made before learning it; equal bit
            for bit to ``DFOP.learn_one(X[k], y[k])``.
        """
        X = self._check_X(X, 2)
        Y = self._targets(y, (self.n_models,))
        out = np.empty(self.n_models, dtype=np.float64)
        nbad = self._learn_samples(X, Y, out)
        w = self._work
        if nbad and not self._skip:
            rows = np.where(w.status != 0, 0, -1).astype(np.int64)
            self._raise_invalid(X, y, rows, out, one=True)
        return self._finish(out)

    def decision_function_one(self, X: Any) -> np.ndarray:
        """Raw scores w_k^T X[k], shape (n_models,)."""
        X = self._check_X(X, 2)
        out = np.empty(self.n_models, dtype=np.float64)
        self._predict_samples(X, out)
        return out

    def _predict_samples(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_predict_one(X, self._PW, out)

    def _predict_blocks(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_predict_many(X, self._PW, out)

    def predict_one(self, X: Any) -> np.ndarray:
        """Predict one sample per model without learning; X (n_models, n_features)."""
        return self._finish(self.decision_function_one(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores for a block per model; X (n_models, n, d) -> (n_models, n)."""
        X = self._check_X(X, 3)
        out = np.empty(X.shape[:2], dtype=np.float64)
        self._predict_blocks(X, out)
        return out

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block per model without learning; X (n_models, n, d) -> (n_models, n)."""
        return self._finish(self.decision_function(X))

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """DFOP's invariants (``DFOP._state_faults``) for every model of the fleet."""
        s: FleetState = state  # type: ignore[assignment]
        d = self.n_features
        faults = super()._state_faults(s)
        if np.any(s.counts[:, :2] < 0):
            faults.append(("counts", "holds a negative sample count"))
        bad = np.flatnonzero((s.counts[:, 3] < 0) | (s.counts[:, 3] >= d))
        if bad.size:
            faults.append(("counts", f"of model {bad[0]} holds the next refresh coordinate = "
                                     f"{s.counts[bad[0], 3]}, outside 0..{d - 1}"))
        if np.any(s.forgotten < 0.0) or np.any(s.forgotten > self._period):
            faults.append(("forgotten", f"holds a value outside 0..{self._period}"))
        for k in range(self.n_models):
            for field, reason in symmetric_faults("P", s.P[k]):
                faults.append((field, f"of model {k} {reason}"))
                break
        return faults

    # ----------------------------------------------------------- contracts
    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_models": 3, "n_features": 4},
            {"n_models": 2, "n_features": 3, "forgetting": 0.05, "task": "classification"},
            {"n_models": 2, "n_features": 5, "dtype": "float32", "keep_prior": False},
        ]


def _read_fleet_format_1(path: str, contents: dict[str, np.ndarray]) -> Fleet:
    """A fleet file in the format of earlier versions (``edgereg-fleet-1``:
    the fleet's parameters and state, with scratch fields that are ignored);
    ``edgereg.load`` and ``Fleet.load`` read it through ``register_format``."""
    try:
        fleet = Fleet(**json.loads(str(contents["params"])))
    except (ValueError, TypeError, KeyError) as exc:
        raise StateFileError(f"{path!r} has invalid fleet parameters: {exc}") from exc
    state = {k[len("state."):]: v for k, v in contents.items() if k.startswith("state.")}
    fleet._copy_state_in(state, source=repr(path))
    return fleet


register_format(FLEET_FORMAT, _read_fleet_format_1)
