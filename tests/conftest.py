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

#: The property suites' depth run (CI's "hostile inputs at depth" stage,
#: EDGEREG_HOSTILE=ci) draws a fixed sequence of examples: a CI run checks
#: the same 2,000 cases per model every time and a failure reproduces.
#: EDGEREG_HOSTILE=explore draws fresh ones (to search, not to gate).
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass
else:
    _hypothesis_settings.register_profile("edgereg-ci", derandomize=True)
    if os.environ.get("EDGEREG_HOSTILE") == "ci":
        _hypothesis_settings.load_profile("edgereg-ci")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA
