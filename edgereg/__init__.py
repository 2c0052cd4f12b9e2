"""edgereg: Numba-compiled online learners with fixed memory for edge devices.

Every model keeps a fixed-size state in preallocated arrays and learns one
sample (``learn_one``) or a block (``learn_many``) at a time with compiled
kernels that allocate nothing per step. The algorithms: docs/algorithms/.

Model modules are imported on first use (PEP 562), so ``from edgereg import
DFOP`` on a device loads DFOP's kernels only: cold start is part of the
product on a Raspberry Pi.
"""

from __future__ import annotations

from typing import Any

from ._base import MODEL_MODULES, OnlineModel, StateFileError, load
from ._base import model_class as _model_class

__all__ = [*MODEL_MODULES, "OnlineModel", "StateFileError", "load"]
from ._version import __version__ as __version__


def __getattr__(name: str) -> Any:
    value = _model_class(name)
    if value is None:
        raise AttributeError(f"module 'edgereg' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
