"""Fleet: K stacked DFOP models equal K separate DFOPs bit for bit, allocate nothing
per step, handle bad input per model, resume from save/load; and the sensor loop
example resumes after a SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import edgereg
from edgereg import DFOP
from edgereg._base import StateFileError
from edgereg.fleet import Fleet, FleetInvalidInputError

ROOT = Path(__file__).resolve().parents[1]
STATE_FIELDS = ("w", "P", "forgotten", "counts")  # work* fields are scratch


def _stream(K, n, d, seed=0, task="regression"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K, n, d))
    W = rng.normal(size=(K, d))
    y = np.einsum("knd,kd->kn", X, W) + 0.1 * rng.normal(size=(K, n))
    if task == "classification":
        y = np.where(y >= 0, 1.0, -1.0)
    return X, y


def _assert_same_state(fleet: Fleet, k: int, model: DFOP) -> None:
    for field in STATE_FIELDS:
        a = getattr(fleet.state, field)[k]
        b = getattr(model.state, field)
        assert a.dtype == b.dtype and np.array_equal(a, b), field


PARAMS = [
    {"forgetting": 0.01},
    {"forgetting": 0.2},  # a prior refresh every step
    {"forgetting": 0.05, "task": "classification"},
    {"forgetting": 0.01, "dtype": "float32"},
    {"forgetting": 0.02, "keep_prior": False, "p0": 10.0},
]


@pytest.mark.parametrize("params", PARAMS)
def test_learn_many_equals_separate_models_bit_for_bit(params):
    K, n, d = 6, 400, 4
    X, y = _stream(K, n, d, seed=1, task=params.get("task", "regression"))
    fleet = Fleet(K, d, **params)
    models = [DFOP(d, **params) for _ in range(K)]
    for lo, hi in [(0, 1), (1, 150), (150, n)]:  # several calls, including n = 1
        out = fleet.learn_many(X[:, lo:hi], y[:, lo:hi])
        for k, m in enumerate(models):
            ref = m.learn_many(X[k, lo:hi].astype(m.dtype), y[k, lo:hi])
            assert np.array_equal(out[k], ref)
            _assert_same_state(fleet, k, m)
    assert np.array_equal(fleet.coef_, np.stack([m.coef_ for m in models]))
    assert np.array_equal(fleet.n_seen_, np.full(K, n))


@pytest.mark.parametrize("params", PARAMS)
def test_learn_one_equals_separate_models_bit_for_bit(params):
    K, n, d = 5, 120, 3
    X, y = _stream(K, n, d, seed=2, task=params.get("task", "regression"))
    fleet = Fleet(K, d, **params)
    models = [DFOP(d, **params) for _ in range(K)]
    for t in range(n):
        out = fleet.learn_one(X[:, t], y[:, t])
        for k, m in enumerate(models):
            assert out[k] == m.learn_one(X[k, t].astype(m.dtype), y[k, t])
    for k, m in enumerate(models):
        _assert_same_state(fleet, k, m)
        assert np.array_equal(fleet.predict_many(X)[k], m.predict_many(X[k].astype(m.dtype)))
        assert fleet.predict_one(X[:, 0])[k] == m.predict_one(X[k, 0].astype(m.dtype))


def test_model_copy_and_set_model():
    K, d = 3, 4
    X, y = _stream(K, 300, d, seed=3)
    fleet = Fleet(K, d, 0.03)
    fleet.learn_many(X[:, :200], y[:, :200])
    m1 = fleet.model(1)
    assert isinstance(m1, DFOP) and m1.n_seen_ == 200
    out = fleet.learn_many(X[:, 200:], y[:, 200:])
    assert np.array_equal(m1.learn_many(X[1, 200:], y[1, 200:]), out[1])
    _assert_same_state(fleet, 1, m1)
    fresh = DFOP(d, 0.03)
    fleet.set_model(2, fresh)
    _assert_same_state(fleet, 2, fresh)
    with pytest.raises(ValueError, match="parameters"):
        fleet.set_model(0, DFOP(d, 0.5))
    with pytest.raises(IndexError):
        fleet.model(3)


def test_bad_input_raises_naming_model_and_row_others_unaffected():
    K, n, d = 4, 50, 3
    X, y = _stream(K, n, d, seed=4)
    X[2, 17, 1] = np.nan
    y[0, 30] = np.inf
    fleet = Fleet(K, d, 0.05)
    models = [DFOP(d, 0.05) for _ in range(K)]
    with pytest.raises(FleetInvalidInputError, match=r"model 0, row 30.*model 2, row 17") as ei:
        fleet.learn_many(X, y)
    assert np.array_equal(ei.value.rows, [30, -1, 17, -1])
    assert np.array_equal(ei.value.models, [0, 2])
    # model k learnt exactly the rows before its first invalid row; others everything
    for k, stop in enumerate([30, n, 17, n]):
        models[k].learn_many(X[k, :stop], y[k, :stop])
        _assert_same_state(fleet, k, models[k])
    assert isinstance(ei.value, ValueError)


def test_bad_input_learn_one_and_skip_policy():
    K, d = 3, 2
    X, y = _stream(K, 40, d, seed=5)
    fleet = Fleet(K, d, 0.05)
    before = [fleet.model(k) for k in range(K)]
    bad = X[:, 0].copy()
    bad[1, 0] = np.inf
    with pytest.raises(FleetInvalidInputError, match="model 1") as ei:
        fleet.learn_one(bad, y[:, 0])
    assert np.array_equal(ei.value.rows, [-1, 0, -1])
    _assert_same_state(fleet, 1, before[1])  # untouched
    assert np.array_equal(fleet.n_seen_, [1, 0, 1])

    skip = Fleet(K, d, 0.05, on_invalid="skip")
    X[1, 5, 0] = np.nan
    y[2, [7, 9]] = np.nan
    skip.learn_many(X, y)
    assert np.array_equal(skip.n_skipped_, [0, 1, 2])
    assert np.array_equal(skip.n_seen_, [40, 39, 38])
    ref = DFOP(d, 0.05, on_invalid="skip")
    ref.learn_many(X[2], y[2])
    _assert_same_state(skip, 2, ref)


def test_shape_errors():
    fleet = Fleet(2, 3)
    with pytest.raises(ValueError, match="n_models=2"):
        fleet.learn_many(np.zeros((3, 5, 3)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="shape"):
        fleet.learn_many(np.zeros((2, 5, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="one sample"):
        fleet.learn_one(np.zeros((2, 4)), np.zeros(2))
    with pytest.raises(TypeError):
        fleet.learn_many(np.zeros((2, 5, 3), dtype=complex), np.zeros((2, 5)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_save_load_resumes_bit_exactly(tmp_path, dtype):
    K, d = 4, 3
    X, y = _stream(K, 200, d, seed=6)
    fleet = Fleet(K, d, 0.1, dtype=dtype)
    fleet.learn_many(X[:, :100], y[:, :100])
    fleet.save(tmp_path / "fleet.npz")
    again = Fleet.load(tmp_path / "fleet.npz")
    assert again.get_params() == fleet.get_params()
    assert np.array_equal(again.learn_many(X[:, 100:], y[:, 100:]),
                          fleet.learn_many(X[:, 100:], y[:, 100:]))
    for field in STATE_FIELDS:
        assert np.array_equal(getattr(again.state, field), getattr(fleet.state, field))
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(StateFileError):
        Fleet.load(tmp_path / "bad.npz")
    DFOP(3).save(tmp_path / "dfop.npz")
    with pytest.raises(StateFileError, match="not a Fleet"):
        Fleet.load(tmp_path / "dfop.npz")


def test_a_file_in_the_earlier_fleet_format_loads_and_resumes_bit_exactly(tmp_path):
    """Fleet saves through OnlineModel now (the format of every model, so that
    edgereg.load opens it like any other); files that earlier versions wrote in
    the fleet's own format ("edgereg-fleet-1", with scratch fields) still load."""
    import json

    K, d = 3, 4
    X, y = _stream(K, 120, d, seed=8)
    fleet = Fleet(K, d, 0.05)
    fleet.learn_many(X[:, :60], y[:, :60])
    s = fleet.state
    old = {
        "format": np.array("edgereg-fleet-1"),
        "params": np.array(json.dumps(fleet.get_params())),
        "state.w": s.w, "state.P": s.P, "state.forgotten": s.forgotten, "state.counts": s.counts,
        "state.work_px": np.zeros((K, d)), "state.work_next": np.zeros((K, d)),
        "state.work_v": np.zeros((K, d)), "state.work_status": np.zeros(K, dtype=np.int64),
    }
    np.savez(tmp_path / "old.npz", **old)
    for again in (Fleet.load(tmp_path / "old.npz"), edgereg.load(tmp_path / "old.npz")):
        assert isinstance(again, Fleet) and again.get_params() == fleet.get_params()
        for field in STATE_FIELDS:
            assert np.array_equal(getattr(again.state, field), getattr(s, field))
        np.testing.assert_array_equal(again.learn_many(X[:, 60:], y[:, 60:]),
                                      Fleet.load(tmp_path / "old.npz").learn_many(X[:, 60:],
                                                                                 y[:, 60:]))
    fleet.save(tmp_path / "new.npz")
    with np.load(tmp_path / "new.npz") as npz:
        assert str(npz["format"]) == "edgereg-state-1" and str(npz["model"]) == "Fleet"
        assert sorted(npz.files) == ["format", "model", "params", "state.P", "state.counts",
                                     "state.forgotten", "state.w"]


def test_nbytes_is_k_times_a_model():
    from edgereg._kernels.dfop import N_CODES, N_HYPER

    constants = 8 * (N_HYPER + N_CODES)  # hyper and codes: one copy for the fleet
    for dtype in ("float64", "float32"):
        fleet = Fleet(7, 10, dtype=dtype)
        # Per model: a DFOP's memory without the constants, plus its int64 status.
        assert fleet.nbytes() == 7 * (DFOP(10, dtype=dtype).nbytes() - constants + 8) + constants


@pytest.fixture
def nrt_stats():
    _nrt_python.memsys_enable_stats()
    yield
    _nrt_python.memsys_disable_stats()


def _allocs(fn):
    before = rtsys.get_allocation_stats()
    fn()
    after = rtsys.get_allocation_stats()
    return after.alloc - before.alloc, after.free - before.free


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_no_allocation_per_step(nrt_stats, dtype):
    K, d = 8, 5
    X, y = _stream(K, 5_000, d, seed=7)
    X = X.astype(dtype)
    fleet = Fleet(K, d, 0.01, dtype=dtype)
    fleet.learn_many(X[:, :10], y[:, :10])  # compile / load
    fleet.learn_one(X[:, 0], y[:, 0])
    fleet.predict_many(X[:, :10])
    fleet.predict_one(X[:, 0])

    small = _allocs(lambda: fleet.learn_many(X[:, :10], y[:, :10]))
    large = _allocs(lambda: fleet.learn_many(X, y))
    assert small == large, f"learn_many allocations grow with the block: {small} vs {large}"
    assert large[0] == large[1], f"learn_many leaks: {large}"
    small = _allocs(lambda: fleet.predict_many(X[:, :10]))
    large = _allocs(lambda: fleet.predict_many(X))
    assert small == large and large[0] == large[1], (small, large)

    def calls(n):
        def run():
            for t in range(n):
                fleet.learn_one(X[:, t], y[:, t])
        return run

    one, many = _allocs(calls(1)), _allocs(calls(100))
    assert many[0] == 100 * one[0] and many[0] == many[1], (one, many)


# ------------------------------------------------------------ sensor loop example
def _run_loop(state, *extra):
    cmd = [sys.executable, str(ROOT / "examples" / "sensor_loop.py"), "--steps", "2500",
           "--checkpoint-every", "400", "--state", str(state), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_sensor_loop_resumes_after_sigkill(tmp_path):
    crashed = _run_loop(tmp_path / "a", "--crash-at", "1333")
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert "crashing at step 1333" in crashed.stdout
    resumed = _run_loop(tmp_path / "a")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed from checkpoint at step 1200" in resumed.stdout
    straight = _run_loop(tmp_path / "b")
    assert straight.returncode == 0 and "fresh start" in straight.stdout
    # the resumed run ends in exactly the state of the uninterrupted one
    a, b = (DFOP.load(tmp_path / s / "model-2500.npz") for s in ("a", "b"))
    for field in STATE_FIELDS:
        assert np.array_equal(getattr(a.state, field), getattr(b.state, field))
    assert sorted(os.listdir(tmp_path / "a")) == ["LATEST", "loop-2500.npz", "model-2500.npz"]
    assert resumed.stdout.splitlines()[-1] == straight.stdout.splitlines()[-1]
