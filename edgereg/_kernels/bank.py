"""The self-tuning bank's kernels: K DFOP members, one per forgetting factor, and their aggregate.

docs/algorithms/dfop.md, docs/design/auto-forgetting.md. Every member is an exact DFOP
(``_kernels/dfop.py``) with its own mu and learns every sample; the K
members stand on K adjacent factors low, ..., low + K - 1 of a lattice
(``window``, ``lattice``: by default 0 .. 0.99), a window that ``_move``
slides towards the member of least slow loss every CHUNK learnt samples.
The bank predicts with the members' predictions weighted by fixed share
(Herbster & Warmuth 1998), which tracks the best member *over time*::

    q_k  = member k's prediction w_k^T x (classification: clipped to [-1, 1])
    yhat = sum_k v_k q_k                      (the weights v sum to 1)
    l_k  = min((q_k - y)^2 / s, LOSS_CAP)     (regression: s = ERROR_SCALE times
                                               the bank's own mean squared error)
    l_k  = WRONG_SIGN_LOSS [sign(q_k) != y]   (classification: the member's 0-1 loss)
    v_k <- v_k exp(-eta (l_k - min_j l_j))    (exponential weights)
    v_k <- (1 - alpha) v_k / sum(v) + alpha / K   (fixed share)

Subtracting the smallest loss keeps the best member's factor at 1, so the
weights never all underflow; the share keeps every weight above alpha / K,
so a member can take over within about log(K / alpha) / eta rounds of
clearly smaller loss. The members do not depend on the weights: a block is
learnt member by member (each with DFOP's fused block kernel, over chunks
of CHUNK rows whose predictions the block A keeps) and then aggregated row
by row, which is bit for bit what learn_one does sample by sample (the
chunks end where the learnt count is a multiple of CHUNK: the window moves
at the same samples in both).

Blocks (docs/design/calling_convention.md):

* ``PW`` (K, d + 1, d) of the dtype: member k's P and w (DFOP's PW, stacked);
* ``A`` float64, one block: member k's DFOP block B (``dfop.packed_size(d)``
  each, every ``member_stride(d)`` floats: scratch, learnt L, hyper, codes),
  the chunk of predictions (K * CHUNK, scratch), the bank's hyper-parameters
  and codes (codes[CODE_LATTICE]: the lattice's length), its counters (learnt,
  skipped), the loss scale (n, mean, variance of the bank's errors), the weights v (K), the
  members' predictions q (K, scratch), the window (low), the lattice's
  factors and refresh periods, and the members' slow losses (K).
  ``_bank_views`` is the one layout.

A sample is valid for the bank when every x_j and y is finite and at most
LIMIT in magnitude; an invalid one reaches no member. Beyond LIMIT, DFOP's
own guard refuses a row or not depending on each member's state; within
it, a member whose state cannot take a row (rare: the update would
overflow or make its P indefinite) skips it alone and counts it in its
own counters, and the bank goes on (docs/design/auto-forgetting.md).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import cgutils, types
from numba.core import config as numba_config
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array

from .._jit import compiled, inline_kernel, kernel, recompile_with
from . import dfop as _dfop_kernels
from .dfop import (
    _STEP_CAREFULLY,
    CODE_KEEP_PRIOR,
    CODE_PERIOD,
    HYPER_MU,
    HYPER_P0,
    _after_step,
    _dfop_learn_many,
    _float32_arithmetic,
    _packed_views,
    _reads,
    _scratch_views,
    _step_from,
    _step_read,
    packed_size,
)
from .dtype import scratch_of
from .linalg import symv as _symv
from .linalg import symv_rows
from .prior import _max_variance

#: Rows a member learns per call of DFOP's block kernel (the bank keeps K *
#: CHUNK predictions; 32 rows make the call's cost negligible).
CHUNK = 32
#: Largest |x_j| and |y| a bank accepts (the loss scale and losses stay finite).
LIMIT = 1e100
#: A member's loss is capped here: exp(-eta LOSS_CAP) is 0 for eta >= 1e-2,
#: and l_k - min(l) is never inf - inf.
LOSS_CAP = 1e5
#: The loss scale's memory: the plain mean and variance of the bank's first
#: SCALE_MEMORY errors, then exponentially weighted with rate 1 / SCALE_MEMORY.
SCALE_MEMORY = 2000
#: The bank's errors enter the loss scale clipped to +-ERROR_LIMIT (a member's
#: prediction may be any finite number; the scale's statistics stay finite).
ERROR_LIMIT = 2.0 * LIMIT
#: Regression: a member's squared error is divided by ERROR_SCALE times the
#: bank's own running mean squared error (eta = 2 on it). Measured on the
#: random-walk streams (examples/adaptation_forgetting.py, 2 seeds), coefficients
#: whose best fixed mu is ~0.2: ERROR_SCALE 4, 20, 50, 100 read 1.10, 1.08/1.05,
#: 1.07/1.05, 1.06/1.04 of the best fixed MSE, the other streams 1.004 at most
#: up to 50 (the target's variance, before: 1.09/1.06, 1.02 at mu ~0.1).
ERROR_SCALE = 50.0
#: Classification: a member whose sign is wrong loses this (its 0-1 loss
#: times WRONG_SIGN_LOSS: eta = 2 on it is 0.5 a mistake). The squared error
#: of the clipped score, before, favoured members that shrink their scores
#: where the drift is fast (-0.9 .. -3.4 points at best fixed mu 0.1-0.9);
#: 1, 0.5, 0.25 read 22, 26, 26 of 26 random-walk streams within 1 point,
#: worst -0.63, -0.55, -0.61 on the paper's 25 (docs/design/auto-forgetting.md).
WRONG_SIGN_LOSS = 0.25

# The block A: the members' DFOP blocks, the chunk of predictions, then the
# bank's hyper (float), codes (int64 bits), learnt fields, scratch and lattice.
HYPER_ETA, HYPER_SHARE = 0, 1
N_HYPER = 2
CODE_CLASSIFY, CODE_SKIP, CODE_LATTICE, CODE_SCOUT = 0, 1, 2, 3
N_CODES = 4
HEAD = N_HYPER + N_CODES + 2 + 3 + 1  # hyper, codes, counts, scale, window
#: The members' slow losses, which move the window, forget at this rate a sample.
SLOW_RATE = 1.0 / 500.0


@inline_kernel
def member_stride(d):
    """Floats between two members' blocks: DFOP's block rounded up to 8 floats,
    so that every member's scratch vectors start 64-byte aligned when A does
    (misaligned, the fused pass ran 20% slower at d = 50, measured)."""
    return (packed_size(d) + 7) // 8 * 8


@inline_kernel
def bank_size(K, n_lattice, d):
    """Length of the block A of a bank of K members of dimension d on a lattice
    of ``n_lattice`` forgetting factors."""
    return K * member_stride(d) + K * CHUNK + HEAD + 3 * K + 2 * n_lattice


@inline_kernel
def member_index(low, k, K, n, scout):
    """The lattice index of member k's factor (low: the window's lowest).

    Without a scout (``scout`` 0) the K members are the window, low + k.
    With one, members 0 .. K - 2 are the window and member K - 1 the scout,
    ``scout`` lattice steps above the window's top (at most the lattice's
    last factor)."""
    if scout == 0 or k < K - 1:
        return low + k
    return min(low + K - 2 + scout, n - 1)


@inline_kernel
def _bank_views(A, K, d):
    """hyper, codes, counts, scale, v, q, B (member blocks), chunk, window,
    lattice, periods, slow: A's one layout (the lattice's length is codes[CODE_LATTICE])."""
    g = K * member_stride(d)
    h = g + K * CHUNK
    a = h + N_HYPER
    b = a + N_CODES
    c = b + 2
    e = c + 3
    f = e + K
    o = f + K
    hyper = A[h:a]
    codes = A[a:b].view(np.int64)
    counts = A[b:c].view(np.int64)
    window = A[o : o + 1].view(np.int64)
    n = codes[CODE_LATTICE]
    lattice = A[o + 1 : o + 1 + n]
    periods = A[o + 1 + n : o + 1 + 2 * n].view(np.int64)
    r = o + 1 + 2 * n
    return (hyper, codes, counts, A[c:e], A[e:f], A[f:o], A[:g], A[g:h], window, lattice,
            periods, A[r : r + K])


@inline_kernel
def _member_block(B, k, d):
    """Member k's DFOP block (``dfop._packed_views``'s B)."""
    start = k * member_stride(d)
    return B[start : start + packed_size(d)]


@inline_kernel
def _valid(x, y):
    """Every x_j and y finite and within LIMIT (NaN fails every comparison)."""
    ok = abs(y) <= LIMIT
    for j in range(x.shape[0]):
        ok &= abs(np.float64(x[j])) <= LIMIT
    return ok


@inline_kernel
def _member_prediction(p, classify):
    """q_k: a member's prediction as the aggregate takes it (0 when not finite)."""
    if not np.isfinite(p):
        return 0.0
    if classify:
        return min(max(p, -1.0), 1.0)
    return p


@inline_kernel
def _combine(q, v):
    """yhat = sum_k v_k q_k (v sums to 1: ``_reweigh``; one member: q_0 exactly)."""
    yhat = 0.0
    for k in range(v.shape[0]):
        yhat += v[k] * q[k]
    return yhat


@inline_kernel
def _loss_scale(scale):
    """s (regression): ERROR_SCALE times the bank's mean squared error so far,
    its errors' variance plus their mean squared (1 until it is positive)."""
    s = ERROR_SCALE * (scale[2] + scale[1] * scale[1])
    if not s > 0.0:
        return 1.0
    return s


@inline_kernel
def _observe_error(scale, e):
    """Update (n, mean, variance) of the bank's errors with e, clipped to
    +-ERROR_LIMIT (Welford over the first SCALE_MEMORY, then exponential)."""
    e = min(max(e, -ERROR_LIMIT), ERROR_LIMIT)
    n = scale[0] + 1.0
    scale[0] = n
    rate = 1.0 / min(n, SCALE_MEMORY)
    delta = e - scale[1]
    scale[1] += rate * delta
    scale[2] = (1.0 - rate) * (scale[2] + rate * delta * delta)


@inline_kernel
def _reweigh(q, y, v, eta, share, s, classify):
    """Exponential weights on the losses of q against y, then fixed share.

    The loss is the squared error over s for regression; for labels,
    WRONG_SIGN_LOSS when the sign of q_k is not y's (the squared error of
    the clipped score favoured members that shrink their scores, half its
    absolute error lost up to 1.2 points on the paper's streams:
    docs/design/auto-forgetting.md).

    The share is written u_k + alpha (1 / K - u_k), u = v / sum(v): the same
    value as (1 - alpha) u_k + alpha / K, and for one member exactly 1 at
    every step (so that its prediction is the member's, bit for bit).
    """
    K = v.shape[0]
    inv_s = 1.0 / s
    least = LOSS_CAP
    for k in range(K):
        if classify:
            loss = 0.0 if (q[k] >= 0.0) == (y > 0.0) else WRONG_SIGN_LOSS
        else:
            err = q[k] - y
            loss = (err * err) * inv_s
            loss = loss if loss < LOSS_CAP else LOSS_CAP
        q[k] = loss  # q is scratch: it holds the losses from here on
        least = loss if loss < least else least
    total = 0.0
    for k in range(K):
        excess = q[k] - least
        if excess > 0.0:  # exp(-eta 0) is 1: the leader's weight stays as it is, bit for bit
            v[k] = v[k] * math.exp(-eta * excess)
        total += v[k]
    inv_total = 1.0 / total
    uniform = 1.0 / K
    for k in range(K):
        u = v[k] * inv_total
        v[k] = u + share * (uniform - u)


@inline_kernel
def _aggregate(q, y, hyper, codes, scale, v, slow):
    """The bank's round: yhat from the members' predictions q, then learn y
    (the weights, the loss scale, the members' slow losses)."""
    classify = codes[CODE_CLASSIFY] != 0
    yhat = _combine(q, v)
    if classify:  # the slow loss is the error rate: what the window must lower
        for k in range(v.shape[0]):
            wrong = 0.0 if (q[k] >= 0.0) == (y > 0.0) else 1.0
            slow[k] += SLOW_RATE * (wrong - slow[k])
    s = 1.0 if classify else _loss_scale(scale)
    _reweigh(q, y, v, hyper[HYPER_ETA], hyper[HYPER_SHARE], s, classify)
    if not classify:
        for k in range(v.shape[0]):  # q holds the losses now
            slow[k] += SLOW_RATE * (q[k] - slow[k])
        _observe_error(scale, yhat - y)
    return yhat


@inline_kernel
def _copy_member(PW, B, slow, src, dst, d):
    """Member ``dst`` becomes member ``src`` bit for bit (P, w, its DFOP block, its slow loss)."""
    stride = member_stride(d)
    for i in range(d + 1):
        for j in range(d):
            PW[dst, i, j] = PW[src, i, j]
    for i in range(stride):
        B[dst * stride + i] = B[src * stride + i]
    slow[dst] = slow[src]


@inline_kernel
def _set_factor(B, k, index, lattice, periods, d):
    """Member k's forgetting factor and refresh period: the lattice's ``index``-th."""
    _, _, h, c = _packed_views(_member_block(B, k, d), d)
    h[HYPER_MU] = lattice[index]
    c[CODE_PERIOD] = periods[index]


@inline_kernel
def _move(PW, B, v, slow, window, lattice, periods, d, learnt, scout):
    """Move the window towards the leader, if it leads at an edge or is the scout.

    The window's W members (W = K, or K - 1 with a scout) are always the
    lattice's factors low, ..., low + W - 1 in order (low = ``window[0]``);
    the scout (``scout`` > 0) is member K - 1 (``member_index``). The leader
    is the member of the strictly smallest slow loss (the losses averaged
    over about 1 / SLOW_RATE samples: the drift *rate* is what the window
    follows; the weights follow the switches between the members).

    * The scout leads, beyond the window's next factor, and the bank has
      learnt 1 / SLOW_RATE samples (before that the slow losses are mostly
      their zero start): the window *jumps*, its top onto the scout's
      factor, every window member a copy of the scout (P, w, counters,
      slow loss) with its own factor. One move crosses the factors between
      (a local search stops where the error over the factors dips: docs/
      design/auto-forgetting.md).
    * The window's fastest member (or the scout next to it) leads and the
      lattice goes on: the slowest member is dropped, the others move one
      place, the new top starts as a copy of the old top with the next
      factor and takes the dropped member's weight (the weights still sum
      to 1). The slowest member leads: the same, one factor down.

    The scout keeps its state and weight; its factor follows the window.
    Called every CHUNK learnt samples, after the aggregate, by learn_one and
    learn_many alike.
    """
    K = v.shape[0]
    n = lattice.shape[0]
    W = K - 1 if scout > 0 else K
    low = window[0]
    if W >= n or W < 1 or K < 2:
        return
    lead = 0
    for k in range(1, K):
        if slow[k] < slow[lead]:
            lead = k
    for k in range(K):
        if k != lead and slow[k] == slow[lead]:
            return  # no strict leader
    top = low + W - 1
    if scout > 0 and lead == K - 1 and member_index(low, K - 1, K, n, scout) > top + 1 \
            and learnt * SLOW_RATE >= 1.0:
        low = min(member_index(low, K - 1, K, n, scout), n - 1) - (W - 1)
        for k in range(W):
            _copy_member(PW, B, slow, K - 1, k, d)
            _set_factor(B, k, low + k, lattice, periods, d)
    elif (lead == W - 1 or (scout > 0 and lead == K - 1)) and top + 1 < n:
        dropped = v[0]
        for k in range(W - 1):
            _copy_member(PW, B, slow, k + 1, k, d)
            v[k] = v[k + 1]
        if W >= 2:
            _copy_member(PW, B, slow, W - 2, W - 1, d)
        v[W - 1] = dropped
        low += 1
        _set_factor(B, W - 1, low + W - 1, lattice, periods, d)
    elif lead == 0 and low > 0:
        dropped = v[W - 1]
        for k in range(W - 1, 0, -1):
            _copy_member(PW, B, slow, k - 1, k, d)
            v[k] = v[k - 1]
        if W >= 2:
            _copy_member(PW, B, slow, 1, 0, d)
        v[0] = dropped
        low -= 1
        _set_factor(B, 0, low, lattice, periods, d)
    else:
        return
    window[0] = low
    if scout > 0:
        _set_factor(B, K - 1, member_index(low, K - 1, K, n, scout), lattice, periods, d)


def untracked(a):
    """``a`` without its reference count: the same array, whose views and
    copies in a kernel cost no atomic increment and decrement.

    numba counts the references of every array value a kernel makes (a view,
    an argument passed on, an inlined helper's parameter); each costs an
    atomic operation on the array's memory record, and the pairs that span
    branches and calls are not pruned. An array that owns no record (as the C
    export's ``carray`` arrays) costs none. For an argument that the kernel
    only reads and writes in place, never returns nor stores: its caller holds
    it for the whole call. Plain ``a`` without the JIT.
    """
    return a


@intrinsic
def _untracked(typingctx, a):
    def codegen(context, builder, signature, args):
        array = make_array(signature.args[0])(context, builder, value=args[0])
        out = make_array(signature.return_type)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, field, getattr(array, field))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return a(a), codegen


@overload(untracked, inline="always")
def _untracked_overload(a):
    if isinstance(a, types.Array):
        return lambda a: _untracked(a)


if numba_config.DISABLE_JIT:
    # The intrinsics have no Python body: their plain-Python twins (the same arrays).
    _untracked = untracked  # noqa: F811


@inline_kernel
def _member_step(x, y, lam, w, P, Px, max_variance, p0, Px64):
    """``dfop._dfop_step`` written into the bank's step: P x (``symv_rows``), then
    ``_step_from``'s body (``_reads``, ``_step_read``), without their two calls;
    a careful float32 step (rare) steps again from a float64 Px by their calls."""
    pmin = symv_rows(P, x, Px)
    yhat, xPx, big, wbig = _reads(x, w, Px)
    yhat, status = _step_read(x, y, lam, w, P, Px, max_variance, p0, pmin, yhat, xPx, big,
                              wbig)
    if status == _STEP_CAREFULLY:
        _symv(P, x, Px64)
        return _step_from(x, y, lam, w, P, Px64, max_variance, p0, pmin)
    return yhat, status


@inline_kernel
def _member_learn_one(x, y, PW, L, work, hyper, codes):
    """``dfop._dfop_learn_one`` in the bank's step: its body, DFOP's step and
    refresh (``_dfop_step`` as ``_member_step``, ``_after_step``), without a call of its own,
    whose seven arrays passed field by field took ~15% of the members' time
    at d = 10 (measured in a compiled loop, untracked blocks: 1.37-1.41 us
    for the five against 1.63-1.70; learn_one 0.98-1.17x, median 1.08x, in
    5 runs of ``asv_bench/dfop_family_checks.py``). Returns the member's
    prediction (DFOP's guards refuse a row alone: the status is counted)."""
    d = x.shape[0]
    w = PW[d]
    P = PW[:d]
    p0 = hyper[HYPER_P0]
    mu = hyper[HYPER_MU]
    cap = _max_variance(p0, codes[CODE_KEEP_PRIOR] != 0)
    Px64 = _scratch_views(work, d)[2]
    if _float32_arithmetic(d, P, codes):
        Px, _, v = _scratch_views(scratch_of(work, P), d)
        yhat, status = _member_step(x, y, 1.0 - mu, w, P, Px, cap, p0, Px64)
        _after_step(status, mu, w, P, L, v, p0, codes, Px)
    else:
        Px, _, v = _scratch_views(work, d)
        yhat, status = _member_step(x, y, 1.0 - mu, w, P, Px, cap, p0, Px64)
        _after_step(status, mu, w, P, L, v, p0, codes, Px)
    return yhat


#: learn_one's and learn_many's kernels: numba's flag ``_nrt=False`` (an ``njit`` option) compiles
#: them without its reference counting (NRT).
_no_nrt = compiled(_nrt=False)


@_no_nrt
def _bank_learn_one(x, y, PW, A):
    """Every member learns (x, y) (``dfop._dfop_learn_one``'s step), then the aggregate,
    then, every CHUNK learnt samples, the window's move (``_move``).

    Returns the bank's prequential prediction; NaN for an invalid sample
    (nothing written but the skipped count, when skipping). Compiled
    without NRT: the step allocates nothing and only reads and writes its
    blocks in place, never returns nor stores them, while its caller holds
    them, so it needs no reference count and numba emits none. With NRT,
    even on the blocks untracked (null records) every array value the step
    made (a view, an inlined helper's parameter) kept its call of NRT_incref
    or NRT_decref, functions numba marks ``noinline``; and a call from
    Python made a memory record per array (a malloc and a free, under a
    lock). Without: learn_one 1.19x at d = 10 (docs/design/auto-forgetting.md).
    The kernels the step calls (compiled with NRT) get the blocks untracked
    (``_untracked``), as before, also from a caller compiled with NRT (Fleet's,
    SparseDFOP's bank). The step is a kernel of its own whose arguments are
    never rebound: written with its arguments rebound (``x = untracked(x)``),
    numba's inlining of ``_move`` lost the store of the dropped member's
    weight (seen against the previous kernel, classification, float32, d = 3).
    """
    return _bank_step(_untracked(x), y, _untracked(PW), _untracked(A))


@_no_nrt
def _bank_step(x, y, PW, A):
    """``_bank_learn_one``'s step, on blocks that its caller holds."""
    K = PW.shape[0]
    d = x.shape[0]
    hyper, codes, counts, scale, v, q, B, _, window, lattice, periods, slow = _bank_views(
        A, K, d)
    if not _valid(x, y):
        if codes[CODE_SKIP] != 0:
            counts[1] += 1
        return np.nan
    classify = codes[CODE_CLASSIFY] != 0
    for k in range(K):
        work, L, h, c = _packed_views(_member_block(B, k, d), d)
        q[k] = _member_prediction(_member_learn_one(x, y, PW[k], L, work, h, c), classify)
    counts[0] += 1
    yhat = _aggregate(q, y, hyper, codes, scale, v, slow)
    if counts[0] % CHUNK == 0:
        _move(PW, B, v, slow, window, lattice, periods, d, counts[0], codes[CODE_SCOUT])
    return yhat


@_no_nrt
def _bank_learn_many(X, Y, out, PW, A):
    """Learn a block (``_bank_block``), compiled without NRT, on untracked arrays.

    As learn_one's kernels (``_bank_learn_one``): the block kernel makes views
    of its arrays per chunk and member (the rows, the member's DFOP block, the
    chunk's predictions) and passes them to DFOP's block kernel, and with NRT
    each view and argument cost atomic reference counts: at d = 10 the bank's
    learn_many took 456 ns a row with them, 354 without (DFOP 57;
    docs/design/auto-forgetting.md, "learn_many without NRT"). Results are
    bit for bit the same."""
    return _bank_block(_untracked(X), _untracked(Y), _untracked(out), _untracked(PW),
                       _untracked(A))


@_no_nrt
def _bank_block(X, Y, out, PW, A):
    """Learn a block; out[t] = the bank's prequential prediction of row t.

    Member by member over chunks that end where the bank's learnt count is a
    multiple of CHUNK (DFOP's fused block kernel), then the aggregate row by
    row, then the window's move: where learn_one moves it. Returns -1, or
    the first invalid row when not skipping (rows before it learnt, it and
    the rows after not).
    """
    n = X.shape[0]
    d = X.shape[1]
    K = PW.shape[0]
    hyper, codes, counts, scale, v, q, B, chunk, window, lattice, periods, slow = (
        _bank_views(A, K, d))
    classify = codes[CODE_CLASSIFY] != 0
    start = 0
    while start < n:
        end = min(start + CHUNK - counts[0] % CHUNK, n)
        bad = -1
        for t in range(start, end):
            if not _valid(X[t], Y[t]):
                bad = t
                end = t
                break
        m = end - start
        if m > 0:
            for k in range(K):
                work, L, h, c = _packed_views(_member_block(B, k, d), d)
                _dfop_learn_many(X[start:end], Y[start:end], h[HYPER_MU : HYPER_MU + 1],
                                 chunk[k * CHUNK : k * CHUNK + m], PW[k], L, work, h, c)
            for i in range(m):
                for k in range(K):
                    q[k] = _member_prediction(chunk[k * CHUNK + i], classify)
                out[start + i] = _aggregate(q, Y[start + i], hyper, codes, scale, v, slow)
            counts[0] += m
            if counts[0] % CHUNK == 0:
                _move(PW, B, v, slow, window, lattice, periods, d, counts[0], codes[CODE_SCOUT])
        if bad < 0:
            start = end
            continue
        if codes[CODE_SKIP] == 0:
            return bad
        counts[1] += 1
        out[bad] = np.nan
        start = bad + 1
    return -1


@inline_kernel
def _bank_predict(x, PW, q, v, classify):
    """The aggregate of the members' predictions w_k^T x, without learning."""
    d = x.shape[0]
    for k in range(PW.shape[0]):
        w = PW[k, d]
        acc = 0.0
        for j in range(d):
            acc += np.float64(w[j]) * x[j]
        q[k] = _member_prediction(acc, classify)
    return _combine(q, v)


@kernel
def _bank_predict_many(X, PW, A, out):
    K = PW.shape[0]
    hyper, codes, counts, scale, v, q, B, chunk, _, _, _, _ = _bank_views(A, K, X.shape[1])
    classify = codes[CODE_CLASSIFY] != 0
    for t in range(X.shape[0]):
        out[t] = _bank_predict(X[t], PW, q, v, classify)


@kernel
def _bank_predict_one(x, PW, A):
    K = PW.shape[0]
    hyper, codes, counts, scale, v, q, B, chunk, _, _, _, _ = _bank_views(A, K, x.shape[0])
    return _bank_predict(x, PW, q, v, codes[CODE_CLASSIFY] != 0)


# The bank runs DFOP's kernels: recompile it when _kernels/dfop.py changes (see _jit).
recompile_with(globals(), _dfop_kernels)
