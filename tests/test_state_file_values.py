"""State files whose values would send a kernel out of its buffers are refused.

A crafted (or bit-flipped) counter used as an index or a loop bound used to
load and then crash the interpreter inside a kernel (DFOP ``counts[3] =
1e12``, NORMA ``counts[2]`` or ``counts[3]`` beyond the budget). Each case
runs in a subprocess with ``-X faulthandler``, so a segfault shows as a
failure with its trace instead of killing the test run.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# The slow tier (pytest -m slow; CI's hostile stage runs it).
pytestmark = pytest.mark.slow

SCRIPT = """
import sys, numpy as np, edgereg
name, field, index, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
kw = {"DFOP": dict(n_features=3), "NORMARegressor": dict(n_features=3, budget=5),
      "SelectiveSampler": dict(n_features=3, window0=4, window_max=8)}[name]
model = getattr(edgereg, name)(**kw)
X = np.random.default_rng(0).normal(size=(20, 3))
y = np.sign(X[:, 0]) if name == "SelectiveSampler" else X[:, 0]
model.learn_many(X, y)
path = sys.argv[5]
model.save(path)
z = dict(np.load(path))
arr = z["state." + field].copy()
arr.reshape(-1)[index] = value
z["state." + field] = arr
np.savez(path, **z)
try:
    loaded = edgereg.load(path)
except edgereg.StateFileError as exc:
    print("StateFileError:", exc)
    raise SystemExit(0)
loaded.learn_many(X, y)
print("loaded and ran")
"""

CASES = [
    ("DFOP", "counts", 3, 1e12),  # the next refresh coordinate: a row index of P
    ("DFOP", "counts", 3, -1),
    ("DFOP", "forgotten", 0, 1e300),  # the refresh's rho
    ("DFOP", "P", 1, 5.0),  # P[0, 1] only: not symmetric
    ("NORMARegressor", "counts", 2, 9),  # support vectors stored > budget 5
    ("NORMARegressor", "counts", 3, 1e12),  # next slot
    ("NORMARegressor", "counts", 3, -7),
    ("SelectiveSampler", "counts", 5, 1e12),  # window ring head
    ("SelectiveSampler", "counts", 6, 99),  # window size > window_max 8
    ("SelectiveSampler", "counts", 0, -5),  # a negative count
]


@pytest.mark.parametrize(("name", "field", "index", "value"), CASES)
def test_out_of_range_values_are_refused_with_the_field(tmp_path, name, field, index, value):
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", SCRIPT, name, field, str(index),
         repr(value), str(tmp_path / "state.npz")],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, f"crashed ({done.returncode}):\n{done.stderr[-3000:]}"
    assert done.stdout.startswith("StateFileError:"), done.stdout
    assert f"state field {field!r}" in done.stdout


def test_a_count_near_the_int64_limit_is_refused(tmp_path):
    """SelectiveSampler with t = 2^63 - 1 loaded, then learn_many never returned (isqrt wrapped)."""
    import numpy as np

    import edgereg
    from edgereg import SelectiveSampler, StateFileError

    model = SelectiveSampler(3)
    model.learn_many(np.ones((4, 3)), np.array([1.0, -1.0, 1.0, -1.0]))
    path = tmp_path / "sampler.npz"
    model.save(path)
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["state.counts"][0] = np.iinfo(np.int64).max
    np.savez(path, **arrays)
    with pytest.raises(StateFileError, match="beyond"):
        edgereg.load(path)
