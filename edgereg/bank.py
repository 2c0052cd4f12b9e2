"""DFOPBank: DFOP whose forgetting factor tunes itself (docs/algorithms/dfop.md).

``DFOP(n_features, forgetting="auto")`` builds one. It runs K DFOPs side by
side, one per forgetting factor of a log grid (by default 0, 1e-3, 3e-3,
1e-2, 3e-2, 0.1), every one learning every sample, and predicts
with their predictions weighted by fixed share (Herbster & Warmuth 1998):
exponential weights on each member's squared error, mixed with a little of
the uniform weights at every step so that the lead can change hands when
the drift rate changes. ``forgetting_`` is the weighted mean of the grid,
the drift rate the bank has learnt.

The kernels and the aggregation's equations are ``_kernels/bank.py``; the
study that chose the method and its settings is docs/design/auto-forgetting.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, aligned_zeros, block_at, index_faults, symmetric_faults
from ._interval import BankIntervals
from ._jit import FirstCall, python_function
from ._kernels.bank import (
    CLASSIFY,
    ETA,
    LIMIT,
    SHARE,
    SKIP,
    _bank_learn_many,
    _bank_learn_one,
    _bank_predict_many,
    _bank_predict_one,
    _bank_views,
    bank_size,
)
from ._kernels.dfop import COUNTS, FORGOTTEN, _packed_views
from ._kernels.fleet import (
    _fleet_bank_learn_many,
    _fleet_bank_learn_one,
    _fleet_bank_predict_many,
    _fleet_bank_predict_one,
)
from ._validate import check_dtype, check_float, check_int, check_on_invalid
from .dfop import DFOP, dfop_constants, init_dfop_parameters, init_interval, refresh_period
from .fleet import Fleet

__all__ = ["DFOPBank", "FleetBank", "DEFAULT_GRID", "STUDY_GRID"]

#: The forgetting factors of the default bank: the study's grid without 1e-4
#: and 3e-4, which were never the best fixed choice on the paper's streams;
#: the 8-member grid (STUDY_GRID) is within 0.1 point of it on every stream
#: and 1.3x slower (docs/design/auto-forgetting.md).
DEFAULT_GRID = (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)
#: The grid on which the study chose the aggregation's settings.
STUDY_GRID = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)


class DFOPBankState(NamedTuple):
    """What a bank has learnt: K DFOP states, the weights and the target scale."""

    w: np.ndarray  # (K, d) the members' weights
    P: np.ndarray  # (K, d, d) the members' P, each exactly symmetric
    forgotten: np.ndarray  # float64 (K, 1): each member's DFOP ``forgotten``
    member_counts: np.ndarray  # int64 (K, 4): each member's DFOP ``counts``
    weights: np.ndarray  # float64 (K,): the fixed-share weights v
    scale: np.ndarray  # float64 (3,): count, mean and variance of the targets (regression)
    counts: np.ndarray  # int64 (2,): samples learnt, skipped


class DFOPBankIntervalState(NamedTuple):
    """A bank with calibrated intervals (``coverage``): its state and the interval's
    bookkeeping (``_kernels/interval.py``)."""

    w: np.ndarray
    P: np.ndarray
    forgotten: np.ndarray
    member_counts: np.ndarray
    weights: np.ndarray
    scale: np.ndarray
    counts: np.ndarray
    interval: np.ndarray  # float64 (6,)


class DFOPBankWork(NamedTuple):
    """The bank's workspace: the members' scratch and constants, the bank's, its scratch."""

    scratch: np.ndarray  # float64 (K, 3s): each member's DFOP scratch (dfop.scratch_size)
    member_hyper: np.ndarray  # float64 (K, 2): each member's mu, p0
    member_codes: np.ndarray  # int64 (K, 3): each member's period, keep_prior, skip
    hyper: np.ndarray  # float64 (2,): eta, alpha (_kernels/bank.py)
    codes: np.ndarray  # int64 (2,): classify, skip
    predictions: np.ndarray  # float64 (K,): the members' predictions, then losses
    chunk: np.ndarray  # float64 (K * CHUNK,): the members' predictions of a chunk
    block: np.ndarray  # float64: A, the block all the above (and the bank's learnt fields) view


def _allocate_banks(
    n_banks: int, n_features: int, grid: tuple[float, ...], p0: float, dtype: np.dtype,
    keep_prior: bool, classify: bool, skip: bool, eta: float, share: float,
) -> tuple[DFOPBankState, DFOPBankWork]:
    """n_banks banks' state and workspace, every field with a leading axis of n_banks.

    Two blocks (``_kernels/bank.py``): PW (n_banks, K, d + 1, d) and A
    (n_banks, bank_size), each row of A starting on a 64-byte boundary. A
    DFOPBank is row 0 of one bank; a FleetBank's model k is row k.
    """
    F, d, K = n_banks, n_features, len(grid)
    PW = aligned_zeros((F, K, d + 1, d), dtype)  # as DFOP's (dfop._allocate)
    PW[:, :, np.arange(d), np.arange(d)] = p0
    size = python_function(bank_size)(K, d)
    A = aligned_zeros((F, _padded(size)))[:, :size]
    for row in A:
        hyper, codes, _, _, v, _, B, _ = python_function(_bank_views)(row, K, d)
        hyper[ETA], hyper[SHARE] = eta, share
        codes[CLASSIFY], codes[SKIP] = classify, skip
        v[:] = 1.0 / K
        for member, mu in zip(B.reshape(K, -1), grid, strict=True):
            _, _, h, c = python_function(_packed_views)(member, d)
            # Members skip what their state cannot take; the bank has refused
            # every invalid sample before they see it (_kernels/bank.py).
            dfop_constants(mu, p0, refresh_period(d, mu), keep_prior, True, h, c)
    # Every field over all banks (and members): bank 0's (member 0's) own
    # views, stacked, so the layout is written once (_bank_views, _packed_views).
    hyper, codes, counts, scale, v, q, B, chunk = (
        _stacked(A, view) for view in python_function(_bank_views)(A[0], K, d)
    )
    members = B.reshape(F, K, -1)  # [f, k]: bank f's member k's DFOP block (and padding)
    scratch, L, member_hyper, member_codes = (
        _stacked(members, view) for view in python_function(_packed_views)(members[0, 0], d)
    )
    state = DFOPBankState(
        w=PW[:, :, d],
        P=PW[:, :, :d],
        forgotten=L[..., FORGOTTEN : FORGOTTEN + 1],
        member_counts=L[..., COUNTS : COUNTS + 4].view(np.int64),
        weights=v,
        scale=scale,
        counts=counts.view(np.int64),
    )
    work = DFOPBankWork(scratch, member_hyper, member_codes.view(np.int64), hyper,
                        codes.view(np.int64), q, chunk, A)
    return state, work


def _padded(size: int) -> int:
    """A bank's row of A with its padding: rows start on 64-byte boundaries."""
    return (size + 7) // 8 * 8


def _stacked(rows: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The entries of every ``rows[..., :]`` that ``view`` covers in the first one."""
    offset = (view.__array_interface__["data"][0]
              - rows.__array_interface__["data"][0]) // rows.itemsize
    return rows[..., offset : offset + view.size]


def bank_faults(s: DFOPBankState, grid: tuple[float, ...], d: int) -> list[tuple[str, str]]:
    """(field, reason) for every invariant one bank's state breaks (none: usable).

    Every member's DFOP invariants (``DFOP._state_faults``); weights that are
    a distribution; a target scale that is one.
    """
    faults = []
    mc = s.member_counts
    if np.any(mc > np.iinfo(np.int64).max // 4) or np.any(mc[:, :3] < 0):
        faults.append(("member_counts", "holds a count that is negative or beyond 2^61"))
    if np.any(s.counts < 0):
        faults.append(("counts", f"holds a negative sample count {s.counts.tolist()}"))
    for k, mu in enumerate(grid):
        faults += index_faults("member_counts", int(mc[k, 3]), 0, d - 1,
                               f"member {k}'s next refresh coordinate")
        period = refresh_period(d, mu)
        if not 0.0 <= float(s.forgotten[k, 0]) <= period:
            faults.append(("forgotten", f"member {k} holds {float(s.forgotten[k, 0])!r}, "
                                        f"outside 0..{period}"))
        faults += symmetric_faults("P", s.P[k])
    v = s.weights
    if not (np.all(v > 0.0) and abs(float(v.sum()) - 1.0) < 1e-9):
        faults.append(("weights", "are not positive weights of sum 1"))
    count, mean, variance = (float(v) for v in s.scale)
    # The targets a bank learns are within LIMIT: so is their mean, and their
    # variance within (2 LIMIT)^2; beyond, the next update overflows (found
    # by the hostile state-file test: a mean of 5e299).
    if not (count >= 0.0 and abs(mean) <= LIMIT and 0.0 <= variance <= 4.0 * LIMIT * LIMIT):
        faults.append(("scale", f"holds count {count!r}, mean {mean!r}, variance {variance!r}: "
                                f"not the statistics of targets within {LIMIT:g}"))
    return faults


def _check_auto(forgetting: Any, what: str) -> None:
    if not (isinstance(forgetting, str) and forgetting == "auto"):
        raise ValueError(f"a {what}'s forgetting must be 'auto', got {forgetting!r}")


def _init_bank_parameters(model: Any, grid: Any, learning_rate: Any, share: Any) -> None:
    """The bank's own parameters (DFOP's are set by ``init_dfop_parameters``)."""
    model.forgetting = "auto"
    model.forgetting_grid = _check_grid(grid)
    model.learning_rate = check_float("learning_rate", learning_rate, 0.0, 1e6, low_open=True)
    model.share = check_float("share", share, 0.0, 1.0, high_open=True)
    model._grid = np.array(model.forgetting_grid)


class BankModel:
    """What every bank model shares (``DFOPBank``, ``SparseDFOPBank``): its blocks
    ``_PW`` and ``_B`` (A), memory, invariants, learnt attributes and errors."""

    _state: Any
    _PW: np.ndarray
    _B: np.ndarray
    _grid: np.ndarray
    forgetting_grid: tuple[float, ...]

    def nbytes(self) -> int:
        """Bytes of the bank's two blocks (every field is a view of one of them;
        as for every model, not the <= 64 bytes before each that align it)."""
        return int(self._PW.nbytes + self._B.nbytes)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:  # type: ignore[override]
        faults = OnlineModel._state_faults(self, state)  # type: ignore[arg-type]
        return faults + bank_faults(state, self.forgetting_grid, self._dfop_dimension())  # type: ignore[arg-type]

    # ------------------------------------------------------------ attributes
    @property
    def forgetting_weights_(self) -> np.ndarray:
        """The members' weights u (sum 1), in the order of ``forgetting_grid``."""
        v = self._state.weights
        return v / v.sum()

    @property
    def forgetting_(self) -> float:
        """The learnt drift rate: the weighted mean of the grid, sum_k u_k mu_k."""
        return float(self.forgetting_weights_ @ self._grid)

    @property
    def member_coef_(self) -> np.ndarray:
        """Every member's weights, shape (K, n_features) (a copy)."""
        return np.array(self._state.w, dtype=np.float64)

    @property
    def coef_(self) -> np.ndarray:
        """sum_k u_k w_k: the bank's linear predictor for regression (a copy)."""
        return self.forgetting_weights_ @ self.member_coef_

    @property
    def covariance_(self) -> np.ndarray:
        """Every member's P, shape (K, n_features, n_features) (a copy)."""
        return np.array(self._state.P)

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block in one kernel call; return the bank's prequential predictions.

        Identical to calling :meth:`learn_one` row by row. ``forgetting``
        must be None: the bank sets its members' own.
        """
        if forgetting is not None:
            raise ValueError("a DFOPBank learns its forgetting: learn_many takes no "
                             "forgetting schedule (use DFOP with a number for one)")
        return self._finish(self._learn_many_checked(X, y))

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        message = super()._invalid_message(x, y, where)  # type: ignore[misc]
        if not isinstance(x, np.ndarray):  # SparseDFOP's (indices, values)
            x = np.asarray(x[1]) if isinstance(x, tuple) else np.zeros(1)
        values = np.append(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
        if np.all(np.isfinite(values)) and np.any(np.abs(values) > LIMIT):
            return (f"{where}: a value beyond the bank's range |x_j|, |y| <= {LIMIT:g}. "
                    f"The model state is unchanged (use on_invalid='skip' to skip such samples)")
        return message


class DFOPBank(BankIntervals, BankModel, DFOP):
    r"""DFOP with a self-tuning forgetting factor: a bank of DFOPs over a grid of mu.

    Built by ``DFOP(n_features, forgetting="auto")`` (or directly). K members,
    one per forgetting factor of ``forgetting_grid``, each an exact
    :class:`DFOP` learning every sample; the bank predicts

    .. math::

        \hat y_t = \sum_k u_{t,k}\, q_{t,k}, \qquad
        u_{t+1,k} \propto (1 - \alpha)\, \frac{u_{t,k} e^{-\eta \ell_{t,k}}}
        {\sum_j u_{t,j} e^{-\eta \ell_{t,j}}} + \frac{\alpha}{K},

    q_k the member's prediction (clipped to [-1, 1] for classification) and
    l_k its squared error, divided by the targets' running variance for
    regression (fixed share, ``_kernels/bank.py``). The weights follow the
    member that predicts best *now*, so the bank forgets fast while the
    world drifts fast and slowly while it is still.

    Parameters
    ----------
    n_features, task, p0, keep_prior, dtype, on_invalid
        As for :class:`DFOP`; every member has them.
    forgetting : "auto"
        The only value (the bank chooses mu).
    forgetting_grid : sequence of float, default ``DEFAULT_GRID``
        The members' forgetting factors, each in [0, 1), distinct, 1 to 64
        of them. One member is plain DFOP (its state and predictions bit for
        bit).
    learning_rate : float, default 2.0
        eta of the exponential weights (on losses of order 1: the squared
        error of +-1 labels, or divided by the targets' variance).
    share : float, default 1e-3
        alpha of fixed share, in [0, 1): the weight every member keeps.
    coverage : float in (0, 1), optional
        Calibrated prediction intervals, as for :class:`DFOP` but on the
        bank's residuals without a leverage term (v = 1), their noise level
        forgotten at ``BANK_NOISE_FORGETTING`` (docs/design/intervals.md).

    Attributes
    ----------
    forgetting_ : float
        The drift rate learnt: sum_k u_k mu_k.
    forgetting_weights_ : ndarray of shape (K,)
        The members' weights u (sum 1), in the order of ``forgetting_grid``.
    coef_ : ndarray of shape (n_features,)
        sum_k u_k w_k (for regression, the bank's linear predictor).
    member_coef_ : ndarray of shape (K, n_features)
        Every member's weights.

    Notes
    -----
    Memory: K times a DFOP's (K (d^2 + d) values of the dtype, K (3s + 10)
    float64 with s = d rounded up to 8, each member's rounded up to 8), plus
    2K + 9 float64 and the predictions of a chunk of 32 rows per member:
    ``nbytes()``. d = 10, K = 6: 10.1 KB in float64 (1.3 KB for one DFOP).

    A sample is invalid for the bank (raise or skip, as ``on_invalid``
    says) when any value is NaN, inf or beyond 1e100 in magnitude; a valid
    sample that one member's state cannot take (rare: DFOP's guard) is
    skipped by that member alone and counted in its ``member_counts``.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> from edgereg.streams import drift_regimes
    >>> X, y, _, _ = drift_regimes(n_samples=6000, seed=0)
    >>> model = DFOP(X.shape[1], forgetting="auto")
    >>> type(model).__name__
    'DFOPBank'
    >>> _ = model.learn_many(X, y)
    >>> 0.0 <= model.forgetting_ < 0.1
    True
    """

    def __init__(
        self,
        n_features: int,
        forgetting: str = "auto",
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        forgetting_grid: Any = DEFAULT_GRID,
        learning_rate: float = 2.0,
        share: float = 1e-3,
        coverage: float | None = None,
    ) -> None:
        _check_auto(forgetting, "DFOPBank")
        self._init_common(n_features, dtype, on_invalid)
        init_dfop_parameters(self, n_features, 0.0, task, p0, keep_prior)
        _init_bank_parameters(self, forgetting_grid, learning_rate, share)
        init_interval(self, coverage)
        self.reset()

    def _allocate(self) -> tuple[DFOPBankState, DFOPBankWork]:  # type: ignore[override]
        state, work = _allocate_banks(
            1, self.n_features, self.forgetting_grid, self.p0, self.dtype, self.keep_prior,
            self._classify, self._skip, self.learning_rate, self.share,
        )
        return self._with_interval(DFOPBankState(*(f[0] for f in state)),
                                   DFOPBankWork(*(f[0] for f in work)))

    def _bind_state(self) -> None:
        s = self._state
        K, d = s.w.shape
        self._PW = block_at(s.P, (K, d + 1, d))
        self._B = self._work.block  # A: learn_one's kernel takes (x, y, PW, A)
        self._bind_interval()
        self._learn_one_kernel = FirstCall(self._packed_kernel, self, "_learn_one_kernel")

    _packed_kernel = staticmethod(_bank_learn_one)
    _interval_state = DFOPBankIntervalState

    # ------------------------------------------------------------ prediction
    def decision_function_one(self, x: Any) -> float:
        """The bank's raw score for one sample."""
        return _bank_predict_one(self._row(x), self._PW, self._B)

    def predict_one(self, x: Any) -> float:
        """Predict one sample (the sign of the score for classification)."""
        score = _bank_predict_one(self._row(x), self._PW, self._B)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def _predict_block(self, X, out):  # type: ignore[override]
        _bank_predict_many(X, self._PW, self._B, out)

    # --------------------------------------------------------------- learning
    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        return self._after_block(X, Y, out, _bank_learn_many(X, Y, out, self._PW, self._B))

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "task": "classification"},
            {"n_features": 3, "dtype": "float32", "forgetting_grid": (0.0, 0.01, 0.3)},
            {"n_features": 4, "coverage": 0.9},
        ]


def _check_grid(grid: Any) -> tuple[float, ...]:
    """The members' forgetting factors: 1 to 64 distinct numbers in [0, 1)."""
    try:
        values = [float(g) for g in grid]
    except (TypeError, ValueError):
        raise TypeError(f"forgetting_grid must be a sequence of numbers, got {grid!r}") from None
    if not 1 <= len(values) <= 64:
        raise ValueError(f"forgetting_grid must hold 1 to 64 factors, got {len(values)}")
    for g in values:
        check_float("forgetting_grid entry", g, 0.0, 1.0, high_open=True)
    if len(set(values)) != len(values):
        raise ValueError(f"forgetting_grid holds a factor twice: {values}")
    return tuple(values)


class FleetBankWork(NamedTuple):
    """A FleetBank's workspace: its banks' (``DFOPBankWork``, stacked) and the models' status."""

    scratch: np.ndarray
    member_hyper: np.ndarray
    member_codes: np.ndarray
    hyper: np.ndarray
    codes: np.ndarray
    predictions: np.ndarray
    chunk: np.ndarray
    block: np.ndarray
    status: np.ndarray  # int64 (n_models,): each model's status of the last call (Fleet's)


class FleetBank(Fleet):
    """A Fleet of DFOPBanks: ``Fleet(n_models, n_features, forgetting="auto")``.

    Model k is a :class:`DFOPBank` (bit for bit: ``model(k)`` continues it
    exactly) that learns its own drift rate; the models run in parallel as
    a Fleet's do (``prange``). Parameters: a Fleet's, plus the bank's
    ``forgetting_grid``, ``learning_rate`` and ``share``. Attributes, per
    model: ``forgetting_`` (n_models,), ``forgetting_weights_`` (n_models,
    K), ``coef_`` (n_models, n_features) and ``member_coef_``.

    Memory: n_models times a DFOPBank's (``nbytes()``), plus 8 bytes a model.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import Fleet
    >>> fleet = Fleet(3, 2, forgetting="auto")          # 3 models, a bank each
    >>> type(fleet).__name__
    'FleetBank'
    >>> X = np.random.default_rng(0).normal(size=(3, 200, 2))
    >>> fleet.learn_many(X, X @ [1.0, 2.0]).shape      # prequential, model by model
    (3, 200)
    """

    def __init__(
        self,
        n_models: int,
        n_features: int,
        forgetting: str = "auto",
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        forgetting_grid: Any = DEFAULT_GRID,
        learning_rate: float = 2.0,
        share: float = 1e-3,
    ) -> None:
        _check_auto(forgetting, "FleetBank")
        self.n_models = check_int("n_models", n_models)
        self.n_features = check_int("n_features", n_features)
        self.dtype = check_dtype(dtype)
        self.on_invalid = check_on_invalid(on_invalid)
        self._skip = self.on_invalid == "skip"
        init_dfop_parameters(self, self.n_features, 0.0, task, p0, keep_prior)
        _init_bank_parameters(self, forgetting_grid, learning_rate, share)
        self.reset()

    def _allocate(self) -> tuple[DFOPBankState, FleetBankWork]:  # type: ignore[override]
        state, work = _allocate_banks(
            self.n_models, self.n_features, self.forgetting_grid, self.p0, self.dtype,
            self.keep_prior, self._classify, self._skip, self.learning_rate, self.share,
        )
        return state, FleetBankWork(*work, status=np.zeros(self.n_models, dtype=np.int64))

    def _bind_state(self) -> None:
        s = self._state
        F, K, d = s.w.shape
        self._PW = block_at(s.P, (F, K, d + 1, d))
        # The rows with their padding: a C-contiguous A, so that A[k] in the
        # fleet's kernels has DFOPBank's array types and every bank and DFOP
        # kernel below is compiled once for both (not once more for the
        # strided rows: FleetBank's first call compiled for 24 s instead of 9).
        rows = self._work.block
        self._A = block_at(rows, (F, _padded(rows.shape[1])))

    def nbytes(self) -> int:
        """Bytes of the banks' two blocks and the status (A's rows without their padding)."""
        return int(self._PW.nbytes + self._work.block.nbytes + self._work.status.nbytes)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:  # type: ignore[override]
        faults = OnlineModel._state_faults(self, state)
        for k in range(self.n_models):
            one = DFOPBankState(*(field[k] for field in state))
            for field, reason in bank_faults(one, self.forgetting_grid, self.n_features):
                faults.append((field, f"of model {k}: {reason}"))
        return faults

    # ---------------------------------------------------------------- kernels
    def _learn_blocks(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        return _fleet_bank_learn_many(X, Y, out, self._PW, self._A, self._work.status)

    def _learn_samples(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        return _fleet_bank_learn_one(X, Y, out, self._PW, self._A, self._work.status)

    def _predict_samples(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_bank_predict_one(X, self._PW, self._A, out)

    def _predict_blocks(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_bank_predict_many(X, self._PW, self._A, out)

    # ------------------------------------------------------------- attributes
    @property
    def forgetting_weights_(self) -> np.ndarray:
        """Each model's members' weights (sum 1), shape (n_models, K)."""
        v = self._state.weights
        return v / v.sum(axis=1, keepdims=True)

    @property
    def forgetting_(self) -> np.ndarray:
        """Each model's learnt drift rate, shape (n_models,)."""
        return self.forgetting_weights_ @ self._grid

    @property
    def member_coef_(self) -> np.ndarray:
        """Every model's members' weights, shape (n_models, K, n_features) (a copy)."""
        return np.array(self._state.w, dtype=np.float64)

    @property
    def coef_(self) -> np.ndarray:
        """sum_k u_k w_k per model, shape (n_models, n_features)."""
        return np.einsum("fk,fkd->fd", self.forgetting_weights_, self.member_coef_)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_models": 3, "n_features": 4},
            {"n_models": 2, "n_features": 3, "task": "classification",
             "forgetting_grid": (0.0, 0.05)},
            {"n_models": 2, "n_features": 5, "dtype": "float32", "keep_prior": False},
        ]
