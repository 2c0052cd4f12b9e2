"""No allocation per step, proven with numba's NRT statistics.

Every array handed to a kernel from Python costs one NRT meminfo per call, so
absolute counts are meaningless; what must hold is the *slope*: a block of
10,000 rows allocates exactly as often as a block of 10 (nothing per step),
and every allocation is freed. Run for every public model and every kernel
path (learn_many, predict_many, learn_one, predict_one).
"""

from __future__ import annotations

import pytest
from contract_data import learn_many, learn_one, make_stream, model_cases, predict_many, row
from numba.core.runtime import _nrt_python, rtsys

CASES = model_cases()


@pytest.fixture(scope="module", autouse=True)
def nrt_stats():
    _nrt_python.memsys_enable_stats()
    yield
    _nrt_python.memsys_disable_stats()


def _allocs(fn):
    before = rtsys.get_allocation_stats()
    fn()
    after = rtsys.get_allocation_stats()
    return after.alloc - before.alloc, after.free - before.free


@pytest.mark.parametrize(("name", "cls", "params"), CASES, ids=[c[0] for c in CASES])
def test_block_paths_allocate_nothing_per_step(name, cls, params):
    model = cls(**params)
    X, Y = make_stream(model, 10_000, seed=1)
    learn_many(model, X[:10], None if Y is None else Y[:10])  # compile
    predict_many(model, X[:10])

    def block(n):
        return lambda: learn_many(model, X[:n], None if Y is None else Y[:n])

    small, large = _allocs(block(10)), _allocs(block(10_000))
    assert small == large, f"learn_many allocations grow with the block: {small} vs {large}"
    assert large[0] == large[1], f"learn_many leaks: alloc {large[0]} != free {large[1]}"

    small = _allocs(lambda: predict_many(model, X[:10]))
    large = _allocs(lambda: predict_many(model, X))
    assert small == large and large[0] == large[1], (small, large)


@pytest.mark.parametrize(("name", "cls", "params"), CASES, ids=[c[0] for c in CASES])
def test_one_sample_paths_allocate_a_constant_per_call(name, cls, params):
    model = cls(**params)
    X, Y = make_stream(model, 300, seed=2)
    learn_one(model, X[0], row(Y, 0))
    model.predict_one(X[0])

    def calls(start, n):
        def run():
            for t in range(start, start + n):
                learn_one(model, X[t], row(Y, t))
                model.predict_one(X[t])

        return run

    one = _allocs(calls(1, 1))
    many = _allocs(calls(2, 200))
    assert many[0] == 200 * one[0], f"per-call allocations vary: {one} per call, {many} per 200"
    assert many[0] == many[1], f"learn_one leaks: {many}"


def test_keep_prior_false_resets_allocate_nothing_per_step():
    """DFOP's keep_prior=False remedy (a coordinate reset to the prior, the path
    the contract cases above do not reach) at mu = 0.5 on inputs that leave
    half the coordinates unexcited, so resets happen on most steps."""
    import numpy as np

    from edgereg import DFOP

    rng = np.random.default_rng(5)
    X = rng.normal(size=(10_000, 6))
    X[:, 3:] = 0.0
    y = X @ rng.normal(size=6)
    model = DFOP(6, 0.5, keep_prior=False)
    model.learn_many(X[:10], y[:10])  # compile
    model.learn_one(X[10], y[10])
    assert model.state.P.diagonal()[3:].max() <= 10.0 * model.p0  # the reset acts here
    small = _allocs(lambda: model.learn_many(X[:10], y[:10]))
    large = _allocs(lambda: model.learn_many(X, y))
    assert small == large and large[0] == large[1], (small, large)
    one = _allocs(lambda: model.learn_one(X[11], y[11]))
    many = _allocs(lambda: [model.learn_one(X[t], y[t]) for t in range(12, 212)])
    assert many[0] == 200 * one[0] and many[0] == many[1], (one, many)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("forgetting", [0.01, 0.3])
def test_the_two_row_pass_allocates_nothing_per_step(forgetting, dtype):
    """DFOP's block pass two rows per sweep (d >= _TWO_ROWS_FROM, beyond the
    contract cases' sizes), with and without the prior refresh in the pass
    (at 0.3 a refresh every step), at an odd d (the last row alone)."""
    import numpy as np

    from edgereg import DFOP
    from edgereg._kernels.dfop_pass import _TWO_ROWS_FROM

    d = _TWO_ROWS_FROM + 1
    rng = np.random.default_rng(6)
    X = rng.normal(size=(2_000, d)).astype(dtype)
    y = X.astype(np.float64) @ rng.normal(size=d)
    model = DFOP(d, forgetting, dtype=dtype)
    model.learn_many(X[:10], y[:10])  # compile
    small = _allocs(lambda: model.learn_many(X[:10], y[:10]))
    large = _allocs(lambda: model.learn_many(X, y))
    assert small == large and large[0] == large[1], (small, large)


def test_documented_memory_tables_are_nbytes():
    # README's memory table (the site's deployment page includes README's
    # Raspberry Pi section) is what `python examples/raspberry_pi.py
    # --memory-table` prints from nbytes() today: a layout change that moves a
    # figure must move it too.
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    path = root / "examples" / "raspberry_pi.py"
    spec = importlib.util.spec_from_file_location("raspberry_pi", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    table = example.memory_table()
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert table in readme, "README.md: memory table is stale"
