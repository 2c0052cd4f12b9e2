r"""Selective sampling with switch detection: BBQ + a switch test (docs/algorithms/selective.md).

A linear classifier y in {-1, +1} that asks for few labels (the BBQ rule of
Cesa-Bianchi, Gentile & Orabona) and restarts itself when the concept
switches, as in "Learning Drifting Data Using Selective Sampling". With
A_{t-1} = I + sum_{queried i} x_i x_i^T, r' = x_t^T A_{t-1}^-1 x_t and
r_t = r' / (1 + r'),
round t asks for y_t iff r_t > t^-kappa. The switch test is, by default, a
comparison of the classifier with a candidate that forgets, on the 0/1
losses of the rounds where the classifier is most confident (a betting
test over fixed bets; P(a false switch in an epoch) <= delta whenever the
candidate is cumulatively no better, docs/design/switch-tests.md);
``switch_test="eprocess"`` is the change-point e-process against one linear
concept, ``"spec"`` the source's |w_t^T x_t - h_t^T x_t| > K_t against a demo
classifier h.

This module holds the class; the kernels are ``edgereg/_kernels/selective.py``
(with ``compare.py``, ``eprocess.py`` and ``selective_spec.py`` for the tests).
The default test's guarantee, its proof and the measured choices are in
docs/design/switch-tests.md; the sampler's derivation and the other two
tests in docs/design/selective.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, aligned_zeros, block_at, index_faults, ring_record, symmetric_faults
from ._jit import python_function
from ._kernels.compare import compare_faults, compare_init, compare_score, compare_span
from ._kernels.eprocess import (
    GLOBAL_LAST,
    eprocess_faults,
    eprocess_init,
    eprocess_score,
    eprocess_span,
)
from ._kernels.selective import (
    CACHE_DELTA,
    CACHE_KAPPA,
    CACHE_T0,
    CACHE_T1,
    CODE_DETECT,
    CODE_NORMALIZE,
    CODE_REBUILD_EVERY,
    CODE_SKIP,
    CODE_SPAN,
    CODE_TEST_EVERY,
    CODE_WINDOW0,
    COMPARE_TEST,
    COUNT_DEMO,
    COUNT_HEAD,
    COUNT_QUERIES,
    COUNT_REBUILDS,
    COUNT_SIZE,
    COUNT_SKIPPED,
    COUNT_SWITCHES,
    EPROCESS_TEST,
    HYPER_DELTA,
    HYPER_KAPPA,
    N_CODES,
    N_HYPER,
    NO_LABEL,
    NO_TEST,
    OK,
    SCREEN_DELTA,
    SCREEN_EPS,
    SCREEN_HI,
    SCREEN_MU,
    SCREEN_TC,
    SPEC_TEST,
    _selective_views,
    selective_sizes,
)
from ._kernels.selective_block import _run_many_learn, _run_many_process
from ._kernels.selective_one import _assess_one, _commit, _learn_one
from ._validate import check_float, check_int, label_sign, label_signs
from .dfop import (  # _EPS*: machine epsilons (``_prepare``'s rounding down)
    _dfop_predict_many,
    _dfop_predict_one,
)

__all__ = ["SelectiveSampler", "SelectiveState"]


class SelectiveState(NamedTuple):
    """What a SelectiveSampler has learnt: 2 d^2 + (C + 2) d + C values of the
    dtype (C: the window's capacity, window_max for the demo-classifier test, else 0),
    64 + 10 int64 and the switch test's block of float64: 2 d^2 + 2 d + 24 for
    "compare" (the candidate, the shadow and the test's sums), 3 d^2 + 3 d + 24
    for "eprocess", none for "spec" or without detection; its workspace adds
    2 d of the dtype and 3 d + 16 float64."""

    w: np.ndarray  # (d,) w_{t-1} = A^-1 b of the current epoch
    P: np.ndarray  # (d, d) A^-1, exactly symmetric
    demo_w: np.ndarray  # (d,) demo classifier h = A_L^-1 b_L
    demo_factor: np.ndarray  # (d, d) upper triangular V = U^-1, A_L = U^T U (Cholesky)
    window_X: np.ndarray  # (window_max, d) ring of the last labelled (normalised) inputs
    window_y: np.ndarray  # (window_max,) their labels
    switches: np.ndarray  # int64 (SWITCH_RECORD,) ring of the latest switch steps
    counts: np.ndarray  # int64 (10,): see the _SEEN..COUNT_DEMO indices
    switch_test: np.ndarray  # float64: the compare or e-process test's block (empty if neither)


class SelectiveWork(NamedTuple):
    """SelectiveSampler's scratch, two caches of bounds that only save work,
    and the kernels' constants.

    The caches carry over between calls but decide nothing (a stale or fresh
    entry only means a pow or log is evaluated): their fresh values hold for
    any state, so a loaded model starts from them.
    """

    x: np.ndarray  # (d,) the normalised input
    next: np.ndarray  # (d,) the next normalised input (block kernel)
    px: np.ndarray  # float64 (d,) A^-1 x, then the scaled gain u
    acc: np.ndarray  # float64 (d,) A_new^-1 x_next (fused pass)
    hx: np.ndarray  # float64 (d,) V^T x (zero when not detecting)
    cache: np.ndarray  # float64 (8,): the CODE_* bounds of the query threshold
    screen: np.ndarray  # float64 (8,): the SCREEN_* bounds of the switch screen
    hyper: np.ndarray  # float64 (2,): kappa, delta (_kernels/selective.py's HYPER_*)
    codes: np.ndarray  # int64 (5,): normalize, detect, window0, rebuild_every, skip (CODE_*)


def _allocate(model: SelectiveSampler) -> tuple[SelectiveState, SelectiveWork]:
    """State and workspace as views of the kernels' blocks A, N, Z, F
    (``_kernels/selective.py``'s ``_selective_views``)."""
    d, dtype = model.n_features, model.dtype
    test = model._test_code
    nA, nN, nE, nZ, nF = selective_sizes(d, model._window_capacity, test)
    A = np.zeros(nA, dtype=dtype)
    N = np.zeros(nN, dtype=np.int64)
    E = np.zeros(nE, dtype=np.float64)
    if test == EPROCESS_TEST:
        python_function(eprocess_init)(E, d, eprocess_span(d))
    elif test == COMPARE_TEST:
        python_function(compare_init)(E, d, compare_span(d))
    # Both 64-byte aligned, F's vectors each on cache lines of their own
    # (scratch_stride); x_next stays d entries after x (docs/design/selective.md).
    Z = aligned_zeros(nZ, dtype)
    F = aligned_zeros(nF)
    (w, P, demo_w, demo_factor, window_X, window_y, switches, counts, x, x_next, px, acc, hx,
     cache, screen) = python_function(_selective_views)(A, N, Z, F, d)
    P[np.diag_indices(d)] = 1.0
    demo_factor[np.diag_indices(d)] = 1.0
    switches[:] = -1
    cache[CACHE_KAPPA] = cache[CACHE_DELTA] = np.nan  # stale: filled on first use
    cache[CACHE_T0] = cache[CACHE_T1] = -1.0
    screen[SCREEN_MU] = 0.0
    screen[SCREEN_HI] = 1e300
    screen[SCREEN_TC] = np.inf  # stale: filled on first use
    screen[SCREEN_DELTA] = np.nan
    screen[SCREEN_EPS] = np.finfo(dtype).eps
    hyper = np.zeros(N_HYPER)
    hyper[HYPER_KAPPA], hyper[HYPER_DELTA] = model.kappa, model.delta
    codes = np.zeros(N_CODES, dtype=np.int64)
    codes[CODE_NORMALIZE] = model.normalize
    codes[CODE_DETECT] = test
    codes[CODE_TEST_EVERY] = model.test_every
    codes[CODE_SPAN] = compare_span(d) if test == COMPARE_TEST else eprocess_span(d)
    codes[CODE_WINDOW0], codes[CODE_REBUILD_EVERY] = model.window0, model.rebuild_every
    codes[CODE_SKIP] = model._skip
    state = SelectiveState(w, P, demo_w, demo_factor, window_X, window_y, switches, counts, E)
    work = SelectiveWork(x, x_next, px, acc, hx, cache, screen, hyper, codes)
    return state, work


# ---------------------------------------------------------------------- model
class SelectiveSampler(OnlineModel):
    r"""BBQ selective sampler with switch detection (docs/algorithms/selective.md).

    A linear classifier that asks for the label of x_t only when
    r_t = x_t^T A_t^{-1} x_t > t^-kappa (it is then uncertain about x_t),
    learns the BBQ-queried examples by recursive least squares (A^{-1} kept
    by Sherman-Morrison, O(d^2) per step), and switches when its switch test
    fires. The default test ("compare") asks for the labels of one round in
    ``test_every``, those where it is most confident, and runs a candidate
    RLS with a memory of 4 d + 8 labels (forgetting 1 - 1 / (4 d + 8) per
    label) on every label used, and a shadow RLS without forgetting on the
    same labels; with delta_i = 1[sign(w_s^T x_i) != y_i] -
    1[sign(w_c^T x_i) != y_i] in {-1, 0, 1} on those rounds, an instance
    started at tested round s_j has log e-value

        log((1 / K) sum_k (1 + l_k)^P (1 - l_k)^N) + log pi_j,

    P and N the tested rounds since s_j where only the shadow, only the
    candidate was wrong, over K fixed bets l_k; a switch when it reaches
    log(1 / delta). At a switch
    the classifier restarts from the candidate's weights (w = w_c,
    A^{-1} = I) and learns the switch round's label.
    docs/design/switch-tests.md has the guarantee and the measured
    choices, docs/design/selective.md the other two tests.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    kappa : float in (0, 1), default 0.5
        Query exponent: ask iff r_t > t^-kappa. Expected labels on a
        stationary stream O(d T^kappa ln T).
    detect_switch : bool, default True
        Run the switch test (``switch_test``) and restart on a switch.
        False: plain BBQ.
    switch_test : {"compare", "eprocess", "spec"}, default "compare"
        "compare": the classifier against a forgetting candidate (above):
        P(any false switch in an epoch) <= delta whenever the candidate is
        cumulatively no better on the tested rounds, for any data law, so
        misfit common to both (stationary concepts no linear classifier
        fits) does not trigger it, at any scale of the inputs. "eprocess":
        a change-point e-process against one linear concept (exact for
        E[y | x] = u^T x, faster there, fires on misfit; cold restart).
        "spec": the source's C_t > K_t against a demo classifier (for
        reproduction; <= 2 delta, much slower to fire).
    delta : float in (0, 1), default 0.1
        False-alarm level of the switch test (per epoch, over an unbounded
        stream). "spec": delta_t = delta / (t (t + 1)) in each estimator's
        bound (union bound: <= 2 delta).
    test_every : int, default 4
        "compare", "eprocess": one round in ``test_every`` has its label
        asked for the test (about T / test_every labels besides BBQ's).
    window0, window_max : int, default 50 and 2000
        "spec": demo window L_t = min(window0 + floor(sqrt(t)), window_max)
        labels; window_max is the ring buffer's capacity (none is allocated
        for "compare" nor "eprocess").
    rebuild_every : int, default 4
        "spec": K, the demo classifier is refitted every K L_t rounds.
    normalize : bool, default True
        Scale each x to unit norm (x = 0 stays 0) inside the kernel; the
        bounds assume ||x|| <= 1. With False the caller guarantees it.
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
        NaN/inf in x (or in a label that is used): raise ``ValueError`` with
        the state unchanged, or skip and count in ``n_skipped_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        w = A^{-1} b of the current epoch.
    n_seen_ : int
        Valid samples processed (queried or not; learnt ones in learn mode).
    n_queries_ : int
        Labels used. ``query_rate_`` = n_queries_ / n_seen_.
    switches_ : ndarray of int64
        0-based indices (among the valid samples processed) of the rounds at
        which a switch was declared, oldest first; the latest
        ``SWITCH_RECORD`` (64) are kept, ``n_switches_`` counts all.
    switch_score_ : float
        "compare", "eprocess": the test's current log e-value (a switch is
        declared when it reaches log(1 / delta)). NaN for "spec" or without
        detection.

    Notes
    -----
    Memory, fixed at construction: 2 d^2 + (C + 4) d + C values of
    ``dtype`` (C = window_max for "spec", else 0), 2 d^2 + 2 d + 24 float64
    of the comparison test ("compare": the candidate, the shadow and the
    test's sums) or
    3 d^2 + 3 d + 24 of the e-process ("eprocess"), 3 s + 16 float64 of
    scratch and cache (s = d rounded up to 8: each scratch vector on cache
    lines of its own), plus 664 bytes of counters, switch record and the
    kernels' hyper-parameters (float64, d = 10: 5.0 KB with "compare",
    5.9 KB with "eprocess", 179 KB with "spec" and window_max = 2000;
    ``nbytes()``). Time per
    round O(d^2): the product A^{-1} x (fused into the previous update when
    that round learnt), a Sherman-Morrison update on queried rounds, the
    demo rebuilds, O(d^2 / rebuild_every) amortised, and the demo's
    ||V^T x||^2 (d^2 / 2) on the rounds where the switch test needs it
    (every round in ``learn_one``/``process_one``; in the block methods
    only when its cheap bounds do not decide, rarely on a stationary
    stream).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SelectiveSampler
    >>> from edgereg.streams import switch_stream
    >>> X, y, u, v = switch_stream(4000, 3, switch_at=2000, distance=2.0, seed=1)
    >>> model = SelectiveSampler(3)
    >>> pred, asked = model.process_many(X, y)
    >>> model.n_queries_ < 4000
    True
    """

    _task = "classification"

    def __init__(
        self,
        n_features: int,
        kappa: float = 0.5,
        *,
        detect_switch: bool = True,
        switch_test: str = "compare",
        delta: float = 0.1,
        test_every: int = 4,
        window0: int = 50,
        window_max: int = 2000,
        rebuild_every: int = 4,
        normalize: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self.kappa = check_float("kappa", kappa, 0.0, 1.0, low_open=True, high_open=True)
        if not isinstance(detect_switch, (bool, np.bool_)):
            raise TypeError(f"detect_switch must be a bool, got {detect_switch!r}")
        if not isinstance(normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be a bool, got {normalize!r}")
        self.detect_switch = bool(detect_switch)
        self.normalize = bool(normalize)
        self.delta = check_float("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        self.window0 = check_int("window0", window0)
        self.window_max = check_int("window_max", window_max)
        if self.window_max < self.window0:
            raise ValueError(
                f"window_max ({self.window_max}) must be >= window0 ({self.window0})"
            )
        self.rebuild_every = check_int("rebuild_every", rebuild_every)
        if switch_test not in ("compare", "eprocess", "spec"):
            raise ValueError("switch_test must be 'compare', 'eprocess' or 'spec', got "
                             f"{switch_test!r}")
        self.switch_test = switch_test
        self._test_code = (NO_TEST if not self.detect_switch else
                           {"compare": COMPARE_TEST, "eprocess": EPROCESS_TEST,
                            "spec": SPEC_TEST}[switch_test])
        self.test_every = check_int("test_every", test_every)
        spec = self.detect_switch and switch_test == "spec"
        self._window_capacity = self.window_max if spec else 0
        self.reset()

    def _allocate(self) -> tuple[SelectiveState, SelectiveWork]:
        return _allocate(self)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """The window ring's head and size index its buffers; A^-1 is exactly symmetric, <= I."""
        counts = state.counts  # type: ignore[attr-defined]
        faults = super()._state_faults(state)
        if np.any(counts < 0):
            faults.append(("counts", f"holds a negative count {counts.tolist()}"))
        cap = self._window_capacity
        faults += index_faults("counts", int(counts[COUNT_HEAD]), 0, max(cap - 1, 0),
                               "the window's next write position")
        faults += index_faults("counts", int(counts[COUNT_SIZE]), 0, cap, "the window's size")
        E = state.switch_test  # type: ignore[attr-defined]
        d = self.n_features
        if self._test_code == EPROCESS_TEST:
            faults += eprocess_faults(E, d, eprocess_span(d), True, True, "switch_test")
        elif self._test_code == COMPARE_TEST:
            faults += compare_faults(E, d, compare_span(d), False, "switch_test")
        faults += symmetric_faults("P", state.P)  # type: ignore[attr-defined]
        # A = I + sum x x^T >= I, so A^-1 has its eigenvalues in (0, 1]: its
        # diagonal in [0, 1] up to rounding (an input of 4e9 leaves 1e-19,
        # stored as 0 or -eps) and every entry within [-1, 1]; likewise the
        # demo factor V (V V^T = A_L^-1 <= I). A P_00 of -1 would let
        # 1 + x^T A^-1 x reach zero in a kernel.
        bound = 1.0 + 1e-6
        P = np.asarray(state.P, dtype=np.float64)  # type: ignore[attr-defined]
        diag = np.diagonal(P)
        if not (np.all(diag >= -1e-6) and np.all(np.abs(P) <= bound)):
            faults.append(("P", "is not the inverse of a matrix >= I (an entry outside "
                                "[-1, 1] or a negative diagonal entry)"))
        V = np.asarray(state.demo_factor, dtype=np.float64)  # type: ignore[attr-defined]
        if not np.all(np.abs(V) <= bound):
            faults.append(("demo_factor", "holds an entry outside [-1, 1]"))
        return faults

    @classmethod
    def _file_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """A file written before the e-process test holds the demo test's state: resume it."""
        if isinstance(params, dict) and "switch_test" not in params:
            params = {**params, "switch_test": "spec"}
        return params

    def _copy_state_in(self, arrays: dict[str, np.ndarray], source: str) -> None:
        if "switch_test" not in arrays and self._state.switch_test.shape[0] == 0:
            arrays = {**arrays, "switch_test": np.zeros(0)}  # written before the e-process test
        super()._copy_state_in(arrays, source)

    def _bind_state(self) -> None:
        s, k = self._state, self._work
        # The kernels' blocks after the inputs: A, N, E, Z, F, hyper, codes.
        *_, nZ, nF = selective_sizes(self.n_features, self._window_capacity, self._test_code)
        # Z and F are views of aligned_zeros' larger blocks: found again by size.
        self._blocks = (s.w.base, s.counts.base, s.switch_test, block_at(k.x, nZ),
                        block_at(k.px, nF), k.hyper, k.codes)

    def nbytes(self) -> int:
        """Bytes of the kernels' blocks (every field is a view of one of them),
        F's padding between its vectors included; as for every model, not the
        <= 64 bytes before a block that align it."""
        return int(sum(block.nbytes for block in self._blocks))

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """w = A^{-1} b of the current epoch (a copy)."""
        return self._state.w.copy()

    @property
    def n_queries_(self) -> int:
        """Labels used so far."""
        return int(self._state.counts[COUNT_QUERIES])

    @property
    def query_rate_(self) -> float:
        """Labels used per valid sample processed (0 before any)."""
        seen = self.n_seen_
        return self.n_queries_ / seen if seen else 0.0

    @property
    def n_switches_(self) -> int:
        """Switches declared so far (all of them, not only the recorded ones)."""
        return int(self._state.counts[COUNT_SWITCHES])

    @property
    def switches_(self) -> np.ndarray:
        """Steps of the latest (up to 64) declared switches, oldest first."""
        return ring_record(self._state.switches, self.n_switches_)

    @property
    def switch_score_(self) -> float:
        """The test's current log e-value ("compare", "eprocess"; NaN for
        "spec" or without detection): a switch is declared when it reaches
        log(1 / delta)."""
        E = self._state.switch_test
        if self._test_code == COMPARE_TEST:
            return float(python_function(compare_score)(E))
        if not E.shape[0]:
            return float("nan")
        return float(python_function(eprocess_score)(E, self.n_features))

    @property
    def last_switch_score_(self) -> float:
        """The log e-value that declared the latest switch (NaN before any, or
        for "spec")."""
        E = self._state.switch_test
        return float(E[GLOBAL_LAST]) if E.shape[0] and self.n_switches_ else float("nan")

    @property
    def n_demo_queries_(self) -> int:
        """Labels asked only for the switch test: the demo window ("spec") or
        the test rounds ("compare", "eprocess"); included in ``n_queries_``."""
        return int(self._state.counts[COUNT_DEMO])

    @property
    def n_demo_rebuilds_(self) -> int:
        """Times the demo classifier was refitted."""
        return int(self._state.counts[COUNT_REBUILDS])

    # -------------------------------------------------------------- one-step
    def predict_one(self, x: Any) -> float:
        """sign(w_t^T x) = sign(w_{t-1}^T x), in {-1.0, +1.0} (sign(0) = +1); no learning."""
        return 1.0 if _dfop_predict_one(self._row(x), self._state.w) >= 0.0 else -1.0

    def should_query(self, x: Any) -> bool:
        """The BBQ rule for x as the next round t: r_t > t^-kappa (no state change)."""
        xr = self._row(x)
        *_, ask, status = _assess_one(xr, False, *self._blocks)
        if status != OK:
            raise ValueError(self._invalid_message(xr, 0.0, "sample"))
        return ask != NO_LABEL

    def learn_one(self, x: Any, y: Any) -> float:
        """One round with the label given: predict, test for a switch, learn (x, y).

        Returns the prequential prediction (that of :meth:`predict_one` before
        the call).

        Raises
        ------
        ValueError
            On NaN/inf in x or an invalid label (``on_invalid="raise"``); the
            state is then exactly as before the call.
        """
        xr = self._row(x)
        f, status = _learn_one(xr, label_sign(y), *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return 1.0 if f >= 0.0 else -1.0

    def process_one(self, x: Any, label_oracle: Callable[[], Any]) -> tuple[float, bool]:
        """One round of the selective-sampling protocol.

        Predicts x, decides by the BBQ rule whether to ask for its label,
        calls ``label_oracle()`` only if so, learns the label, tests for a
        switch and rebuilds the demo classifier when due.

        Returns
        -------
        (prediction, queried) : (float, bool)
            The prediction in {-1.0, +1.0} made before the label is asked, and
            whether the oracle was called.
        """
        xr = self._row(x)
        f, rp, g, rLp, ask, status = _assess_one(xr, False, *self._blocks)
        pred = 1.0 if f >= 0.0 else -1.0
        q = ask != NO_LABEL
        y: Any = 0.0
        if status == OK:
            y = label_oracle() if q else 0.0
            status = _commit(label_sign(y) if q else 0.0, (f, rp, g, rLp, ask), *self._blocks)
        if status != OK:
            if self._skip:
                self._state.counts[COUNT_SKIPPED] += 1
                return pred, False
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return pred, bool(q)

    # ----------------------------------------------------------------- block
    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return label_signs(Y, n)  # the block kernel's _label_of keeps +-1 and NaN as they are

    def _run(self, X: np.ndarray, Y: np.ndarray, forced: bool, out: np.ndarray,
             asked: np.ndarray) -> int:
        kern = _run_many_learn if forced else _run_many_process
        return kern(X, Y, out, asked, *self._blocks)

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return self._run(X, Y, True, out, np.empty(X.shape[0], dtype=np.bool_))

    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """Learn every row (all labels given) in one kernel call.

        Returns the prequential predictions in {-1.0, +1.0}; identical to
        :meth:`learn_one` row by row.
        """
        return self._learn_many_checked(X, y)

    def process_many(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Run the selective-sampling protocol over a block in one kernel call.

        ``y[t]`` is read only for the rows whose label is queried (the others
        may hold anything, NaN for an unknown label). Identical to
        :meth:`process_one` row by row with an oracle returning ``y[t]``.

        Returns
        -------
        predictions : ndarray of shape (n,)
            Prequential predictions in {-1.0, +1.0}.
        queried : ndarray of bool, shape (n,)
            Which labels were used.

        Raises
        ------
        ValueError
            On NaN/inf in a row of X or in a queried label: rows before it are
            processed, it and the rows after it are not.
        """
        X = self._check_X(X)
        n = X.shape[0]
        Y = label_signs(y, n)
        out = np.empty(n, dtype=np.float64)
        asked = np.empty(n, dtype=np.bool_)
        bad = self._run(X, Y, False, out, asked)
        if bad >= 0:
            raise ValueError(
                self._invalid_message(X[bad], np.asarray(y)[bad], f"row {bad} of the block")
                + f"; rows 0..{bad - 1} were processed, rows {bad}.. were not"
            )
        return out, asked

    def _predict_block(self, X, out):  # type: ignore[override]
        _dfop_predict_many(X, self._state.w, out)

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block without learning: signs in {-1.0, +1.0}."""
        return np.where(super().predict_many(X) >= 0.0, 1.0, -1.0)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "delta": 0.5, "window0": 5, "window_max": 12, "rebuild_every": 2,
             "switch_test": "spec"},
            {"n_features": 5, "dtype": "float32", "kappa": 0.3},
            {"n_features": 3, "detect_switch": False, "normalize": False},
            {"n_features": 3, "switch_test": "spec"},
            {"n_features": 3, "delta": 0.5, "test_every": 2},
            {"n_features": 4, "switch_test": "eprocess"},
            {"n_features": 3, "switch_test": "eprocess", "dtype": "float32", "delta": 0.5},
        ]
