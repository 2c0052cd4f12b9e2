"""edgereg: Numba-compiled online learners with fixed memory for edge devices.

Every model keeps a fixed-size state in preallocated arrays and learns one
sample (``learn_one``) or a block (``learn_many``) at a time with compiled
kernels that allocate nothing per step. See SPEC sections in each module.
"""

from ._base import OnlineModel, StateFileError, load
from .dfop import DFOP, RLS
from .fleet import Fleet
from .mores import MORES, SOMOR, PARegressor
from .norma import NORMAClassifier, NORMANovelty, NORMARegressor
from .selective import SelectiveSampler  # issue 5: selective sampling (SPEC section 4)
from .sparse_dfop import SparseDFOP

__all__ = [
    "DFOP",
    "Fleet",
    "RLS",
    "NORMAClassifier",
    "NORMANovelty",
    "NORMARegressor",
    "MORES",
    "SOMOR",
    "PARegressor",
    "OnlineModel",
    "StateFileError",
    "SparseDFOP",
    "SelectiveSampler",
    "load",
]
__version__ = "0.1.0"
