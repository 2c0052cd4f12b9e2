"""``edgereg.native``: an exported model run through ctypes, with numpy only.

For a board without numba wheels, or a sensor script that must start in
milliseconds: ``edgereg export DFOP --features 6 --shared`` (or
``edgereg.export.export(..., shared=True)``) writes ``lib<prefix>.so`` and
``<prefix>.json`` beside it; :class:`NativeModel` loads both and offers the
models' calls. numba is never imported. Files are edgereg's: ``save`` writes
what ``edgereg.load`` reads (and ``NativeModel.load`` reads what a model's
``save`` writes, of the same class and parameters).
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any

import numpy as np

__all__ = ["NativeModel"]

_C = {"float64": ctypes.c_double, "float32": ctypes.c_float, "int64": ctypes.c_int64}


class NativeModel:
    """A model exported as a shared library, driven through ctypes.

    Parameters
    ----------
    library : path
        ``lib<prefix>.so`` written by an export with ``shared=True``; its
        ``<prefix>.json`` (the layout) is read from the same folder.

    The state is one numpy buffer laid out as the header's struct; the calls
    are the exported functions (the JIT's kernels, bit for bit).
    """

    def __init__(self, library: str | os.PathLike) -> None:
        # os.path, not pathlib: a wheel install would import pathlib for this alone
        library = os.fspath(library)
        folder, name = os.path.split(library)
        prefix = name.removeprefix("lib").split(".")[0]
        with open(os.path.join(folder, f"{prefix}.json"), encoding="utf-8") as f:
            self.layout = json.load(f)
        lay = self.layout
        if lay["model"] not in ("DFOP", "RLS"):  # load's checks and the calls are DFOP's
            raise ValueError(f"NativeModel drives DFOP and RLS libraries only, not "
                             f"{lay['model']} (call its library through its header)")
        if lay.get("io", "float64") != "float64":  # its y, yhat, Y, mu, out are floats
            raise ValueError(f"NativeModel drives libraries whose y is a double, not "
                             f"{lay['io']} (arithmetic='float32': call it through its "
                             "header)")
        self.n_features = int(lay["d"])
        self.dtype = np.dtype(lay["dtype"])
        self.task = lay["task"]
        self._lib = ctypes.CDLL(library)
        self._buffer = np.zeros(lay["struct_bytes"] + 64, dtype=np.uint8)
        skip = -self._buffer.ctypes.data % 64
        self._struct = self._buffer[skip: skip + lay["struct_bytes"]]
        self._blocks = [self._struct[at: at + n * np.dtype(dt).itemsize].view(dt)
                        for _, dt, n, at in lay["blocks"]]
        self._pointers = [b.ctypes.data_as(ctypes.POINTER(_C[str(b.dtype)]))
                          for b in self._blocks]
        dbl, i64 = ctypes.POINTER(ctypes.c_double), ctypes.c_int64
        real = ctypes.POINTER(_C[str(self.dtype)])
        blocks = [ctypes.POINTER(_C[dt]) for _, dt, _, _ in lay["blocks"]]
        self._learn_one = getattr(self._lib, f"{prefix}_learn_one_blocks")
        self._learn_one.argtypes = [*blocks, real, ctypes.c_double, dbl]
        self._learn_one.restype = i64
        self._learn_many = getattr(self._lib, f"{prefix}_learn_many_blocks")
        self._learn_many.argtypes = [*blocks, real, dbl, i64, dbl, i64, dbl]
        self._learn_many.restype = i64
        self._predict_one = getattr(self._lib, f"{prefix}_predict_one_blocks")
        self._predict_one.argtypes = [*blocks, real]
        self._predict_one.restype = ctypes.c_double
        self._yhat = ctypes.c_double()
        self._yhat_p = ctypes.byref(self._yhat)
        self._real = real
        self._skip = lay["params"].get("on_invalid") == "skip"
        self.reset()

    def reset(self) -> None:
        """Back to the exported model's fresh state."""
        self._struct[:] = np.frombuffer(bytes.fromhex(self.layout["init"]), dtype=np.uint8)

    def _row(self, x: Any) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if x.shape != (self.n_features,):
            raise ValueError(f"x must have shape ({self.n_features},), got {x.shape}")
        return x

    def learn_one(self, x: Any, y: float) -> float:
        """Predict x, then learn (x, y); the prediction (ValueError when refused
        and on_invalid is "raise"; the state is then unchanged)."""
        x = self._row(x)
        status = self._learn_one(*self._pointers, x.ctypes.data_as(self._real), float(y),
                                 self._yhat_p)
        if status != 0 and not self._skip:
            raise ValueError(f"invalid sample (status {status}): state unchanged")
        return self._yhat.value

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block; the prequential predictions (as the model's learn_many)."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}")
        n = X.shape[0]
        Y = np.ascontiguousarray(y, dtype=np.float64)
        if Y.shape != (n,):
            raise ValueError(f"y must have shape ({n},), got {Y.shape}")
        mu = None if forgetting is None else np.ascontiguousarray(
            np.broadcast_to(np.asarray(forgetting, dtype=np.float64), (n,)))
        out = np.empty(n)
        dp = ctypes.POINTER(ctypes.c_double)
        first = self._learn_many(
            *self._pointers, X.ctypes.data_as(self._real), Y.ctypes.data_as(dp), n,
            None if mu is None else mu.ctypes.data_as(dp), 0 if mu is None else n,
            out.ctypes.data_as(dp))
        if first == -2:
            raise ValueError("every per-step forgetting factor must be in [0, 1)")
        if first >= 0:
            raise ValueError(f"invalid sample at row {first}: rows before it were learnt")
        return out

    def predict_one(self, x: Any) -> float:
        return self._predict_one(*self._pointers, self._row(x).ctypes.data_as(self._real))

    def _fields(self) -> dict[str, np.ndarray]:
        names = [b[0] for b in self.layout["blocks"]]
        out = {}
        for name, block, offset, shape, dtype, learnt in self.layout["fields"]:
            if learnt:
                flat = self._blocks[names.index(block)]
                n = int(np.prod(shape))
                out[name] = flat[offset: offset + n].view(dtype).reshape(shape)
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write an edgereg state file (``edgereg.load`` gives the JIT model back)."""
        from ._base import STATE_FORMAT, atomic_savez

        meta = {"format": np.array(STATE_FORMAT), "model": np.array(self.layout["model"]),
                "params": np.array(json.dumps(self.layout["params"]))}
        atomic_savez(path, {**meta, **{f"state.{k}": v.copy()
                                       for k, v in self._fields().items()}})

    def save_blob(self, path: str | os.PathLike) -> None:
        """Write the state as the device does (the header's blob header, then the
        struct): ``edgereg.load`` reads it."""
        with open(path, "wb") as f:
            f.write(bytes.fromhex(self.layout["blob_header"]) + self._struct.tobytes())

    def load(self, path: str | os.PathLike) -> NativeModel:
        """Continue from an edgereg state file of the same model and parameters
        (``StateFileError`` for any other file, the state then unchanged)."""
        from ._base import STATE_FORMAT, StateFileError, read_npz

        path = os.fspath(path)
        npz = read_npz(path, "edgereg state file")  # a damaged zip: StateFileError
        if str(npz.get("format", "")) != STATE_FORMAT:
            raise StateFileError(f"{path!r} is not an edgereg state file (expected format "
                                 f"{STATE_FORMAT!r})")
        try:
            same = (str(npz["model"]) == self.layout["model"]
                    and json.loads(str(npz["params"])) == self.layout["params"])
        except (KeyError, ValueError, RecursionError) as exc:
            raise StateFileError(f"{path!r}: no readable model or params entry ({exc!r})"
                                 ) from exc
        if not same:
            raise StateFileError(f"{path!r} holds another model or other parameters "
                                 f"than {self.layout['model']}{self.layout['params']}")
        staged = []
        for name, view in self._fields().items():
            value = npz.get(f"state.{name}")
            if value is None or value.shape != view.shape or value.dtype != view.dtype:
                raise StateFileError(f"{path!r}: state.{name} is missing or does not fit")
            if not np.all(np.isfinite(value)):
                raise StateFileError(f"{path!r}: state.{name} holds NaN or inf")
            if name == "counts" and not (np.all(value[:2] >= 0)
                                         and 0 <= value[3] < self.n_features):
                # DFOP's counters: the next refresh coordinate indexes P's rows.
                raise StateFileError(f"{path!r}: state.counts {value.tolist()} out of "
                                     "range")
            staged.append((view, value))
        for view, value in staged:
            view[...] = value
        return self
