"""Each kernel is compiled once per dtype, not once more for a strided view.

numba compiles a kernel again for every new combination of argument types,
and an array's layout (C-contiguous or strided) is part of its type: a model
that hands DFOP's kernels a strided view of its blocks compiles all of them
a second time (FleetBank's rows of A did: its first call took 24 s instead
of 9). Run in a fresh process, so that what other tests compiled does not
count.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from numba.core import config

# The slow tier (pytest -m slow): every model compiled again in a process of its own.
pytestmark = pytest.mark.slow

_AUDIT = r"""
import importlib, pkgutil
from numba.core.registry import CPUDispatcher
from contract_data import learn_many, learn_one, make_stream, model_cases, predict_many, row
import edgereg._kernels as kernels

for _, cls, params in model_cases():
    model = cls(**params)
    X, Y = make_stream(model, 20)
    learn_many(model, X, Y)
    for t in range(3):
        learn_one(model, X[t], row(Y, t))
    predict_many(model, X[:3])
    model.predict_one(X[0])
for info in pkgutil.iter_modules(kernels.__path__):
    module = importlib.import_module(f"edgereg._kernels.{info.name}")
    for name, f in vars(module).items():
        if not isinstance(f, CPUDispatcher) or f.__module__ != module.__name__:
            continue
        plain = {tuple((str(getattr(a, "dtype", a)), getattr(a, "ndim", 0)) for a in s)
                 for s in f.signatures}
        if len(plain) < len(f.signatures):
            layouts = [''.join(getattr(a, "layout", "-") for a in s) for s in f.signatures]
            print(f"{info.name}.{name}: {len(f.signatures)} compilations for {len(plain)} "
                  f"argument types (layouts {layouts})")
"""


@pytest.mark.skipif(config.DISABLE_JIT, reason="nothing is compiled with NUMBA_DISABLE_JIT=1")
def test_every_model_calls_its_kernels_with_one_layout_per_dtype():
    tests = Path(__file__).parent
    result = subprocess.run([sys.executable, "-c", _AUDIT], cwd=tests, capture_output=True,
                            text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "", "kernels compiled again for a strided layout:\n" + result.stdout
