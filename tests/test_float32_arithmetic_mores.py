"""MORES' float32-only arithmetic (``arithmetic="float32"``): bit for bit against a
slow NumPy float32 reference step by step, learn_one == learn_many, save/load,
refused rows leave the state as it was, the parameter's checks, and the accuracy
against the float64 model on a long drifting stream (docs/design/float32.md, "MORES")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from reference import MORESFloat32Reference

from edgereg import MORES, load

#: float32 tests belong to the deep tier (conftest.py); the reference's inf/NaN warn.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

#: The kernels read their constants by their bits through an intrinsic, which
#: plain Python (NUMBA_DISABLE_JIT) cannot run.
jit_only = pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                              reason="the float32 kernels' constants are read by an intrinsic")

_EXTREMES = np.array([0, 1e-40, 1e-8, 1, -1, 3.7, 1e8, 1e15, 1e20, 3.4e38, 1e39])


def _model(d, m, **kw):
    kw = {"dtype": "float32", "arithmetic": "float32", "on_invalid": "skip", **kw}
    return MORES(d, m, **kw)


def _reference(model):
    C, mu, gamma, tau, tol = model._hyper
    return MORESFloat32Reference(model._D, model._m, C, mu, gamma, tau, tol, model.fit_intercept)


def _stream(seed, n, d, m, extreme=0.0, bad=0.0, drift=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W1, W2 = rng.normal(size=(d, m)), rng.normal(size=(d, m))
    a = 0.5 * (1 - np.cos(2 * np.pi * np.arange(n) / n))[:, None] if drift else 0.0
    Y = (1 - a) * (X @ W1) + a * (X @ W2) + 0.1 * rng.normal(size=(n, m)) + 0.5
    if extreme:
        big = rng.choice(_EXTREMES, (n, d)) * rng.choice([-1, 1], (n, d))
        X = np.where(rng.random((n, d)) < extreme, big, X)
        Y = np.where(rng.random(Y.shape) < extreme, rng.choice(_EXTREMES, Y.shape), Y)
    if bad:
        X[rng.random((n, d)) < bad] = np.nan
        Y[rng.random(Y.shape) < bad] = np.inf
    return X, Y


def _assert_same(model, ref, label):
    s = model.state
    for name, mine in (("W", s.W), ("Om", s.Omega), ("Om_inv", s.Omega_inv), ("S", s.S),
                       ("S_inv", s.S_inv), ("M", s.M), ("N", s.N), ("Q", s.Q)):
        assert np.array_equal(mine, getattr(ref, name)), f"{label}: {name}"
    assert list(s.counts) == [ref.seen, ref.skipped], label


CASES = [
    # d, m, params, extreme, bad
    (4, 3, {}, 0.0, 0.0),
    (5, 2, {"C": 10.0, "decay": 0.95, "gamma": 0.0, "tau": 10.0}, 0.0, 0.02),
    (3, 3, {"decay": 1.0, "fit_intercept": False}, 0.03, 0.02),
    (6, 1, {"C": 0.5, "decay": 0.0}, 0.03, 0.0),
]


@jit_only
@pytest.mark.parametrize("d, m, params, extreme, bad", CASES)
def test_every_step_equals_the_numpy_reference_bit_for_bit(d, m, params, extreme, bad):
    """learn_one against the reference after every step (prediction, every learnt
    matrix, the counts), NaN/inf rows and steps that would overflow skipped."""
    X, Y = _stream(d + m, 300, d, m, extreme, bad)
    model = _model(d, m, **params)
    ref = _reference(model)
    refused = 0
    for t in range(X.shape[0]):
        yhat = model.learn_one(X[t], Y[t])
        want, ok = ref.learn(X[t].astype(np.float32), Y[t])
        refused += not ok
        assert np.array_equal(yhat, want.astype(np.float64), equal_nan=True), t
        _assert_same(model, ref, t)
    if extreme or bad:
        assert refused > 0  # the stream did exercise the refusals


@jit_only
def test_learn_one_equals_learn_many_bit_for_bit():
    X, Y = _stream(7, 400, 5, 3, 0.02, 0.02)
    a, b = _model(5, 3), _model(5, 3)
    many = a.learn_many(X, Y)
    one = np.array([b.learn_one(X[t], Y[t]) for t in range(X.shape[0])])
    assert np.array_equal(many, one, equal_nan=True)
    for x, y in zip(a.state, b.state, strict=True):
        assert np.array_equal(x, y)
    assert np.array_equal(a.predict_many(X[:20]), np.array([b.predict_one(x) for x in X[:20]]),
                          equal_nan=True)
    assert a.state.counts[1] > 0


@jit_only
def test_save_and_load_continue_bit_for_bit(tmp_path):
    X, Y = _stream(3, 200, 4, 2)
    a = _model(4, 2, C=3.0)
    a.learn_many(X[:100], Y[:100])
    a.save(tmp_path / "m.npz")
    b = load(tmp_path / "m.npz")
    assert b.arithmetic == "float32" and b._arith32
    assert np.array_equal(a.learn_many(X[100:], Y[100:]), b.learn_many(X[100:], Y[100:]))
    for x, y in zip(a.state, b.state, strict=True):
        assert np.array_equal(x, y)


@jit_only
def test_a_refused_row_leaves_the_state_as_it_was():
    X, Y = _stream(5, 50, 4, 3)
    model = _model(4, 3)
    model.learn_many(X, Y)
    before = [a.copy() for a in model.state]
    rows = [(np.array([np.nan, 0, 0, 0.0]), Y[0]), (X[0], np.array([0, np.inf, 0.0])),
            (X[0], np.array([1e39, 0, 0.0])),  # beyond float32: inf once rounded
            (np.array([1e20, 1, 1, 1.0]), Y[0])]  # ||x||^2 overflows float32
    for x, y in rows:
        model.learn_one(x, y)
        model.learn_many(x[None], y[None])
    after = list(model.state)
    for a, b in zip(before[:-1], after[:-1], strict=True):
        assert np.array_equal(a, b)
    assert list(after[-1]) == [before[-1][0], before[-1][1] + 2 * len(rows)]
    strict = _model(4, 3, on_invalid="raise")
    strict.learn_many(X, Y)
    kept = [a.copy() for a in strict.state]
    with pytest.raises(ValueError):
        strict.learn_one(np.array([np.nan, 0, 0, 0.0]), Y[0])
    for a, b in zip(kept, strict.state, strict=True):
        assert np.array_equal(a, b)


def test_the_parameter_is_checked_and_the_default_is_unchanged():
    with pytest.raises(ValueError, match="needs dtype='float32'"):
        MORES(3, 2, arithmetic="float32")
    with pytest.raises(ValueError, match="arithmetic must be one of"):
        MORES(3, 2, dtype="float32", arithmetic="float16")
    with pytest.raises(ValueError, match="coverage"):
        MORES(3, 2, dtype="float32", arithmetic="float32", coverage=0.9)
    with pytest.raises(ValueError, match="tau"):
        MORES(3, 2, dtype="float32", arithmetic="float32", tau=1e39)
    with pytest.raises(ValueError, match="gamma"):
        MORES(3, 2, dtype="float32", arithmetic="float32", gamma=1e39)
    model = MORES(3, 2, C=0.1, decay=0.3, dtype="float32", arithmetic="float32")
    # Every constant is a float32 value, read by its bits (dfop32._narrow).
    assert all(float(np.float32(v)) == v for v in model._work.hyper)
    assert model._work.hyper[0] == float(np.float32(0.1)) != 0.1
    default = MORES(3, 2, C=0.1, decay=0.3, dtype="float32")
    assert default.arithmetic == "auto" and not default._arith32
    assert list(default._work.hyper[:2]) == [0.1, 0.3]


@jit_only
@pytest.mark.parametrize("decay", [0.99, 0.999])
def test_long_runs_follow_the_float64_model(decay):
    """50,000 drifting rows (a slow drift and an abrupt change half way), d = 6,
    m = 3: the float32-only W stays within 1e-3 (relative, Frobenius) of the
    float64 model's at every checkpoint, and within 10 times the default float32
    arithmetic's own distance to it (measured: both about 1e-6 at decay 0.99,
    docs/design/float32.md, "MORES")."""
    n, d, m = 50_000, 6, 3
    X, Y = _stream(11, n, d, m)
    Y[n // 2:] = Y[n // 2:, ::-1]  # the abrupt change
    models = {"64": MORES(d, m, decay=decay), "32": MORES(d, m, decay=decay, dtype="float32"),
              "32only": _model(d, m, decay=decay)}
    for start in range(0, n, 5000):
        Ws = {}
        for k, mod in models.items():
            mod.learn_many(X[start:start + 5000], Y[start:start + 5000])
            Ws[k] = np.vstack([mod.coef_, mod.intercept_]).astype(np.float64)
        ref = np.linalg.norm(Ws["64"])
        err32 = np.linalg.norm(Ws["32"] - Ws["64"]) / ref
        err = np.linalg.norm(Ws["32only"] - Ws["64"]) / ref
        assert err < 1e-3, (start, err)
        assert err < 10 * max(err32, 1e-6), (start, err, err32)
    assert models["32only"].state.counts[1] == 0


_IR_SCRIPT = r"""
import json, re
import numpy as np
import edgereg
from edgereg._kernels import mores32 as k

X = np.random.default_rng(0).normal(size=(10, 3))
Y = np.random.default_rng(1).normal(size=(10, 2))
for params in ({}, {"fit_intercept": False, "decay": 1.0}):
    model = edgereg.MORES(3, 2, dtype="float32", arithmetic="float32", **params)
    model.learn_many(X, Y)
    model.learn_one(X[0], Y[0])
    x32, y32 = X[0].astype(np.float32), Y[0].astype(np.float32)
    k.mores32_learn_one(x32, y32, np.zeros(2, np.float32), *model._blocks)
checked, bad = [], []
for name in dir(k):
    fn = getattr(k, name)
    if not hasattr(fn, "inspect_llvm") or name == "mores32_learn_one_wide":
        continue
    for sig in fn.signatures:
        ir = fn.inspect_llvm(sig)
        for m in re.finditer(r'^define [^@]*@"?([^"(]+)"?\(.*?^}', ir, re.M | re.S):
            if m.group(1).startswith(("cpython.", "cfunc.", "_ZN7cpython")):
                continue
            checked.append(name)
            bad += [(name, line.strip()) for line in m.group(0).splitlines()
                    if re.search(r"double|fpext", line)]
print(json.dumps({"checked": sorted(set(checked)), "bad": bad[:20]}))
"""


@jit_only
def test_the_kernels_ir_has_no_double(tmp_path):
    """The compiled float32 kernels form no double: no double type, no fpext (so no
    soft-double helper on a single-precision FPU), compiled in an empty cache (numba
    keeps no IR of cached code), numba's Python wrappers aside."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _IR_SCRIPT], env=env, capture_output=True,
                          text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"mores32_learn_one", "mores32_learn_many", "_mores_step32", "_jacobi_eigh32",
            "_tridiagonalize32", "_spd_inverse32"} <= set(found["checked"]), found["checked"]
    assert not found["bad"], found["bad"]
