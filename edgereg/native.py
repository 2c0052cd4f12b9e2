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
#: The range of an integer the export found unbounded (edgereg/export/bounds.py).
_LIMIT = 2**62


class NativeModel:
    """A model exported as a shared library, driven through ctypes.

    Parameters
    ----------
    library : path
        ``lib<prefix>.so`` written by an export with ``shared=True``; its
        ``<prefix>.json`` (the layout) is read from the same folder.

    Every exported model: DFOP and RLS (fixed or per-step forgetting), the
    ``forgetting="auto"`` bank, PARegressor, SOMOR, MORES, the three NORMA
    models, SparseDFOP (also ``learn_one_sparse`` / ``predict_one_sparse`` of a
    row's indices and values), SelectiveSampler (also ``process_one(x,
    label_oracle)``, its round in two C calls) and a DriftAlarm over DFOP, RLS or
    the bank, in float64 or float32, and the float32-only arithmetic (whose y,
    predictions and ``out`` are float32). The calls are the models' own:
    ``learn_one(x, y)`` returns the prediction made before learning, a float,
    or an array of ``n_outputs`` (NORMANovelty: ``learn_one(x)`` and
    ``learn_many(X)``, no target). The state is one numpy buffer laid out as
    the header's struct; the calls are the exported functions (the JIT's
    kernels, bit for bit).
    """

    def __init__(self, library: str | os.PathLike) -> None:
        # os.path, not pathlib: a wheel install would import pathlib for this alone
        library = os.fspath(library)
        folder, name = os.path.split(library)
        prefix = name.removeprefix("lib").split(".")[0]
        with open(os.path.join(folder, f"{prefix}.json"), encoding="utf-8") as f:
            self.layout = json.load(f)
        lay = self.layout
        if "integer_bounds" not in lay:
            raise ValueError(f"{prefix}.json has no integer_bounds: written by an older "
                             "edgereg; export the model again")
        self.model = lay["model"]
        self.n_features = int(lay["d"])
        self.n_outputs = int(lay.get("n_outputs") or 0)
        self.dtype = np.dtype(lay["dtype"])
        self.task = lay["task"]
        self._io = np.dtype(lay.get("io", "float64"))
        self._forgetting = bool(lay.get("forgetting", True))
        self._lib = ctypes.CDLL(library)
        self._buffer = np.zeros(lay["struct_bytes"] + 64, dtype=np.uint8)
        skip = -self._buffer.ctypes.data % 64
        self._struct = self._buffer[skip: skip + lay["struct_bytes"]]
        self._blocks = [self._struct[at: at + n * np.dtype(dt).itemsize].view(dt)
                        for _, dt, n, at in lay["blocks"]]
        self._pointers = [b.ctypes.data_as(ctypes.POINTER(_C[str(b.dtype)]))
                          for b in self._blocks]
        i64, yreal = ctypes.c_int64, _C[str(self._io)]
        self._real, self._yp = ctypes.POINTER(_C[str(self.dtype)]), ctypes.POINTER(yreal)
        blocks = [ctypes.POINTER(_C[dt]) for _, dt, _, _ in lay["blocks"]]
        m, real, yp = self.n_outputs, self._real, self._yp
        self._learn_one = getattr(self._lib, f"{prefix}_learn_one_blocks")
        self._learn_one.argtypes = [*blocks, real, yp if m else yreal, yp]
        self._learn_one.restype = i64
        self._learn_many = getattr(self._lib, f"{prefix}_learn_many_blocks")
        self._learn_many.argtypes = [*blocks, real, yp, i64, yp, i64, yp]
        self._learn_many.restype = i64
        self._predict_one = getattr(self._lib, f"{prefix}_predict_one_blocks")
        self._predict_one.argtypes = [*blocks, real, *([yp] if m else [])]
        self._predict_one.restype = i64 if m else yreal
        try:  # SparseDFOP's calls for a sparse row (indices, values)
            self._sparse = (getattr(self._lib, f"{prefix}_learn_one_sparse_blocks"),
                            getattr(self._lib, f"{prefix}_predict_one_sparse_blocks"))
        except AttributeError:
            self._sparse = None
        else:
            pi = ctypes.POINTER(i64)
            self._sparse[0].argtypes = [*blocks, pi, real, i64, yreal, yp]
            self._sparse[1].argtypes = [*blocks, pi, real, i64, yp]
            self._sparse[0].restype = self._sparse[1].restype = i64
        self._yhat = np.zeros(max(m, 1), dtype=self._io)  # learn_one's prediction
        self._yhat_p = self._yhat.ctypes.data_as(yp)
        params = lay["params"]
        # A DriftAlarm's on_invalid (and class) are its wrapped model's.
        self._wrapped = params["model"] if isinstance(params.get("model"), dict) else {
            "class": self.model, "params": params}
        self._skip = self._wrapped["params"].get("on_invalid") == "skip"
        if self.model == "SelectiveSampler":  # its round in two calls: assess, commit
            self._assess = getattr(self._lib, f"{prefix}_assess_blocks")
            self._assess.argtypes = [*blocks, real, yp, ctypes.POINTER(i64)]
            self._assess.restype = i64
            self._commit = getattr(self._lib, f"{prefix}_commit_blocks")
            self._commit.argtypes = [*blocks, yreal]
            self._commit.restype = i64
            self._ask = np.zeros(1, dtype=np.int64)
            self._ask_p = self._ask.ctypes.data_as(ctypes.POINTER(i64))
        self.reset()

    def reset(self) -> None:
        """Back to the exported model's fresh state."""
        self._struct[:] = np.frombuffer(bytes.fromhex(self.layout["init"]), dtype=np.uint8)

    def _row(self, x: Any) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if x.shape != (self.n_features,):
            raise ValueError(f"x must have shape ({self.n_features},), got {x.shape}")
        return x

    def _target(self, y: Any) -> Any:
        """y as learn_one's C argument: a number, or a pointer to n_outputs values."""
        if self.task == "novelty":
            if y is not None:
                raise TypeError("a novelty model learns x alone: learn_one(x)")
            return 0.0  # not read
        if y is None:
            raise TypeError("learn_one needs a target y")
        if not self.n_outputs:
            return float(y)
        with np.errstate(over="ignore"):  # a huge target: inf in float32, refused in C
            y = np.ascontiguousarray(y, dtype=self._io)
        if y.shape != (self.n_outputs,):
            raise ValueError(f"y must have shape ({self.n_outputs},), got {y.shape}")
        return y.ctypes.data_as(self._yp)

    def learn_one(self, x: Any, y: Any = None) -> Any:
        """Predict x, then learn (x, y); the prediction (ValueError when refused
        and on_invalid is "raise"; the state is then unchanged)."""
        x = self._row(x)
        status = self._learn_one(*self._pointers, x.ctypes.data_as(self._real),
                                 self._target(y), self._yhat_p)
        self._refused(status)
        return self._yhat.copy() if self.n_outputs else self._yhat[0].item()

    def _refused(self, status: int) -> None:
        """A refused sample raises unless on_invalid is "skip" (the C call counted it)."""
        if status != 0 and not self._skip:
            raise ValueError(f"invalid sample (status {status}): state unchanged")

    def learn_many(self, X: Any, y: Any = None, forgetting: Any = None) -> np.ndarray:
        """Learn a block; the prequential predictions (as the model's learn_many)."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}")
        n, m = X.shape[0], self.n_outputs
        shape = (n, m) if m else (n,)
        if self.task == "novelty":
            if y is not None:
                raise TypeError("a novelty model learns X alone: learn_many(X)")
            Y = np.zeros(shape, dtype=self._io)  # not read
        else:
            with np.errstate(over="ignore"):
                Y = np.ascontiguousarray(y, dtype=self._io)
            if Y.shape != shape:
                raise ValueError(f"y must have shape {shape}, got {Y.shape}")
        if forgetting is not None and not self._forgetting:
            raise ValueError(f"{self.model} has no per-step forgetting factor")
        mu = None if forgetting is None else np.ascontiguousarray(
            np.broadcast_to(np.asarray(forgetting, dtype=self._io), (n,)))
        out = np.empty(shape, dtype=self._io)
        first = self._learn_many(
            *self._pointers, X.ctypes.data_as(self._real), Y.ctypes.data_as(self._yp), n,
            None if mu is None else mu.ctypes.data_as(self._yp), 0 if mu is None else n,
            out.ctypes.data_as(self._yp))
        if first == -2:
            raise ValueError("every per-step forgetting factor must be in [0, 1)")
        if first >= 0:
            raise ValueError(f"invalid sample at row {first}: rows before it were learnt")
        if first != -1:
            raise RuntimeError(f"the library's learn_many returned {first}")
        return out

    def predict_one(self, x: Any) -> Any:
        """The prediction for x (no learning): a float, or n_outputs values."""
        x = self._row(x).ctypes.data_as(self._real)
        if not self.n_outputs:
            return self._predict_one(*self._pointers, x)
        out = np.empty(self.n_outputs, dtype=self._io)
        self._predict_one(*self._pointers, x, out.ctypes.data_as(self._yp))
        return out

    def _sparse_row(self, indices: Any, values: Any) -> tuple[Any, ...]:
        """A sparse row as the C calls take it: int64 indices in increasing order (a
        stable sort, as SparseDFOP's; repeated indices add up), values of the dtype."""
        if self._sparse is None:
            raise TypeError(f"{self.model} has no sparse-row calls")
        idx = np.ascontiguousarray(indices, dtype=np.int64)
        val = np.ascontiguousarray(values, dtype=self.dtype)
        if idx.ndim != 1 or idx.shape != val.shape:
            raise ValueError("indices and values must be two 1-D arrays of the same length")
        if np.any(idx[1:] < idx[:-1]):
            order = np.argsort(idx, kind="stable")
            idx, val = idx[order], val[order]
        return (*self._pointers, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                val.ctypes.data_as(self._real), idx.size), (idx, val)

    def learn_one_sparse(self, indices: Any, values: Any, y: Any) -> float:
        """learn_one of the sparse row x[indices] = values (SparseDFOP's exports)."""
        args, _alive = self._sparse_row(indices, values)  # the arrays behind the pointers
        status = self._sparse[0](*args, float(y), self._yhat_p)
        if status == -4:
            raise ValueError(f"indices must be in [0, {self.n_features}): state unchanged")
        self._refused(status)
        return self._yhat[0].item()

    def predict_one_sparse(self, indices: Any, values: Any) -> float:
        """The prediction for the sparse row x[indices] = values (no learning)."""
        args, _alive = self._sparse_row(indices, values)
        out = np.zeros(1, dtype=self._io)
        if self._sparse[1](*args, out.ctypes.data_as(self._yp)) == -4:
            raise ValueError(f"indices must be in [0, {self.n_features})")
        return out[0].item()

    def process_one(self, x: Any, label_oracle: Any) -> tuple[float, bool]:
        """SelectiveSampler: one round of the selective protocol, as the model's
        ``process_one``: (the prediction, whether ``label_oracle()`` was called)."""
        if not hasattr(self, "_assess"):
            raise TypeError(f"{self.model} has no process_one")
        x = self._row(x)
        status = self._assess(*self._pointers, x.ctypes.data_as(self._real), self._yhat_p,
                              self._ask_p)
        pred, asked = self._yhat[0].item(), bool(self._ask[0])
        if status == 0:  # the C call reads y only when it asked for it
            status = self._commit(*self._pointers,
                                  float(label_oracle()) if asked else float("nan"))
        self._refused(status)
        return pred, asked and status == 0

    def _learnt(self) -> list[tuple[str, tuple[int, ...], np.dtype, list[np.ndarray]]]:
        """(name, shape, dtype, the byte views of its runs in the struct) per learnt
        field: one run, a row per member of a bank, or a float32 in a float64 slot."""
        names = [b[0] for b in self.layout["blocks"]]
        out = []
        for name, block, _, shape, dtype, learnt in self.layout["fields"]:
            if learnt:
                flat = self._blocks[names.index(block)]
                runs = [flat[at: at + n].view(np.uint8)
                        for at, n in self.layout["field_runs"][name]]
                out.append((name, tuple(shape), np.dtype(dtype), runs))
        return out

    def _fields(self) -> dict[str, np.ndarray]:
        out = {}
        for name, shape, dtype, runs in self._learnt():
            raw = np.concatenate(runs)
            out[name] = raw.view(dtype)[: int(np.prod(shape))].reshape(shape).copy()
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write an edgereg state file (``edgereg.load`` gives the JIT model back)."""
        from ._base import STATE_FORMAT, atomic_savez

        meta = {"format": np.array(STATE_FORMAT), "model": np.array(self.layout["model"]),
                "params": np.array(json.dumps(self.layout["params"]))}
        atomic_savez(path, {**meta, **{f"state.{k}": v for k, v in self._fields().items()}})

    def save_blob(self, path: str | os.PathLike) -> None:
        """Write the state as the device does (the header's blob header, then the
        struct): ``edgereg.load`` reads it."""
        with open(path, "wb") as f:
            f.write(bytes.fromhex(self.layout["blob_header"]) + self._struct.tobytes())

    def load(self, path: str | os.PathLike) -> NativeModel:
        """Continue from an edgereg state file of the same model and parameters
        (``StateFileError`` for any other file, the state then unchanged).

        Checked: the model and parameters, every learnt field's shape and dtype,
        finite values, and every integer within the range the model's own load
        accepts (the export wrote those ranges: the C code uses the integers as
        indices and loop bounds). ``edgereg.load`` checks more (an exactly
        symmetric P, weights that are a distribution, ...). What the model's
        load derives from its learnt state (a bank's members' forgetting factors
        and refresh periods follow its window) is set from the export's table of
        it, as ``edgereg.load`` sets it.
        """
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
        bounds: dict[str, dict[int, tuple[int, int]]] = {}
        for name, at, low, high in self.layout["integer_bounds"]:
            bounds.setdefault(name, {})[at] = (low, high)
        staged = []
        for name, shape, dtype, runs in self._learnt():
            value = npz.get(f"state.{name}")
            if (value is not None and value.dtype == np.float32 and dtype == np.float64
                    and value.shape == shape and self._io == np.float32):
                # The float32-only arithmetic's float64 slot holding a float32 in its
                # first half (a bank's forgotten masses): the JIT's file holds the
                # float32 alone, its load packs it so.
                slots = np.zeros(shape, dtype="<f8")
                slots.view("<f4")[..., ::2] = value
                value = slots
            if value is None or value.shape != shape or value.dtype != dtype:
                raise StateFileError(f"{path!r}: state.{name} is missing or does not fit")
            if dtype.kind == "f" and not np.all(np.isfinite(value)):
                raise StateFileError(f"{path!r}: state.{name} holds NaN or inf")
            if dtype.kind in "iu":
                flat = value.reshape(-1)
                for at, v in enumerate(flat.tolist()):
                    low, high = bounds.get(name, {}).get(at, (-_LIMIT, _LIMIT))
                    if not low <= v <= high:
                        raise StateFileError(f"{path!r}: state.{name}[{at}] = {v} is outside "
                                             f"{low}..{high}")
            staged.append((np.ascontiguousarray(value).reshape(-1).view(np.uint8), runs))
        # Work the model's own load derives from a learnt integer (a bank's members'
        # factors follow its window): the export tabulated it per value.
        derived = []
        for name, at, low, ranges, values in self.layout.get("derived_work", []):
            v = int(npz[f"state.{name}"].reshape(-1)[at])
            if not 0 <= v - low < len(values):
                raise StateFileError(f"{path!r}: state.{name}[{at}] = {v} has no tabulated "
                                     "work")
            derived.append((ranges, bytes.fromhex(values[v - low])))
        for data, runs in staged:
            pos = 0
            for run in runs:  # a float32 in a float64 slot: its first bytes only
                take = min(run.size, data.size - pos)
                run[:take] = data[pos: pos + take]
                pos += take
        for ranges, data in derived:
            pos = 0
            for at, n in ranges:
                self._struct[at: at + n] = np.frombuffer(data[pos: pos + n], dtype=np.uint8)
                pos += n
        return self
