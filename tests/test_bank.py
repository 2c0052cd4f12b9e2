"""DFOPBank (``forgetting="auto"``) against a slow NumPy reference of the same method.

The reference runs every member as a separate plain DFOP and writes the
aggregation out from its equations (docs/design/auto-forgetting.md,
_kernels/bank.py): the members must match the bank's bit for bit, the
aggregate to rounding, at every step. The contract tests (test_contracts.py,
test_allocation.py) cover the bank through ``DFOPBank._unit_test_params``.
"""

from __future__ import annotations

import numpy as np
import pytest

import edgereg
from edgereg import DFOP, DFOPBank, FleetBank, StateFileError
from edgereg.bank import DEFAULT_GRID, DEFAULT_LATTICE, DEFAULT_MEMBERS, SCOUT_GAP, STUDY_GRID
from edgereg.streams import drift_regimes


class ReferenceBank:
    """Fixed share over plain DFOP members, as the equations say (slow, obvious).

    With ``members`` < len(grid), the members are a window of ``members``
    adjacent factors of the lattice ``grid``: every 32 learnt samples, when
    the fastest (slowest) member's slow loss is strictly the smallest and
    the lattice goes on, the window moves one factor that way, the new edge
    member a copy of the old one with the next factor, taking the dropped
    member's weight. With ``scout`` > 0 one more member stands ``scout``
    factors above the window's top (at most the last factor); when it leads
    beyond the window's next factor, after 500 learnt samples, the window
    jumps, its top onto the scout's factor, every window member a copy of
    the scout; when it leads next to the window, the window moves one
    factor up (docs/design/auto-forgetting.md).
    """

    def __init__(self, d, grid, task, dtype, eta=2.0, share=1e-3, keep_prior=True,
                 members=None, low=0, scout=0):
        self.grid, self.d, self.dtype, self.keep_prior = grid, d, dtype, keep_prior
        W = len(grid) if members is None else members
        self.W, self.scout = W, scout
        self.low = low
        self.members = [self._member(grid[low + k]) for k in range(W)]
        if scout:
            self.members.append(self._member(grid[self._scout_index()]))
        K = len(self.members)
        self.classify = task == "classification"
        self.v = np.full(K, 1.0 / K)
        self.slow = np.zeros(K)
        self.eta, self.share = eta, share
        self.n, self.mean, self.var = 0, 0.0, 0.0
        self.learnt = 0

    def _member(self, mu):
        return DFOP(self.d, mu, task="regression", dtype=self.dtype, keep_prior=self.keep_prior,
                    on_invalid="skip")

    def _copy(self, source, mu):
        new = self._member(mu)
        for target, value in zip(new._state, source._state, strict=True):
            np.copyto(target, value)  # P, w and every counter, as the kernel copies them
        return new

    def learn_one(self, x, y):
        q = np.array([m.learn_one(x, y) for m in self.members])
        if self.classify:
            q = np.clip(q, -1.0, 1.0)
        yhat = float(self.v @ q)
        # regression: the squared error over 50 times the bank's own mean squared
        # error (1 until positive); labels: 1/4 for a wrong sign
        ms = 50.0 * (self.var + self.mean * self.mean)
        s = 1.0 if self.classify or not ms > 0 else ms
        wrong = np.where((q >= 0) == (y > 0), 0.0, 1.0)
        loss = 0.25 * wrong if self.classify else np.minimum((q - y) ** 2 * (1.0 / s), 1e5)
        v = self.v * np.exp(-self.eta * (loss - loss.min()))
        u = v / v.sum()
        self.v = (1 - self.share) * u + self.share / len(u)
        # the slow losses: the error rate for labels, the losses for regression
        slow_loss = wrong if self.classify else loss
        self.slow = self.slow + (1.0 / 500.0) * (slow_loss - self.slow)
        if not self.classify:
            self.n += 1
            rate = 1.0 / min(self.n, 2000)
            delta = np.clip(yhat - y, -2e100, 2e100) - self.mean  # the bank's error
            self.mean += rate * delta
            self.var = (1 - rate) * (self.var + rate * delta * delta)
        self.learnt += 1
        if self.learnt % 32 == 0:
            self._move()
        return yhat

    def _scout_index(self):
        return min(self.low + self.W - 1 + self.scout, len(self.grid) - 1)

    def _move(self):
        W, n = self.W, len(self.grid)
        if W >= n:
            return
        slow = self.slow
        lead = int(np.argmin(slow))
        if np.sum(slow == slow[lead]) > 1:
            return  # no strict leader
        window, scout = self.members[:W], self.members[W:]
        wv, sv = self.v[:W], self.v[W:]
        wslow, sslow = slow[:W], slow[W:]
        top = self.low + W - 1
        if (self.scout and lead == W and self._scout_index() > top + 1
                and self.learnt >= 500):
            self.low = self._scout_index() - (W - 1)
            window = [self._copy(scout[0], self.grid[self.low + k]) for k in range(W)]
            wslow = np.full(W, sslow[0])
        elif (lead == W - 1 or (self.scout and lead == W)) and top + 1 < n:
            new = self._copy(window[-1], self.grid[top + 1])
            window = [*window[1:], new]
            wv = np.append(wv[1:], wv[0])
            wslow = np.append(wslow[1:], wslow[-1])
            self.low += 1
        elif lead == 0 and self.low > 0:
            new = self._copy(window[0], self.grid[self.low - 1])
            window = [new, *window[:-1]]
            wv = np.append(wv[-1], wv[:-1])
            wslow = np.append(wslow[0], wslow[:-1])
            self.low -= 1
        else:
            return
        if self.scout:  # the scout keeps its state; its factor follows the window
            scout = [self._copy(scout[0], self.grid[self._scout_index()])]
        self.members = window + scout
        self.v = np.concatenate([wv, sv])
        self.slow = np.concatenate([wslow, sslow])


def _stream(task, n=600, d=4, seed=0):
    """Linear targets with an abrupt switch halfway: the weights have to move."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=(2, d))
    score = np.where(np.arange(n) < n // 2, X @ w[0], X @ w[1]) + 0.3 * rng.normal(size=n)
    y = np.where(score >= 0, 1.0, -1.0) if task == "classification" else 5.0 * score + 2.0
    return X, y


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bank_matches_the_reference_at_every_step(task, dtype):
    X, y = _stream(task)
    grid = (0.0, 1e-3, 0.01, 0.1, 0.3)
    bank = DFOP(4, "auto", task=task, dtype=dtype, forgetting_grid=grid)
    ref = ReferenceBank(4, grid, task, dtype)
    for t in range(len(y)):
        ref_score = ref.learn_one(X[t], y[t])
        ours = bank.learn_one(X[t], y[t])
        if task == "classification":
            assert ours == (1.0 if ref_score >= 0 else -1.0)
        else:
            assert ours == pytest.approx(ref_score, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(bank.forgetting_weights_, ref.v, rtol=1e-10, atol=1e-15)
        for k, member in enumerate(ref.members):  # the members bit for bit
            assert np.array_equal(bank.state.w[k], member.state.w)
            assert np.array_equal(bank.state.P[k], member.state.P)
    assert bank.forgetting_ == pytest.approx(float(ref.v @ np.array(grid)), rel=1e-10)
    if task == "regression":
        assert bank.state.scale[2] == pytest.approx(ref.var, rel=1e-12)


def _drifting(task, n=3000, d=3, seed=0):
    """Still for n / 3 samples, then coefficients that drift fast: the window has to move."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    steps = np.where(np.arange(n)[:, None] < n // 3, 0.0, 0.3) * rng.normal(size=(n, d))
    W = rng.normal(size=d) + np.cumsum(steps, axis=0)
    score = np.einsum("nd,nd->n", X, W) + 0.3 * rng.normal(size=n)
    y = np.where(score >= 0, 1.0, -1.0) if task == "classification" else score
    return X, y


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_moving_window_matches_the_reference_at_every_step(task, dtype):
    """The default bank (a window of 4 on the lattice and a scout): moves down while
    still, then up, jumping to the scout."""
    X, y = _drifting(task)
    bank = DFOP(3, "auto", task=task, dtype=dtype)
    low = int(bank.state.window[0])
    assert low == DEFAULT_LATTICE.index(1e-3)
    ref = ReferenceBank(3, DEFAULT_LATTICE, task, dtype, members=DEFAULT_MEMBERS, low=low,
                        scout=SCOUT_GAP)
    lows = set()
    steps = set()  # the window's moves: +-1, or a jump to the scout
    last = low
    for t in range(len(y)):
        ref_score = ref.learn_one(X[t], y[t])
        ours = bank.learn_one(X[t], y[t])
        if task == "classification":
            assert ours == (1.0 if ref_score >= 0 else -1.0)
        else:
            assert ours == pytest.approx(ref_score, rel=1e-12, abs=1e-12)
        before, last = last, int(bank.state.window[0])
        assert last == ref.low, t
        steps.add(last - before)
        lows.add(ref.low)
        np.testing.assert_allclose(bank.forgetting_weights_, ref.v, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(bank.state.losses, ref.slow, rtol=1e-10, atol=1e-15)
        for k, member in enumerate(ref.members):  # the members bit for bit
            assert np.array_equal(bank.state.w[k], member.state.w)
            assert np.array_equal(bank.state.P[k], member.state.P)
            assert np.array_equal(bank.state.member_counts[k], member.state.counts)
            assert bank.state.forgotten[k, 0] == member.state.forgotten[0]
    assert max(lows) > low  # up with the drift
    if task == "regression":  # and down while still (labels: the members' error rates tie)
        assert min(lows) < low
    scout = min(ref.low + DEFAULT_MEMBERS - 1 + SCOUT_GAP, len(DEFAULT_LATTICE) - 1)
    assert np.array_equal(bank.member_forgetting_,
                          (*DEFAULT_LATTICE[ref.low : ref.low + DEFAULT_MEMBERS],
                           DEFAULT_LATTICE[scout]))
    if task == "regression":  # the drift's start: the scout leads, the window jumps to it
        assert max(steps) > 1, sorted(steps)
    # learn_many in blocks that cut the chunks anywhere: the same bits
    again = DFOP(3, "auto", task=task, dtype=dtype)
    cuts = (0, 5, 37, 38, 100, 1001, len(y))
    out = np.concatenate([again.learn_many(X[a:b], y[a:b])
                          for a, b in zip(cuts[:-1], cuts[1:], strict=True)])
    one = DFOP(3, "auto", task=task, dtype=dtype)
    assert np.array_equal(out, np.array([one.learn_one(X[t], y[t]) for t in range(len(y))]))
    for fa, fb in zip(again.state, one.state, strict=True):
        assert np.array_equal(fa, fb)
    assert np.array_equal(again.state.window, bank.state.window)


@pytest.mark.parametrize("step", [0.0, 0.05, 3.0])
def test_the_window_finds_the_rate_of_a_level(step):
    """A level (d = 1) still, drifting slowly, drifting fast (best fixed mu 0, ~0.1, ~0.9):
    auto's MSE within 5% of the best fixed factor of the lattice in hindsight."""
    rng = np.random.default_rng(11)
    n = 20_000  # the window needs 8 moves of 32 samples from its start to 0.75
    y = 1.0 + step * np.cumsum(rng.normal(size=n)) + 0.5 * rng.normal(size=n)
    X = np.ones((n, 1))
    fixed = [np.mean((DFOP(1, mu).learn_many(X, y) - y) ** 2) for mu in DEFAULT_LATTICE]
    auto = DFOP(1, "auto")
    mse = np.mean((auto.learn_many(X, y) - y) ** 2)
    assert mse <= 1.05 * min(fixed), (mse, min(fixed), DEFAULT_LATTICE[int(np.argmin(fixed))])
    best = DEFAULT_LATTICE[int(np.argmin(fixed))]
    assert auto.member_forgetting_[0] <= best <= auto.member_forgetting_[-1]


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("keep_prior", [True, False])
def test_a_one_member_bank_is_plain_dfop_bit_for_bit(task, dtype, keep_prior):
    X, y = _stream(task, n=400)
    for mu in (0.0, 0.02, 0.5):
        plain = DFOP(4, mu, task=task, dtype=dtype, keep_prior=keep_prior)
        bank = DFOP(4, "auto", task=task, dtype=dtype, keep_prior=keep_prior,
                    forgetting_grid=(mu,))
        a = plain.learn_many(X, y)
        b = np.array([bank.learn_one(X[t], y[t]) for t in range(len(y))])
        assert np.array_equal(a, b)
        assert np.array_equal(plain.state.w, bank.state.w[0])
        assert np.array_equal(plain.state.P, bank.state.P[0])
        assert np.array_equal(plain.state.counts[2:], bank.state.member_counts[0, 2:])
        assert np.array_equal(plain.predict_many(X), bank.predict_many(X))
        assert bank.forgetting_ == mu and np.array_equal(bank.forgetting_weights_, [1.0])


def test_learn_one_loop_equals_learn_many_across_chunks():
    """Blocks that are not multiples of the chunk, with skipped rows among them."""
    X, y = _stream("regression", n=500)
    X[[31, 32, 100, 499], 1] = np.nan
    a = DFOP(4, "auto", on_invalid="skip")
    b = DFOP(4, "auto", on_invalid="skip")
    pa = np.concatenate([a.learn_many(X[s:e], y[s:e]) for s, e in ((0, 33), (33, 97), (97, 500))])
    pb = np.array([b.learn_one(X[t], y[t]) for t in range(500)])
    assert np.array_equal(pa, pb, equal_nan=True)
    for fa, fb in zip(a.state, b.state, strict=True):
        assert np.array_equal(fa, fb)
    assert a.n_skipped_ == 4 and a.n_seen_ == 496


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("d", [1, 10, 25, 64])
@pytest.mark.parametrize("on_invalid", ["skip", "raise"])
def test_learn_one_equals_learn_many_over_moves_jumps_and_invalid_rows(task, dtype, d, on_invalid):
    """learn_one sample by sample and learn_many in blocks cut anywhere (across the
    chunks, where the window moves and jumps to the scout): the same predictions and
    the same state, bit for bit, with invalid rows skipped or refused among them."""
    n = 1600 if d <= 10 else 700
    X, y = _drifting(task, n=n, d=d, seed=d)
    rng = np.random.default_rng(d)
    bad = np.sort(rng.choice(np.arange(1, n), size=6, replace=False))
    X[bad[:3], rng.integers(d, size=3)] = [np.nan, np.inf, 1e101]
    y[bad[3:]] = [np.nan, -np.inf, 1e101]
    one = DFOP(d, "auto", task=task, dtype=dtype, on_invalid=on_invalid)
    lows = [int(one.state.window[0])]
    out_one = np.empty(n)
    for t in range(n):
        before = [f.copy() for f in one.state]
        try:
            out_one[t] = one.learn_one(X[t], y[t])
        except ValueError:
            assert on_invalid == "raise" and t in bad
            assert all(np.array_equal(a, b) for a, b in zip(before, one.state, strict=True))
            out_one[t] = np.nan
        lows.append(int(one.state.window[0]))
    if task == "regression" or on_invalid == "raise":  # a skipped label's answer is a sign
        assert np.array_equal(np.isnan(out_one), np.isin(np.arange(n), bad))
    many = DFOP(d, "auto", task=task, dtype=dtype, on_invalid=on_invalid)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(1, n, size=12), [31, 32, 33]]))
    out_many = np.full(n, np.nan)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        while a < b:
            try:
                out_many[a:b] = many.learn_many(X[a:b], y[a:b])
                a = b
            except ValueError:  # refused at the block's first invalid row: the rows before learnt
                stop = bad[(bad >= a) & (bad < b)][0]
                assert on_invalid == "raise"
                assert many.n_seen_ == one.n_seen_ - np.sum(~np.isnan(out_one[stop:]))
                out_many[a:stop] = out_one[a:stop]  # their predictions are not returned
                a = stop + 1
    assert np.array_equal(out_one, out_many, equal_nan=True)
    for f, a, b in zip(one.state._fields, one.state, many.state, strict=True):
        assert np.array_equal(a, b), f
    steps = set(np.diff(lows).tolist())
    assert steps - {0}, "the window never moved"
    if task == "regression" and d == 10:
        assert max(steps) > 1, sorted(steps)  # a jump onto the scout


def test_the_weights_follow_the_drift_rate():
    """Stationary, then abrupt switches: the learnt drift rate rises."""
    X, y, _, _ = drift_regimes(n_samples=30_000, seed=1)
    bank = DFOP(X.shape[1], "auto")
    bank.learn_many(X[:10_000], y[:10_000])
    still = bank.forgetting_
    bank.learn_many(X[10_000:], y[10_000:])
    assert still < 0.005 and bank.forgetting_ > max(0.01, 4 * still)
    u = bank.forgetting_weights_
    assert u.sum() == pytest.approx(1.0) and np.all(u >= 1e-3 / len(u) * (1 - 1e-12))


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_auto_beats_every_fixed_forgetting_when_the_drift_rate_changes(task):
    """The target on edgereg.streams.drift_regimes (noise 0.5), seed 0."""
    X, y, _, _ = drift_regimes(task=task, seed=0)
    auto = DFOP(X.shape[1], "auto", task=task).learn_many(X, y)

    def score(p):
        return -np.mean((p - y) ** 2) if task == "regression" else np.mean(p == y)

    fixed = [score(DFOP(X.shape[1], mu, task=task).learn_many(X, y)) for mu in STUDY_GRID]
    assert score(auto) > max(fixed)


def test_auto_is_a_bank_everywhere_a_dfop_is_built():
    model = DFOP(3, forgetting="auto")
    assert isinstance(model, DFOPBank) and isinstance(model, DFOP)
    assert type(DFOP(3, "auto")) is DFOPBank and type(DFOP(3, 0.1)) is DFOP
    assert model.get_params()["forgetting"] == "auto"
    assert edgereg.DFOPBank is DFOPBank


def test_memory_is_stated_and_fixed():
    model = DFOP(10, "auto")
    K, d, n = DEFAULT_MEMBERS + 1, 10, len(DEFAULT_LATTICE)  # the window and its scout
    s = -(-d // 8) * 8  # DFOP's scratch stride (dfop.scratch_stride)
    stride = -(-(3 * s + 10) // 8) * 8  # a member's DFOP block, padded to 64 bytes
    expected = 8 * K * (d + 1) * d + 8 * (12 + 3 * K + 2 * n + K * stride + K * 32)
    assert model.nbytes() == expected == 8_680
    X, y = _stream("regression", n=2000, d=10)
    model.learn_many(X, y)
    assert model.nbytes() == expected
    assert DFOP(10, "auto", dtype="float32").nbytes() == expected - 4 * K * (d + 1) * d
    fixed = DFOP(10, "auto", forgetting_grid=DEFAULT_GRID)  # the bank before the window
    assert fixed.nbytes() == 8 * 6 * 110 + 8 * (12 + 3 * 6 + 2 * 6 + 6 * stride + 6 * 32)


def test_bad_parameters_are_explained():
    with pytest.raises(ValueError, match="must be 'auto'"):
        DFOPBank(3, forgetting=0.1)
    with pytest.raises(ValueError, match="twice"):
        DFOP(3, "auto", forgetting_grid=(0.1, 0.1))
    with pytest.raises(ValueError, match="1 to 64"):
        DFOP(3, "auto", forgetting_grid=())
    with pytest.raises(ValueError, match="forgetting_grid entry"):
        DFOP(3, "auto", forgetting_grid=(0.1, 1.0))
    with pytest.raises(TypeError, match="sequence of numbers"):
        DFOP(3, "auto", forgetting_grid="fast")
    with pytest.raises(ValueError, match="share"):
        DFOP(3, "auto", share=1.0)
    with pytest.raises(ValueError, match="learning_rate"):
        DFOP(3, "auto", learning_rate=0.0)
    with pytest.raises(ValueError, match="at most the 3 factors"):
        DFOP(3, "auto", forgetting_grid=(0.0, 0.1, 0.5), members=4)
    with pytest.raises(ValueError, match="at least 2"):
        DFOP(3, "auto", members=1)
    with pytest.raises(ValueError, match="increasing"):
        DFOP(3, "auto", forgetting_grid=(0.0, 0.5, 0.1), members=2)
    with pytest.raises(TypeError):
        DFOP(3, 0.1, forgetting_grid=(0.1,))  # a grid only with "auto"
    with pytest.raises(ValueError, match="takes no forgetting schedule"):
        DFOP(3, "auto").learn_many(np.zeros((2, 3)), np.zeros(2), forgetting=0.1)


@pytest.mark.parametrize("value", [1e101, -1e200, 1.7e308])
def test_values_beyond_the_range_are_refused_with_the_state_unchanged(value):
    X, y = _stream("regression", n=50, d=3)
    model = DFOP(3, "auto")
    model.learn_many(X, y)
    before = [a.copy() for a in model.state]
    with pytest.raises(ValueError, match="beyond the bank's range"):
        model.learn_one([1.0, value, 0.0], 1.0)
    with pytest.raises(ValueError, match="beyond the bank's range"):
        model.learn_one([1.0, 0.0, 0.0], value)
    with pytest.raises(ValueError, match="row 1 "):
        model.learn_many([[0.0, 1.0, 0.0], [value, 0.0, 0.0]], [1.0, 2.0])
    model_after_one = [a.copy() for a in model.state]
    assert model_after_one[-1][0] == before[-1][0] + 1  # row 0 learnt, row 1 not
    skip = DFOP(3, "auto", on_invalid="skip")
    skip.learn_many([[0.0, 1.0, 0.0], [value, 0.0, 0.0]], [1.0, 2.0])
    assert skip.n_seen_ == 1 and skip.n_skipped_ == 1


def test_a_state_file_with_broken_weights_is_refused(tmp_path):
    X, y = _stream("regression", n=100)
    model = DFOP(4, "auto")
    model.learn_many(X, y)
    path = tmp_path / "bank.npz"
    model.save(path)
    again = edgereg.load(path)
    assert type(again) is DFOPBank and again.forgetting_ == model.forgetting_
    with np.load(path) as npz:
        arrays = dict(npz)
    for field, at, value, match in (("state.weights", -1, -1.0, "weights"),
                                    ("state.member_counts", -1, 99, "refresh coordinate"),
                                    ("state.scale", 2, -1.0, "scale"),
                                    ("state.scale", 1, 5e299, "scale"),
                                    ("state.scale", 2, 1e250, "scale")):
        bad = {k: v.copy() for k, v in arrays.items()}
        bad[field].flat[at] = value
        np.savez(tmp_path / "bad.npz", **bad)
        with pytest.raises(StateFileError, match=match):
            edgereg.load(tmp_path / "bad.npz")


def _older_file(model, path, old, param, *arrays_gone):
    """Save ``model`` to ``path``, then write ``old``: the same file as an older
    edgereg wrote it, without the parameter ``param`` nor the arrays ``arrays_gone``."""
    import json

    model.save(path)
    with np.load(path) as npz:
        arrays = dict(npz)
    params = json.loads(str(arrays["params"]))
    del params[param]
    arrays["params"] = np.array(json.dumps(params))
    for name in arrays_gone:
        del arrays[name]
    np.savez(old, **arrays)


def test_a_file_saved_before_the_window_loads_as_the_fixed_bank_it_was(tmp_path):
    """Files of the fixed 6-member bank (no ``members``, no window, no slow losses) load and
    resume as that bank; a moving bank's file without its window is refused."""
    X, y = _stream("regression", n=300)
    fixed = DFOP(4, "auto", forgetting_grid=DEFAULT_GRID)
    assert len(fixed.member_forgetting_) == 6
    fixed.learn_many(X[:200], y[:200])
    path, old = tmp_path / "new.npz", tmp_path / "old.npz"
    _older_file(fixed, path, old, "members", "state.window", "state.losses")
    again = edgereg.load(old)
    assert type(again) is DFOPBank and np.array_equal(again.member_forgetting_, DEFAULT_GRID)
    assert np.array_equal(again.learn_many(X[200:], y[200:]), fixed.learn_many(X[200:], y[200:]))
    moving = DFOP(4, "auto")
    moving.learn_many(X, y)
    moving.save(path)
    with np.load(path) as npz:
        arrays = {k: v for k, v in npz.items() if k != "state.window"}
    np.savez(old, **arrays)
    with pytest.raises(StateFileError, match="'window' is missing"):
        edgereg.load(old)
    for value, match in ((99, "window"), (-1, "window")):
        arrays["state.window"] = np.array([value])
        np.savez(old, **arrays)
        with pytest.raises(StateFileError, match=match):
            edgereg.load(old)
    arrays["state.window"] = np.array([3])
    arrays["state.losses"] = np.array([0.1, -1.0, 0.2, 0.3])
    np.savez(old, **arrays)
    with pytest.raises(StateFileError, match="losses"):
        edgereg.load(old)


def test_a_file_saved_before_the_scout_loads_as_the_window_it_was(tmp_path):
    """A moving bank's file without ``scout`` (4 members, the window alone) resumes
    bit for bit as that bank: ``scout=0``."""
    X, y = _drifting("regression", n=2000)
    window = DFOP(3, "auto", scout=0)
    assert len(window.member_forgetting_) == DEFAULT_MEMBERS
    window.learn_many(X[:1500], y[:1500])
    _older_file(window, tmp_path / "new.npz", tmp_path / "old.npz", "scout")
    again = edgereg.load(tmp_path / "old.npz")
    assert again.scout == 0 and np.array_equal(again.member_forgetting_,
                                               window.member_forgetting_)
    assert np.array_equal(again.learn_many(X[1500:], y[1500:]),
                          window.learn_many(X[1500:], y[1500:]))
    with pytest.raises(ValueError, match="scout must be 0 for a fixed bank"):
        DFOP(3, "auto", forgetting_grid=DEFAULT_GRID, scout=2)


def test_a_loaded_moving_bank_resumes_with_its_window(tmp_path):
    X, y = _drifting("regression", n=2000)
    bank = DFOP(3, "auto")
    bank.learn_many(X[:1500], y[:1500])
    assert int(bank.state.window[0]) != DEFAULT_LATTICE.index(1e-3)  # it has moved
    bank.save(tmp_path / "b.npz")
    again = edgereg.load(tmp_path / "b.npz")
    assert np.array_equal(again.member_forgetting_, bank.member_forgetting_)
    assert np.array_equal(again.learn_many(X[1500:], y[1500:]), bank.learn_many(X[1500:], y[1500:]))


def test_the_adapters_take_auto():
    """scikit-learn's and river's DFOP adapters build a bank and learn as it does."""
    X, y = _stream("regression", n=200, d=3)
    bank = DFOP(3, "auto")
    expected = bank.learn_many(X, y)
    sklearn = pytest.importorskip("edgereg.sklearn")
    est = sklearn.DFOPRegressor(forgetting="auto").fit(X, y)
    assert type(est.model_) is DFOPBank
    assert np.array_equal(est.model_.coef_, bank.coef_)
    river = pytest.importorskip("edgereg.river")
    online = river.DFOPRegressor(forgetting="auto")
    got = []
    for x, t in zip(X, y, strict=True):
        features = dict(enumerate(x))
        got.append(online.predict_one(features))
        online.learn_one(features, t)
    assert type(online.model_) is DFOPBank
    np.testing.assert_allclose(got[1:], expected[1:], rtol=1e-12)


def test_a_fleet_with_auto_forgetting_is_a_bank_per_model_bit_for_bit(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3, 250, 4))
    y = np.einsum("fnd,fd->fn", X, rng.normal(size=(3, 4)))
    y[:, 125:] *= -1.0  # a switch halfway
    fleet = edgereg.Fleet(3, 4, forgetting="auto")
    assert type(fleet) is FleetBank and isinstance(fleet, edgereg.Fleet)
    out = fleet.learn_many(X, y)
    one = edgereg.Fleet(3, 4, forgetting="auto")
    out_one = np.array([one.learn_one(X[:, t], y[:, t]) for t in range(250)]).T
    assert np.array_equal(out, out_one)
    for k in range(3):
        bank = DFOP(4, "auto")
        assert np.array_equal(bank.learn_many(X[k], y[k]), out[k])
        for field, value in bank.state._asdict().items():
            assert np.array_equal(getattr(fleet.state, field)[k], value), field
        assert fleet.forgetting_[k] == pytest.approx(bank.forgetting_, rel=1e-14)  # a dot product
        copy = fleet.model(k)
        assert type(copy) is DFOPBank and np.array_equal(copy.state.weights, bank.state.weights)
    fleet.set_model(0, fleet.model(2))
    assert np.array_equal(fleet.state.P[0], fleet.state.P[2])
    path = tmp_path / "fleet.npz"
    fleet.save(path)
    again = edgereg.load(path)
    assert type(again) is FleetBank
    assert np.array_equal(again.predict_many(X), fleet.predict_many(X))


def test_a_fleet_of_banks_stops_only_the_model_with_a_bad_row():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2, 40, 3))
    y = X.sum(axis=2)
    X[1, 17, 0] = np.nan
    fleet = edgereg.Fleet(2, 3, forgetting="auto")
    with pytest.raises(edgereg.fleet.FleetInvalidInputError, match="model 1, row 17") as info:
        fleet.learn_many(X, y)
    assert info.value.rows.tolist() == [-1, 17]
    assert fleet.n_seen_.tolist() == [40, 17]


@pytest.mark.parametrize("projection", ["hashed", "gaussian", "rademacher"])
def test_sparse_dfop_with_auto_forgetting_is_a_bank_on_the_projection(projection):
    """SparseDFOP(..., "auto") is a DFOPBank fed psi = M x, bit for bit, from CSR or dense."""
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(5)
    X = sp.random(300, 120, density=0.05, random_state=2, format="csr")
    y = X @ rng.normal(size=120)
    model = edgereg.SparseDFOP(120, 8, forgetting="auto", projection=projection)
    assert type(model) is edgereg.SparseDFOPBank
    out = model.learn_many(X, y)
    M = edgereg.SparseDFOP(120, 8, projection=projection).projection_matrix()
    bank = DFOP(8, "auto")
    assert np.array_equal(bank.learn_many(np.asarray(X @ M.T), y), out)
    assert np.array_equal(model.state.P, bank.state.P)
    assert model.forgetting_ == bank.forgetting_
    dense = edgereg.SparseDFOP(120, 8, forgetting="auto", projection=projection)
    assert np.array_equal(dense.learn_many(X.toarray(), y), out)
