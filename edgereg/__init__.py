"""edgereg: Numba-compiled online learners with fixed memory for edge devices.

Every model keeps a fixed-size state in preallocated arrays and learns one
sample (``learn_one``) or a block (``learn_many``) at a time with compiled
kernels that allocate nothing per step. The algorithms: docs/algorithms/.

Model modules are imported on first use (PEP 562), so ``from edgereg import
DFOP`` on a device loads DFOP's kernels only, and the model contract with its
persistence (``OnlineModel``, ``load``, ``StateFileError``) is imported when
first named: ``import edgereg.native`` runs an exported library with numpy
and ctypes only. Cold start is part of the product on a Raspberry Pi.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from ._catalog import BASE_NAMES as _BASE_NAMES
from ._catalog import MODEL_MODULES as _MODEL_MODULES
from ._version import __version__ as __version__

if _typing.TYPE_CHECKING:  # what static tools see (at run time, __getattr__ imports them)
    from ._base import OnlineModel as OnlineModel
    from ._base import StateFileError as StateFileError
    from ._load import load as load

__all__ = [*_MODEL_MODULES, *_BASE_NAMES]


def __getattr__(name: str) -> _typing.Any:
    module = _MODEL_MODULES.get(name) or _BASE_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'edgereg' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
