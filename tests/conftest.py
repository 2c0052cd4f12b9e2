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


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA
