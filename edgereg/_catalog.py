"""Where each public name of edgereg is defined, read without importing it.

``import edgereg`` imports this module and the version only: the package
finds a model class (``edgereg.__getattr__``), and ``load`` the class a
file names, through this table, so a script that imports one model loads
that model's kernels only, and ``edgereg.native`` (an exported library run
through ctypes) loads no model module and no persistence code at all.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Every public model class -> the module of edgereg that defines it.
MODEL_MODULES = {
    "DFOP": "dfop",
    "RLS": "dfop",
    "DFOPBank": "bank",
    "DriftAlarm": "drift",
    "FleetBank": "bank",
    "Fleet": "fleet",
    "NORMAClassifier": "norma",
    "NORMANovelty": "norma",
    "NORMARegressor": "norma",
    "MORES": "mores",
    "SOMOR": "pa",
    "PARegressor": "pa",
    "SelectiveSampler": "selective",
    "SparseDFOP": "sparse_dfop",
    "SparseDFOPBank": "sparse_bank",
}

#: The package's other public names -> their module (the model contract and
#: persistence: numpy's file reading and the atomic writer, imported on use).
BASE_NAMES = {
    "OnlineModel": "_base",
    "StateFileError": "_base",
    "load": "_load",
}


def model_class(name: str) -> Any:
    """The public class called ``name`` (its module imported now), or None."""
    module = MODEL_MODULES.get(name)
    if module is None:
        return None
    return getattr(importlib.import_module(f".{module}", __package__), name)
