"""DFOPBank: DFOP whose forgetting factor tunes itself (docs/algorithms/dfop.md).

``DFOP(n_features, forgetting="auto")`` builds one. It runs 5 DFOPs
side by side, every one learning every sample: a window of 4 adjacent
factors of a lattice that covers the whole range (0, then factors about 3x
apart in the odds mu / (1 - mu) up to 0.99, ``DEFAULT_LATTICE``) and a
scout 3 factors above the window's top. It predicts with their
predictions weighted by fixed share (Herbster & Warmuth 1998): exponential
weights on each member's loss (its squared error for regression, its
wrong signs for labels), mixed with a little of the uniform weights at
every step so that the lead can change hands when the drift changes.
Every 32 samples the window of members slides one factor along the
lattice when its fastest or slowest member has the smallest loss
averaged over the last ~500 samples, or jumps onto the scout's factor when
the scout has it: the rate is found wherever it lies, past a dip of the
error over the factors, in fixed memory and at the cost of K DFOPs. ``forgetting_`` is the
members' factors weighted, the drift rate the bank has learnt.

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
    CODE_CLASSIFY,
    CODE_LATTICE,
    CODE_SCOUT,
    CODE_SKIP,
    ERROR_LIMIT,
    HYPER_ETA,
    HYPER_SHARE,
    LIMIT,
    LOSS_CAP,
    _bank_learn_many,
    _bank_learn_one,
    _bank_predict_many,
    _bank_predict_one,
    _bank_views,
    bank_size,
    member_index,
)
from ._kernels.bank32 import (
    ERROR_LIMIT32,
    LIMIT32,
    bank32_learn_many,
    bank32_learn_one_packed,
    bank32_predict_many,
    bank32_predict_one,
)
from ._kernels.dfop import CODE_PERIOD, HYPER_MU, LEARNT_COUNTS, LEARNT_FORGOTTEN, _packed_views
from ._kernels.fleet import (
    _fleet_bank_learn_many,
    _fleet_bank_learn_one,
    _fleet_bank_predict_many,
    _fleet_bank_predict_one,
)
from ._validate import check_dtype, check_float, check_int, check_on_invalid
from .dfop import (
    _ARITHMETICS,
    _FLOAT32_TINY,
    DFOP,
    dfop_constants,
    init_dfop_parameters,
    init_interval,
    refresh_period,
)
from .fleet import Fleet

__all__ = ["DFOPBank", "FleetBank", "DEFAULT_LATTICE", "DEFAULT_MEMBERS", "DEFAULT_GRID",
           "SCOUT_GAP", "STUDY_GRID"]

#: The forgetting factors the default bank's window slides over: 0, then
#: factors about 3x apart in the odds mu / (1 - mu) (log-spaced in mu below
#: 0.1, in 1 - mu above 0.5), up to 0.99: every drift rate, no upper end
#: chosen in advance (docs/design/auto-forgetting.md).
DEFAULT_LATTICE = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.25, 0.5, 0.75, 0.9, 0.97,
                   0.99)
#: Members of the default bank: a window of 4 adjacent factors of the lattice
#: (and a scout, ``SCOUT_GAP`` factors above the window's top).
DEFAULT_MEMBERS = 4
#: The scout of a moving window: one more member this many lattice factors
#: above the window's top (at most the last factor). When it leads, the
#: window jumps to it instead of climbing one factor per move, past a dip
#: of the error over the factors (docs/design/auto-forgetting.md).
SCOUT_GAP = 3
#: The lowest member's factor when a moving window starts (the nearest of the lattice).
START_FORGETTING = 1e-3
#: The fixed grid of the bank before the window (6 members from 0 to 0.1):
#: ``forgetting_grid=DEFAULT_GRID`` builds that bank (and files saved by it
#: load as it).
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
    scale: np.ndarray  # float64 (3,): count, mean and variance of the bank's errors (regression)
    window: np.ndarray  # int64 (1,): the lattice index of member 0's factor
    losses: np.ndarray  # float64 (K,): the members' slow losses (which move the window)
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
    window: np.ndarray
    losses: np.ndarray
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
    n_banks: int, n_features: int, lattice: tuple[float, ...], K: int, p0: float,
    dtype: np.dtype, keep_prior: bool, classify: bool, skip: bool, eta: float, share: float,
    scout: int = 0,
) -> tuple[DFOPBankState, DFOPBankWork]:
    """n_banks banks' state and workspace, every field with a leading axis of n_banks.

    Two blocks (``_kernels/bank.py``): PW (n_banks, K, d + 1, d) and A
    (n_banks, bank_size), each row of A starting on a 64-byte boundary. A
    DFOPBank is row 0 of one bank; a FleetBank's model k is row k. The
    window starts at the lattice's factor ``start_index(lattice, W)`` (W = K,
    or K - 1 with a scout ``scout`` factors above the window's top).
    """
    F, d, n = n_banks, n_features, len(lattice)
    PW = aligned_zeros((F, K, d + 1, d), dtype)  # as DFOP's (dfop._allocate)
    PW[:, :, np.arange(d), np.arange(d)] = p0
    size = python_function(bank_size)(K, n, d)
    A = aligned_zeros((F, _padded(size)))[:, :size]
    low = start_index(lattice, K - (scout > 0))
    periods = [refresh_period(d, mu) for mu in lattice]
    for row in A:
        codes = python_function(_bank_views)(row, K, d)[1]
        codes[CODE_LATTICE] = n  # first: the views after it depend on it
        hyper, codes, _, _, v, _, B, _, window, grid, period, _ = (
            python_function(_bank_views)(row, K, d))
        hyper[HYPER_ETA], hyper[HYPER_SHARE] = eta, share
        codes[CODE_CLASSIFY], codes[CODE_SKIP], codes[CODE_SCOUT] = classify, skip, scout
        v[:] = 1.0 / K
        window[0] = low
        grid[:] = lattice
        period[:] = periods
        for k, member in enumerate(B.reshape(K, -1)):
            _, _, h, c = python_function(_packed_views)(member, d)
            # Members skip what their state cannot take; the bank has refused
            # every invalid sample before they see it (_kernels/bank.py).
            mu = lattice[python_function(member_index)(low, k, K, n, scout)]
            dfop_constants(mu, p0, refresh_period(d, mu), keep_prior, True, h, c)
    # Every field over all banks (and members): bank 0's (member 0's) own
    # views, stacked, so the layout is written once (_bank_views, _packed_views).
    hyper, codes, counts, scale, v, q, B, chunk, window, _, _, slow = (
        _stacked(A, view) for view in python_function(_bank_views)(A[0], K, d)
    )
    members = B.reshape(F, K, -1)  # [f, k]: bank f's member k's DFOP block (and padding)
    scratch, L, member_hyper, member_codes = (
        _stacked(members, view) for view in python_function(_packed_views)(members[0, 0], d)
    )
    state = DFOPBankState(
        w=PW[:, :, d],
        P=PW[:, :, :d],
        forgotten=L[..., LEARNT_FORGOTTEN : LEARNT_FORGOTTEN + 1],
        member_counts=L[..., LEARNT_COUNTS : LEARNT_COUNTS + 4].view(np.int64),
        weights=v,
        scale=scale,
        window=window.view(np.int64),
        losses=slow,
        counts=counts.view(np.int64),
    )
    work = DFOPBankWork(scratch, member_hyper, member_codes.view(np.int64), hyper,
                        codes.view(np.int64), q, chunk, A)
    return state, work


def start_index(lattice: tuple[float, ...], K: int) -> int:
    """The lattice index of member 0's factor at the start: the factor nearest
    START_FORGETTING (0 when the K members take the whole lattice)."""
    nearest = int(np.argmin([abs(mu - START_FORGETTING) for mu in lattice]))
    return min(nearest, len(lattice) - K)


def place_members(state: DFOPBankState, work: DFOPBankWork, lattice: tuple[float, ...],
                  d: int) -> None:
    """Set every member's factor and refresh period from the state's window (after a load:
    the workspace holds the members' constants, the state where the window stands)."""
    K = state.w.shape[-2]
    scout = int(work.codes.reshape(-1)[CODE_SCOUT])  # the same in every bank of a fleet
    lows = state.window.reshape(-1)
    hyper = work.member_hyper.reshape(-1, K, work.member_hyper.shape[-1])
    codes = work.member_codes.reshape(-1, K, work.member_codes.shape[-1])
    for f, low in enumerate(lows):
        for k in range(K):
            mu = lattice[python_function(member_index)(int(low), k, K, len(lattice), scout)]
            hyper[f, k, HYPER_MU] = mu
            codes[f, k, CODE_PERIOD] = refresh_period(d, mu)


def _padded(size: int) -> int:
    """A bank's row of A with its padding: rows start on 64-byte boundaries."""
    return (size + 7) // 8 * 8


def _stacked(rows: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The entries of every ``rows[..., :]`` that ``view`` covers in the first one."""
    offset = (view.__array_interface__["data"][0]
              - rows.__array_interface__["data"][0]) // rows.itemsize
    return rows[..., offset : offset + view.size]


def bank_faults(s: DFOPBankState, lattice: tuple[float, ...], d: int,
                scout: int = 0, arith32: bool = False) -> list[tuple[str, str]]:
    """(field, reason) for every invariant one bank's state breaks (none: usable).

    A window within the lattice; every member's DFOP invariants
    (``DFOP._state_faults``; a member that started as a copy of its
    neighbour carries the neighbour's ``forgotten``, so the bound is the
    lattice's largest period); weights that are a distribution; a loss
    scale that is one.
    """
    faults = []
    K = s.w.shape[0]
    faults += index_faults("window", int(s.window[0]), 0, len(lattice) - K + (scout > 0),
                           "the lattice index of member 0")
    if faults:
        return faults
    mc = s.member_counts
    if np.any(mc > np.iinfo(np.int64).max // 4) or np.any(mc[:, :3] < 0):
        faults.append(("member_counts", "holds a count that is negative or beyond 2^61"))
    if np.any(s.counts < 0):
        faults.append(("counts", f"holds a negative sample count {s.counts.tolist()}"))
    period = max(refresh_period(d, mu) for mu in lattice)
    for k in range(K):
        faults += index_faults("member_counts", int(mc[k, 3]), 0, d - 1,
                               f"member {k}'s next refresh coordinate")
        if not 0.0 <= float(s.forgotten[k, 0]) <= period:
            faults.append(("forgotten", f"member {k} holds {float(s.forgotten[k, 0])!r}, "
                                        f"outside 0..{period}"))
        faults += symmetric_faults("P", s.P[k])
    if not np.all((s.losses >= 0.0) & (s.losses <= LOSS_CAP)):
        faults.append(("losses", f"hold values outside 0..{LOSS_CAP:g} (averages of capped "
                                 "losses)"))
    v = s.weights
    # float32-only arithmetic: K <= 64 weights, each rounded, sum to 1 within 64 * 2 eps32.
    slack = 1e-4 if arith32 else 1e-9
    error_limit = float(ERROR_LIMIT32) if arith32 else ERROR_LIMIT
    if not (np.all(v > 0.0) and abs(float(v.sum()) - 1.0) < slack):
        faults.append(("weights", "are not positive weights of sum 1"))
    count, mean, variance = (float(v) for v in s.scale)
    # The bank's errors enter the scale clipped to ERROR_LIMIT: so is their
    # mean, and their variance within (2 ERROR_LIMIT)^2; beyond, the next
    # update overflows (found by the hostile state-file test: a mean of 5e299).
    if not (count >= 0.0 and abs(mean) <= error_limit
            and 0.0 <= variance <= 4.0 * error_limit * error_limit):
        faults.append(("scale", f"holds count {count!r}, mean {mean!r}, variance {variance!r}: "
                                f"not the statistics of errors within {error_limit:g}"))
    return faults


def _check_auto(forgetting: Any, what: str) -> None:
    if not (isinstance(forgetting, str) and forgetting == "auto"):
        raise ValueError(f"a {what}'s forgetting must be 'auto', got {forgetting!r}")


def _init_bank_parameters(model: Any, grid: Any, members: Any, learning_rate: Any,
                          share: Any, scout: Any = None) -> None:
    """The bank's own parameters (DFOP's are set by ``init_dfop_parameters``).

    ``forgetting_grid=None`` is the default lattice with a window of
    DEFAULT_MEMBERS; a grid given with ``members=None`` is a fixed bank of
    one member per factor (the bank before the window, as its files say).
    """
    model.forgetting = "auto"
    lattice = DEFAULT_LATTICE if grid is None else _check_grid(grid)
    model.forgetting_grid = None if grid is None else lattice
    if members is None:
        K = DEFAULT_MEMBERS if grid is None else len(lattice)
    else:
        K = check_int("members", members)
        if K > len(lattice):
            raise ValueError(f"members must be at most the {len(lattice)} factors of "
                             f"forgetting_grid, got {members!r}")
        if 1 == K < len(lattice):
            raise ValueError("members must be at least 2 when the window moves (fewer "
                             f"than the {len(lattice)} factors of forgetting_grid), got 1")
    if K < len(lattice) and list(lattice) != sorted(lattice):
        raise ValueError(f"forgetting_grid must be increasing for a window of {K} members "
                         f"to slide on, got {list(lattice)}")
    model.members = members
    model.scout = scout
    if scout is None:
        gap = SCOUT_GAP if K < len(lattice) else 0
    else:
        gap = check_int("scout", scout, 0, len(lattice) - 1)
        if gap and K >= len(lattice):
            raise ValueError(f"scout must be 0 for a fixed bank (members={K} take every factor "
                             f"of forgetting_grid), got {scout!r}")
    model._scout = gap
    model.learning_rate = check_float("learning_rate", learning_rate, 0.0, 1e6, low_open=True)
    model.share = check_float("share", share, 0.0, 1.0, high_open=True)
    model._lattice = lattice
    model._K = K + (gap > 0)  # the window's K members, and the scout
    model._grid = np.array(lattice)


def _file_params(params: dict[str, Any]) -> dict[str, Any]:
    """A file saved before the window had a fixed grid and no ``members``: that bank;
    one saved before the scout had none (``scout=0``)."""
    if "scout" not in params:
        params = {**params, "scout": 0}
    if "members" not in params:
        params = dict(params)
        grid = params.get("forgetting_grid")
        params["members"] = None if grid is None else len(grid)
    return params


def _with_window(arrays: dict[str, np.ndarray], K: int, lattice: tuple[float, ...],
                 n_models: int | None) -> dict[str, np.ndarray]:
    """A fixed bank's file saved before the window has no ``window`` nor ``losses``:
    0 is where its members stand (every factor of the grid), and a fixed bank's
    slow losses move nothing (0). Anything else is left to the checks."""
    if "window" in arrays or "losses" in arrays or K != len(lattice):
        return arrays
    lead = () if n_models is None else (n_models,)
    return {**arrays, "window": np.zeros((*lead, 1), dtype=np.int64),
            "losses": np.zeros((*lead, K))}


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

    _lattice: tuple[float, ...]
    _K: int

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:  # type: ignore[override]
        faults = OnlineModel._state_faults(self, state)  # type: ignore[arg-type]
        return faults + bank_faults(state, self._lattice, self._dfop_dimension(), self._scout,  # type: ignore[arg-type, attr-defined]
                                    getattr(self, "_arith32", False))

    @classmethod
    def _file_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        return _file_params(params)

    def _bank_work(self) -> DFOPBankWork:
        return self._work  # type: ignore[attr-defined, no-any-return]

    def _copy_state_in(self, arrays: dict[str, np.ndarray], source: str) -> None:
        arrays = _with_window(arrays, self._K, self._lattice, None)
        forgotten = arrays.get("forgotten")
        if getattr(self, "_arith32", False) and forgotten is not None \
                and np.asarray(forgotten).dtype == np.float64:
            # The export's blob and edgereg.native's files hold the members' float64
            # slots, whose first half is the float32 forgotten mass (``_kernels/bank32.py``;
            # little-endian, as every export target).
            slots = np.ascontiguousarray(forgotten, dtype="<f8")
            arrays = {**arrays, "forgotten": slots.view("<f4")[..., ::2].astype(np.float32)}
        super()._copy_state_in(arrays, source)  # type: ignore[misc]
        place_members(self._state, self._bank_work(), self._lattice, self._dfop_dimension())  # type: ignore[attr-defined]

    # ------------------------------------------------------------ attributes
    @property
    def member_forgetting_(self) -> np.ndarray:
        """The members' forgetting factors now, slowest first (the window on the lattice)."""
        low = int(self._state.window[0])
        n = len(self._grid)
        index = python_function(member_index)
        return np.array([self._grid[index(low, k, self._K, n, self._scout)]
                         for k in range(self._K)])

    @property
    def forgetting_weights_(self) -> np.ndarray:
        """The members' weights u (sum 1), in the order of ``member_forgetting_``."""
        v = self._state.weights
        return v / v.sum()

    @property
    def forgetting_(self) -> float:
        """The learnt drift rate: the members' factors weighted, sum_k u_k mu_k."""
        return float(self.forgetting_weights_ @ self.member_forgetting_)

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
        limit = float(LIMIT32) if getattr(self, "_arith32", False) else LIMIT
        if np.all(np.isfinite(values)) and np.any(np.abs(values) > limit):
            return (f"{where}: a value beyond the bank's range |x_j|, |y| <= {limit:g}. "
                    f"The model state is unchanged (use on_invalid='skip' to skip such samples)")
        return message


class DFOPBank(BankIntervals, BankModel, DFOP):
    r"""DFOP with a self-tuning forgetting factor: a window of DFOPs sliding on a lattice of mu.

    Built by ``DFOP(n_features, forgetting="auto")`` (or directly). K
    members, each an exact :class:`DFOP` learning every sample, on K
    adjacent factors mu_low, ..., mu_{low+K-1} of ``forgetting_grid`` (the
    lattice); the bank predicts

    .. math::

        \hat y_t = \sum_k u_{t,k}\, q_{t,k}, \qquad
        u_{t+1,k} \propto (1 - \alpha)\, \frac{u_{t,k} e^{-\eta \ell_{t,k}}}
        {\sum_j u_{t,j} e^{-\eta \ell_{t,j}}} + \frac{\alpha}{K},

    q_k the member's prediction (clipped to [-1, 1] for classification) and
    l_k its loss: for regression its squared error over 50 times the bank's
    own running mean squared error, for classification 1/4 when its sign is
    wrong (fixed share, ``_kernels/bank.py``). The weights follow the
    member that predicts best *now*. Every 32 samples, when the fastest
    (slowest) member has strictly the smallest loss averaged over about
    500 samples, L_k <- L_k + (l_k - L_k) / 500, the window moves one factor
    up (down) the lattice: the member at the other end is dropped and the
    new one starts as a copy of its neighbour with the next factor. A scout,
    one more member ``scout`` factors above the window's top, probes beyond
    it: when it has the smallest slow loss (after 500 samples), the window
    jumps, its top onto the scout's factor, every member a copy of the
    scout. So the bank forgets fast while the world drifts fast and slowly
    while it is still, with no upper end chosen in advance.

    Parameters
    ----------
    n_features, task, p0, keep_prior, dtype, on_invalid
        As for :class:`DFOP`; every member has them.
    forgetting : "auto"
        The only value (the bank chooses mu).
    arithmetic : {"auto", "float32"}, default "auto"
        ``"float32"`` (with ``dtype="float32"``): every value in float32, the
        members' steps (as :class:`DFOP`'s ``arithmetic="float32"``) and the
        aggregate (weights, exp, losses, loss scale, slow losses), so that an
        export for a single-precision FPU needs no soft-double helper
        (``_kernels/bank32.py``). The lattice, p0, ``learning_rate`` and
        ``share`` are rounded to float32; an x or y value beyond 1e30 in absolute
        value is refused. No ``coverage`` with it.
    forgetting_grid : sequence of float, optional
        The lattice of factors, each in [0, 1), distinct, increasing for a
        moving window, 1 to 64 of them. Default (None): ``DEFAULT_LATTICE``
        (0, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 0.9,
        0.97, 0.99).
    members : int, optional
        The window's size. Default: 4 on the default lattice; with a
        ``forgetting_grid`` given, one member per factor (a fixed bank, as
        before the window). A one-member bank is plain DFOP (its state and
        predictions bit for bit).
    scout : int, optional
        Lattice factors between the window's top and the scout, a member
        beyond the window (the last one, at most at the lattice's last
        factor); 0: no scout (the window alone, as files written before the
        scout load). Default: ``SCOUT_GAP`` (3) for a moving window, 0 for a
        fixed bank. K, the number of members, is the window's plus one.
    learning_rate : float, default 2.0
        eta of the exponential weights (on the losses above: 1/4 a wrong
        sign, or the squared error over 50 times the bank's mean squared error).
    share : float, default 1e-3
        alpha of fixed share, in [0, 1): the weight every member keeps.
    coverage : float in (0, 1), optional
        Calibrated prediction intervals, as for :class:`DFOP` but on the
        bank's residuals without a leverage term (v = 1), their noise level
        forgotten at ``BANK_NOISE_FORGETTING`` (docs/design/intervals.md).
    missing : {"reject"}, default "reject"
        Taken so that ``DFOP(..., forgetting="auto")`` accepts DFOP's
        arguments; a bank rejects rows with missing inputs (``"impute"`` needs
        a fixed forgetting factor).

    Attributes
    ----------
    forgetting_ : float
        The drift rate learnt: sum_k u_k mu_k over the members.
    member_forgetting_ : ndarray of shape (K,)
        The members' factors now (where the window stands), slowest first.
    forgetting_weights_ : ndarray of shape (K,)
        The members' weights u (sum 1), in the same order.
    coef_ : ndarray of shape (n_features,)
        sum_k u_k w_k (for regression, the bank's linear predictor).
    member_coef_ : ndarray of shape (K, n_features)
        Every member's weights.

    Notes
    -----
    Memory: K times a DFOP's (K (d^2 + d) values of the dtype, K (3s + 10)
    float64 with s = d rounded up to 8, each member's rounded up to 8),
    plus 12 + 3K float64 of the aggregate and the window, two per factor of
    the lattice and the predictions of a chunk of 32 rows per member:
    ``nbytes()``. d = 10, K = 5 (the window of 4 and the scout), the default
    lattice: 8,680 bytes in float64 (1.3 KB for one DFOP), 6,480 in float32 with either
    arithmetic (the float32-only one keeps its float32 values in the same slots).

    A sample is invalid for the bank (raise or skip, as ``on_invalid``
    says) when any value is NaN, inf or beyond 1e100 in magnitude; a valid
    sample that one member's state cannot take (rare: DFOP's guard) is
    skipped by that member alone and counted in its ``member_counts``.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> rng = np.random.default_rng(0)
    >>> y = np.cumsum(rng.normal(size=3000)) + 0.3 * rng.normal(size=3000)  # a fast level
    >>> model = DFOP(1, forgetting="auto")
    >>> type(model).__name__
    'DFOPBank'
    >>> _ = model.learn_many(np.ones((3000, 1)), y)
    >>> model.forgetting_ > 0.5
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
        arithmetic: str = "auto",
        on_invalid: str = "raise",
        forgetting_grid: Any = None,
        members: Any = None,
        learning_rate: float = 2.0,
        share: float = 1e-3,
        scout: Any = None,
        coverage: float | None = None,
        missing: str = "reject",
    ) -> None:
        _check_auto(forgetting, "DFOPBank")
        if missing != "reject":
            # DFOP(..., "auto") passes DFOP's arguments on: the default is taken,
            # imputation (a fixed forgetting's) is not available to a bank yet.
            raise ValueError(f"missing={missing!r} is not available with forgetting='auto' "
                             "(a bank of DFOPs): missing must be 'reject' here, or use a "
                             "fixed forgetting factor to impute missing inputs")
        self.missing = missing
        self._init_common(n_features, dtype, on_invalid)
        init_dfop_parameters(self, n_features, 0.0, task, p0, keep_prior)
        _init_bank_parameters(self, forgetting_grid, members, learning_rate, share, scout)
        init_interval(self, coverage)
        self._init_arithmetic(arithmetic)
        self.reset()

    def _init_arithmetic(self, arithmetic: str) -> None:
        """Validate ``arithmetic``; for "float32", the lattice, p0, eta and alpha
        rounded to float32 (a value below 1.2e-38 counts as 0), as the kernels of
        ``_kernels/bank32.py`` read them."""
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._arith32 = arithmetic == "float32"
        self._bank_constants = (self.p0, self.learning_rate, self.share)
        if not self._arith32:
            return
        if self.dtype != np.float32:
            raise ValueError("arithmetic='float32' needs dtype='float32'")
        if self.coverage is not None:
            raise ValueError("arithmetic='float32' does not support coverage yet")
        lattice = tuple(_round32(mu) for mu in self._lattice)
        if not all(mu < 1.0 for mu in lattice) or len(set(lattice)) != len(lattice):
            raise ValueError(f"forgetting_grid {list(self._lattice)} rounded to float32 "
                             f"({list(lattice)}) has a factor of 1 or one twice")
        self._lattice, self._grid = lattice, np.array(lattice)
        self._bank_constants = (_round32(self.p0), _round32(self.learning_rate),
                                _round32(self.share))
        self._target_limit = float(LIMIT32)

    def _allocate(self) -> tuple[DFOPBankState, DFOPBankWork]:  # type: ignore[override]
        p0, eta, share = self._bank_constants
        state, work = _allocate_banks(
            1, self.n_features, self._lattice, self._K, p0, self.dtype, self.keep_prior,
            self._classify, self._skip, eta, share, self._scout,
        )
        state = DFOPBankState(*(f[0] for f in state))
        if self._arith32:
            # The learnt float fields hold float32 values packed in their float64
            # slots' first half (``_kernels/bank32.py``); the forgotten masses in
            # the first half of theirs (``_kernels/dfop32.py``).
            K = self._K
            state.weights[:] = 0.0
            weights = state.weights.view(np.float32)[:K]
            weights[:] = np.float32(1.0) / np.float32(K)
            state = state._replace(forgotten=state.forgotten.view(np.float32)[:, :1],
                                   weights=weights, scale=state.scale.view(np.float32)[:3],
                                   losses=state.losses.view(np.float32)[:K])
        return self._with_interval(state, DFOPBankWork(*(f[0] for f in work)))

    def _bind_state(self) -> None:
        s = self._state
        K, d = s.w.shape
        self._PW = block_at(s.P, (K, d + 1, d))
        self._B = self._work.block  # A: learn_one's kernel takes (x, y, PW, A)
        # The members' constants (workspace) follow the window (state) wherever
        # the state came from: a file, a pickle, or a wrapper's load (DriftAlarm).
        place_members(s, self._work, self._lattice, self._dfop_dimension())
        self._bind_interval()
        packed = bank32_learn_one_packed if self._arith32 else self._packed_kernel
        self._learn_one_kernel = FirstCall(packed, self, "_learn_one_kernel")

    _packed_kernel = staticmethod(_bank_learn_one)
    _interval_state = DFOPBankIntervalState

    # ------------------------------------------------------------ prediction
    def decision_function_one(self, x: Any) -> float:
        """The bank's raw score for one sample."""
        if self._arith32:
            return float(bank32_predict_one(self._row(x), self._PW, self._B))
        return _bank_predict_one(self._row(x), self._PW, self._B)

    def predict_one(self, x: Any) -> float:
        """Predict one sample (the sign of the score for classification)."""
        score = self.decision_function_one(x)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def _predict_block(self, X, out):  # type: ignore[override]
        if self._arith32:
            out32 = np.empty(X.shape[0], np.float32)
            bank32_predict_many(X, self._PW, self._B, out32)
            out[:] = out32
            return
        _bank_predict_many(X, self._PW, self._B, out)

    # --------------------------------------------------------------- learning
    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        if self._arith32:
            # Targets and predictions in float32, as an export's C caller passes them;
            # a target beyond float32 becomes inf: refused.
            with np.errstate(over="ignore"):
                Y32 = Y.astype(np.float32)
            out32 = np.empty(X.shape[0], np.float32)
            bad = bank32_learn_many(X, Y32, out32, self._PW, self._B)
            out[:] = out32
            return bad
        return self._after_block(X, Y, out, _bank_learn_many(X, Y, out, self._PW, self._B))

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "task": "classification"},
            {"n_features": 3, "dtype": "float32", "forgetting_grid": (0.0, 0.01, 0.3)},
            {"n_features": 4, "coverage": 0.9},
            # float32-only arithmetic (_kernels/bank32.py): the default lattice and a fixed grid
            {"n_features": 3, "dtype": "float32", "arithmetic": "float32"},
            {"n_features": 3, "dtype": "float32", "arithmetic": "float32",
             "task": "classification", "forgetting_grid": (0.0, 0.01, 0.3)},
        ]


def _round32(value: float) -> float:
    """``value`` rounded to float32, 0 below float32's smallest normal (as DFOP's mu)."""
    rounded = float(np.float32(value))
    return 0.0 if rounded < _FLOAT32_TINY else rounded


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
    ``forgetting_grid``, ``members``, ``scout``, ``learning_rate`` and
    ``share`` (as for :class:`DFOPBank`: by default a window of 4 and a
    scout, K = 5 members). Attributes, per model: ``forgetting_``
    (n_models,), ``member_forgetting_`` and ``forgetting_weights_``
    (n_models, K), ``coef_`` (n_models, n_features) and ``member_coef_``
    (n_models, K, n_features).

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
        forgetting_grid: Any = None,
        members: Any = None,
        learning_rate: float = 2.0,
        share: float = 1e-3,
        scout: Any = None,
    ) -> None:
        _check_auto(forgetting, "FleetBank")
        self.n_models = check_int("n_models", n_models)
        self.n_features = check_int("n_features", n_features)
        self.dtype = check_dtype(dtype)
        self.on_invalid = check_on_invalid(on_invalid)
        self._skip = self.on_invalid == "skip"
        init_dfop_parameters(self, self.n_features, 0.0, task, p0, keep_prior)
        _init_bank_parameters(self, forgetting_grid, members, learning_rate, share, scout)
        self.reset()

    @classmethod
    def _file_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        return _file_params(params)

    def _copy_state_in(self, arrays: dict[str, np.ndarray], source: str) -> None:
        arrays = _with_window(arrays, self._K, self._lattice, self.n_models)
        super()._copy_state_in(arrays, source)
        place_members(self._state, self._work, self._lattice, self.n_features)

    def set_model(self, k: int, model: DFOP) -> None:
        """Copy a DFOPBank's state (its window too) into slot k (``Fleet.set_model``)."""
        super().set_model(k, model)
        place_members(self._state, self._work, self._lattice, self.n_features)

    def _allocate(self) -> tuple[DFOPBankState, FleetBankWork]:  # type: ignore[override]
        state, work = _allocate_banks(
            self.n_models, self.n_features, self._lattice, self._K, self.p0, self.dtype,
            self.keep_prior, self._classify, self._skip, self.learning_rate, self.share,
            self._scout,
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
            for field, reason in bank_faults(one, self._lattice, self.n_features, self._scout):
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
    def member_forgetting_(self) -> np.ndarray:
        """Each model's members' factors now, shape (n_models, K) (its window)."""
        index = python_function(member_index)
        n = len(self._grid)
        return np.array([[self._grid[index(int(low), k, self._K, n, self._scout)]
                          for k in range(self._K)] for low in self._state.window.reshape(-1)])

    @property
    def forgetting_weights_(self) -> np.ndarray:
        """Each model's members' weights (sum 1), shape (n_models, K)."""
        v = self._state.weights
        return v / v.sum(axis=1, keepdims=True)

    @property
    def forgetting_(self) -> np.ndarray:
        """Each model's learnt drift rate, shape (n_models,)."""
        return np.einsum("fk,fk->f", self.forgetting_weights_, self.member_forgetting_)

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
