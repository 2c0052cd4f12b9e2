"""Shared fixtures. Tests never time anything: speed lives in asv_bench/."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

#: The shared real datasets (next to the repository in CI); tests that need
#: them skip when they are absent.
_DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARED_DATA = Path(os.environ.get("EDGEREG_DATA_ROOT", _DEFAULT_DATA))


def _float32(value) -> bool:
    """Whether a test parameter asks for float32 arithmetic (a dtype, its name,
    or a model's parameters or case holding one)."""
    if isinstance(value, dict):
        return any(_float32(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return any(_float32(v) for v in value)
    if isinstance(value, str):
        return value == "float32"
    return value is np.float32 or (isinstance(value, np.dtype) and value == np.float32)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items) -> None:
    """float32 cases belong to the deep tier (``pytest -m slow``).

    Each float32 case compiles its model's kernels a second time, for float32
    arrays: 53% of the fast tier's compile time with a cold kernel cache
    (367 of 698 CPU-s, measured per test with numba's compile events). The
    fast tier is the Quickstart's check that the install works and keeps every
    model, reference and contract in float64; CI's slow stage runs every float32
    case (the tests about float32 by name carry the mark themselves). Runs
    before pytest's own ``-m`` selection (``tryfirst``).
    """
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and _float32(tuple(callspec.params.values())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA
