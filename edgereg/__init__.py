"""edgereg: Numba-compiled online learners with fixed memory for edge devices.

Every model keeps a fixed-size state in preallocated arrays and learns one
sample (``learn_one``) or a block (``learn_many``) at a time with compiled
kernels that allocate nothing per step. Each module cites its SPEC section.

Model modules are imported on first use (PEP 562), so ``from edgereg import
DFOP`` on a device loads DFOP's kernels only: cold start is part of the
product on a Raspberry Pi.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._base import OnlineModel, StateFileError, load

#: public name -> module that defines it
_LAZY = {
    "DFOP": "dfop",
    "RLS": "dfop",
    "Fleet": "fleet",
    "NORMAClassifier": "norma",
    "NORMANovelty": "norma",
    "NORMARegressor": "norma",
    "MORES": "mores",
    "SOMOR": "mores",
    "PARegressor": "mores",
    "SelectiveSampler": "selective",
    "SparseDFOP": "sparse_dfop",
}

__all__ = [*_LAZY, "OnlineModel", "StateFileError", "load"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'edgereg' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
