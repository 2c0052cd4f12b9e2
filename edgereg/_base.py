"""The Python layer every edgereg model shares: state, persistence, validation.

A model is two layers (README, "Development"): ``@njit`` kernels over plain arrays,
and a class like the ones here that owns the state, validates input once and
calls the kernels. This module holds what is common to every class so that a
model module only writes its kernels, its ``_allocate`` and its hot paths.

State contract
--------------
``_allocate()`` returns two ``NamedTuple``s of preallocated NumPy arrays: the
learnt state (what the model *is*: ``state``, and all that ``save`` and
pickling write) and the workspace (the kernels' scratch, preallocated so that
no step allocates, with no meaning between calls, rebuilt on ``load``). Every
state has a field ``counts`` (int64) whose first two entries are the number
of samples learnt and the number skipped as invalid. A model may lay both
out in one physical block (DFOP does, so that ``learn_one`` is one call of
few arguments); they are still two sets of views. Nothing is ever
reallocated while learning: ``reset()`` allocates afresh, ``load()`` copies
into a freshly allocated state after checking every field.

Bad input contract
------------------
Per-sample and block kernels report a non-finite sample with a status instead
of raising, and never apply half an update. With ``on_invalid="raise"`` the
class raises ``ValueError`` naming the row, with the state exactly as it was
before that sample; with ``on_invalid="skip"`` the sample is skipped and
counted in ``n_skipped_``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._catalog import MODEL_MODULES as MODEL_MODULES
from ._catalog import model_class
from ._validate import (
    INT_MAX,
    NOT_A_LABEL,
    as_matrix,
    as_row,
    check_dtype,
    check_on_invalid,
    describe_nonfinite,
    is_label,
)

STATE_FORMAT = "edgereg-state-1"

_REGISTRY: dict[str, type[OnlineModel]] = {}

# json, tempfile, zipfile and inspect are imported in the functions that use
# them (save, load, get_params): ``edgereg.native`` and a script that only
# learns start without them.

#: File formats of earlier versions -> the class whose module reads them. That
#: module registers its reader on import (``register_format``); ``load``
#: imports it by name, as ``model_class`` does, so that this module needs no
#: import of a model module (which would close an import circle through it).
LEGACY_FORMATS = {
    "edgereg-fleet-1": "Fleet",
}

_FORMAT_READERS: dict[str, Callable[[str, dict[str, np.ndarray]], Any]] = {}


def register_format(name: str, reader: Callable[[str, dict[str, np.ndarray]], Any]) -> None:
    """Have ``load`` read files whose ``format`` is ``name`` (listed in
    ``LEGACY_FORMATS``) with ``reader(path, arrays)``."""
    _FORMAT_READERS[name] = reader


class StateFileError(ValueError):
    """A file given to ``load`` is not a usable edgereg state file."""


class OnlineModel:
    """Base class of every edgereg model (not used directly).

    Subclasses set ``_task`` and implement ``_allocate``, ``_learn_block``,
    ``_predict_block`` and ``learn_one`` / ``predict_one`` (the per-sample hot
    paths stay in the subclass so that they cost one kernel dispatch).
    """

    #: "regression", "classification", "novelty" or "multioutput"; drives the
    #: contract tests' synthetic data and the target validation.
    _task: ClassVar[str] = "regression"

    #: The largest abs(y) the model's kernels accept (the models built on DFOP's
    #: step, as the banks do); None: no range but the dtype's.
    _target_limit: ClassVar[float | None] = None

    n_features: int
    dtype: np.dtype
    on_invalid: str

    #: The class that ``forgetting="auto"`` makes of this one
    #: (``DFOP(..., forgetting="auto")`` is a DFOPBank). Read for the class
    #: that sets it only, not for its subclasses (RLS, the banks themselves).
    _auto_bank: ClassVar[str | None] = None
    _forgetting_at: ClassVar[int] = -1  # its position among __init__'s arguments

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls
        if "_auto_bank" in cls.__dict__:  # read once: a signature costs ~14 us a call
            import inspect

            names = list(inspect.signature(cls.__init__).parameters)[1:]  # after self
            cls._forgetting_at = names.index("forgetting")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        bank = cls.__dict__.get("_auto_bank")
        if bank is not None:
            at = cls._forgetting_at
            forgetting = args[at] if len(args) > at else kwargs.get("forgetting")
            if isinstance(forgetting, str) and forgetting == "auto":
                cls = model_class(bank)
        return object.__new__(cls)

    # ------------------------------------------------------------------ state
    def _init_common(self, n_features: int, dtype: Any, on_invalid: str) -> None:
        from ._validate import check_int

        self.n_features = check_int("n_features", n_features)
        self.dtype = check_dtype(dtype)
        self.on_invalid = check_on_invalid(on_invalid)
        self._skip = on_invalid == "skip"
        self._row_shape = (self.n_features,)

    def _allocate(self) -> tuple[NamedTuple, NamedTuple]:  # pragma: no cover - abstract
        """(learnt state, workspace), freshly allocated."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything learnt: reallocate the state as at construction."""
        self._state, self._work = self._allocate()
        self._bind_state()

    def _bind_state(self) -> None:
        """Cache the state's arrays as attributes for the hot paths (optional)."""

    @property
    def state(self) -> NamedTuple:
        """The learnt state: a NamedTuple of read-only views of its arrays (no scratch)."""
        views = []
        for arr in self._state:
            v = arr.view()
            v.flags.writeable = False
            views.append(v)
        return type(self._state)(*views)

    @property
    def n_seen_(self) -> int:
        """Number of samples learnt from (skipped samples excluded)."""
        return int(self._state.counts[0])

    @property
    def n_skipped_(self) -> int:
        """Number of samples skipped as invalid under ``on_invalid="skip"``."""
        return int(self._state.counts[1])

    def nbytes(self) -> int:
        """Bytes held by the learnt state and the workspace (the model's whole fixed memory)."""
        return int(sum(a.nbytes for a in self._state) + sum(a.nbytes for a in self._work))

    # --------------------------------------------------------------- params
    def get_params(self) -> dict[str, Any]:
        """Constructor arguments, as given (scikit-learn convention)."""
        import inspect

        sig = inspect.signature(type(self).__init__)
        params = {}
        for name, p in sig.parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            value = getattr(self, name)
            if isinstance(value, np.dtype):
                value = value.name
            params[name] = value
        return params

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __getstate__(self) -> dict[str, Any]:
        return {"params": self.get_params(), "state": self._state}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__init__(**d["params"])
        self._copy_state_in(d["state"]._asdict(), source="pickle")

    # ---------------------------------------------------------- persistence
    def save(self, path: str | os.PathLike) -> None:
        """Write the model (parameters and state) to ``path`` atomically.

        The file is an ``.npz`` archive readable with ``allow_pickle=False``.
        It is written to a temporary file in the same directory, flushed to
        disk and renamed over ``path``, so a crash or a kill leaves either the
        old file or the new one, never half of one.
        """
        import json

        arrays = saved_state_arrays(self._state)
        meta = {
            "format": np.array(STATE_FORMAT),
            "model": np.array(type(self).__name__),
            "params": np.array(json.dumps(self.get_params())),
        }
        atomic_savez(path, {**meta, **arrays})

    @classmethod
    def load(cls, path: str | os.PathLike) -> OnlineModel:
        """Read a model written by :meth:`save`; it resumes bit-exactly.

        Raises
        ------
        StateFileError
            If the file is truncated, not an edgereg state file, written by
            another model class, or its arrays do not fit the parameters.
        """
        import json

        path = os.fspath(path)
        contents = read_npz(path, "edgereg state file")
        kind = str(contents.get("format", ""))
        if kind in LEGACY_FORMATS:
            owner = model_class(LEGACY_FORMATS[kind])  # imports the module: it registers
            if cls is not OnlineModel and not issubclass(owner, cls):
                raise StateFileError(f"{path!r} holds a {owner.__name__}, not a {cls.__name__}")
            return _FORMAT_READERS[kind](path, contents)
        if kind != STATE_FORMAT:
            raise StateFileError(
                f"{path!r} is not an edgereg state file (expected format {STATE_FORMAT!r})"
            )
        if "model" not in contents or "params" not in contents:
            missing = [k for k in ("model", "params") if k not in contents]
            raise StateFileError(f"{path!r}: the state file has no {' or '.join(missing)} entry")
        name = str(contents["model"])
        if name not in _REGISTRY:
            model_class(name)  # model modules are imported lazily: import this one now
        # A private class (``_NORMA``, the base of the NORMA models) is registered
        # but is no model: it has no parameters of its own to build from.
        target = None if name.startswith("_") else _REGISTRY.get(name)
        if target is None:
            raise StateFileError(f"{path!r} holds an unknown model class {name!r}")
        if cls is not OnlineModel and not issubclass(target, cls):
            raise StateFileError(f"{path!r} holds a {name}, not a {cls.__name__}")
        try:
            params = json.loads(str(contents["params"]))
            model = target(**target._file_params(params))
        except (ValueError, TypeError, AttributeError) as exc:
            raise StateFileError(f"{path!r} has invalid model parameters: {exc}") from exc
        except (MemoryError, OverflowError) as exc:
            raise StateFileError(f"{path!r} has model parameters too large to allocate: "
                                 f"{type(exc).__name__} {exc}") from exc
        state = {k[len("state.") :]: v for k, v in contents.items() if k.startswith("state.")}
        model._copy_state_in(state, source=repr(path))
        return model

    @classmethod
    def _file_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """The constructor arguments of a state file's parameters (a class whose
        defaults changed maps a file written before to what it meant)."""
        return params

    def _copy_state_in(self, arrays: dict[str, np.ndarray], source: str) -> None:
        fresh, work = self._allocate()
        copy_state_fields(fresh, arrays, source)
        for field, reason in self._state_faults(fresh):
            # A value a kernel uses as an index, a count or a loop bound, or a
            # broken invariant: refused here, never met inside a kernel.
            raise StateFileError(f"{source}: state field {field!r} {reason}")
        self._state, self._work = fresh, work
        self._bind_state()

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """(field, reason) for every invariant a loaded state breaks (none: usable).

        Subclasses add the invariants their kernels rely on (indices within
        their buffers, an exactly symmetric P, ...) to these common ones.
        """
        counts = state.counts  # type: ignore[attr-defined]
        if np.any(counts > INT_MAX):
            # A counter the kernels increment, or square (SelectiveSampler's
            # integer square root of t), would wrap around int64: a learn
            # call that never returns (found by the property test).
            return [("counts", f"holds a count beyond {INT_MAX} (2^62 - 1)")]
        if counts.ndim == 1 and np.any(counts[:2] < 0):
            return [("counts", f"holds a negative sample count {counts[:2].tolist()}")]
        return []

    # ------------------------------------------------------------ learning
    def _row(self, x: Any) -> np.ndarray:
        """One sample as the kernels take it; the fast path costs three attribute reads."""
        if type(x) is np.ndarray and x.dtype is self.dtype and x.shape == self._row_shape:
            if x.flags.carray:  # C-contiguous, aligned, writeable (_validate.kernel_ready)
                return x
        return as_row(x, self.n_features, self.dtype)

    def _check_X(self, X: Any) -> np.ndarray:
        return as_matrix(X, self.n_features, self.dtype)

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _learn_block(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray, **kw: Any) -> int:
        raise NotImplementedError  # pragma: no cover

    def _predict_block(self, X: np.ndarray, out: np.ndarray) -> None:
        raise NotImplementedError  # pragma: no cover

    def _output_shape(self, n: int) -> tuple[int, ...]:
        return (n,)

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        """Explain why a sample was rejected by a kernel."""
        parts = []
        bad_x = describe_nonfinite(np.asarray(x, dtype=np.float64))
        if bad_x:
            parts.append(f"non-finite input {bad_x}")
            if self.dtype == np.float32 and np.any(np.isinf(np.asarray(x, dtype=np.float64))):
                parts[-1] += (" (a value beyond float32's range, 3.4e38, is inf once stored: "
                              "scale the inputs or use dtype='float64')")
        y_arr = np.asarray(y, dtype=np.float64)
        limit = self._target_limit
        if not np.all(np.isfinite(y_arr)):
            parts.append(f"non-finite or invalid target y={y!r}")
        elif limit is not None and np.any(np.abs(y_arr) > limit):
            shown = repr(float(y_arr)) if y_arr.ndim == 0 else repr(y)
            parts.append(f"target y={shown} beyond the model's range |y| <= {limit:g} "
                         f"(out of range: its weights would leave later predictions inf)")
        elif self._task == "classification" and not np.all(is_label(y_arr)):
            shown = repr(float(y_arr)) if y_arr.ndim == 0 else repr(y)
            parts.append(f"y={shown} {NOT_A_LABEL}")
        if not parts:
            parts.append(
                "the update is not finite or not positive definite: the input is too "
                "large for the state, or beyond float32 precision (standardise the "
                "inputs, lower p0, or use dtype='float64')"
            )
        return (
            f"{where}: {'; '.join(parts)}. The model state is unchanged "
            f"(use on_invalid='skip' to skip such samples)"
        )

    def _learn_many_checked(
        self, X: Any, Y: Any, targets_original: Any = None, **kw: Any
    ) -> np.ndarray:
        """Shared body of ``learn_many``: validate, one kernel call, report."""
        X = self._check_X(X)
        n = X.shape[0]
        Yk = self._targets_many(Y, n)
        out = np.empty(self._output_shape(n), dtype=np.float64)
        bad = self._learn_block(X, Yk, out, **kw)
        if bad >= 0:
            shown_y = (Y if targets_original is None else targets_original)
            y_row = np.asarray(shown_y)[bad] if np.ndim(shown_y) else shown_y
            raise ValueError(
                self._invalid_message(X[bad], y_row, f"row {bad} of the block")
                + f"; rows 0..{bad - 1} were learnt, rows {bad}.. were not"
            )
        return out

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block of samples without learning."""
        X = self._check_X(X)
        out = np.empty(self._output_shape(X.shape[0]), dtype=np.float64)
        self._predict_block(X, out)
        return out

    # ----------------------------------------------------------- contracts
    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        """Small parameter sets used by the contract tests (river convention)."""
        return [{"n_features": 4}]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once: os.umask can only be read by setting it


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


def _remove_stale_temporaries(directory: str, base: str) -> None:
    """Remove ``.<base>.<pid>.edgereg-tmp`` files left by a saver that was killed."""
    prefix, suffix = f".{base}.", ".edgereg-tmp"
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(suffix)):
            continue
        pid_text = name[len(prefix) : -len(suffix)].split(".")[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _pid_alive(int(pid_text)):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def atomic_savez(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an ``.npz`` at ``path`` so a crash never leaves half a file.

    The archive goes to a temporary file in the same directory, is flushed and
    fsync'ed, then renamed over ``path`` (atomic on POSIX): a reader, or a
    process resuming after ``kill -9``, sees the old file or the new one.

    * A ``path`` that is a symbolic link is written through: the file it
      points to is replaced (atomically, beside it) and the link stays.
    * An existing file keeps its permission bits; a new one gets the usual
      ``0666 & ~umask``.
    * The temporary file is named after the target and the writing process
      (``.<name>.<pid>.<random>.edgereg-tmp``); one left by a saver that was
      killed is removed by the next save of the same file.
    """
    import tempfile

    target = os.path.realpath(os.fspath(path))  # through a symbolic link
    directory, base = os.path.split(target)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    _remove_stale_temporaries(directory, base)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.{os.getpid()}.", suffix=".edgereg-tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            if hasattr(os, "fchmod"):  # POSIX (a Windows file has no such bits)
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_npz(path: str, what: str) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` (no pickles); a truncated/foreign file -> StateFileError."""
    import zipfile  # np.load imports it too
    from tokenize import TokenError
    from zlib import error as zlib_error

    try:
        with np.load(path, allow_pickle=False) as npz:
            if not hasattr(npz, "files"):
                raise ValueError("not an .npz archive")
            return {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, RuntimeError,
            NotImplementedError, MemoryError, zlib_error, SyntaxError, TypeError,
            RecursionError, TokenError) as exc:
        # zipfile raises RuntimeError for a flag that reads "encrypted",
        # NotImplementedError for an unknown compression, zlib.error for a
        # damaged deflate stream, MemoryError for a size field gone wild;
        # numpy parses an array's header with ast.literal_eval, then with
        # tokenize for headers written by Python 2: a flipped byte there is a
        # SyntaxError or a tokenize.TokenError (found by CI's hostile stage).
        raise StateFileError(
            f"{path!r} is not a readable {what} (truncated or foreign): {exc}"
        ) from exc


def saved_state_arrays(state: NamedTuple) -> dict[str, np.ndarray]:
    """The arrays a save writes: every learnt field as ``state.<field>``."""
    return {f"state.{k}": np.asarray(v) for k, v in state._asdict().items()}


def copy_state_fields(fresh: NamedTuple, arrays: dict[str, np.ndarray], source: str) -> None:
    """Copy a file's state arrays into a freshly allocated state, checking each.

    Every learnt field must be present with the fresh field's shape and dtype
    and hold no NaN or inf. An unknown field is refused, except a ``work*``
    one: scratch that versions before the learnt/workspace split wrote into
    some files (and pickles), with no meaning between calls. Raises
    ``StateFileError`` naming the field.
    """
    for field, target in fresh._asdict().items():
        if field not in arrays:
            raise StateFileError(f"{source}: state field {field!r} is missing")
        arr = np.asarray(arrays[field])
        if arr.shape != target.shape or arr.dtype != target.dtype:
            expected = f"{target.dtype}{list(target.shape)}"
            raise StateFileError(
                f"{source}: state field {field!r} should be {expected}, "
                f"got {arr.dtype}{list(arr.shape)}"
            )
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise StateFileError(f"{source}: state field {field!r} holds NaN or inf")
        np.copyto(target, arr)
    extra = {k for k in arrays if not k.startswith("work")} - set(fresh._fields)
    if extra:
        raise StateFileError(f"{source}: unexpected state fields {sorted(extra)}")


def ring_record(record: np.ndarray, n: int) -> np.ndarray:
    """The latest min(n, len) entries of a ring written at n % len, oldest first (a copy)."""
    if n <= record.shape[0]:
        return record[:n].copy()
    k = n % record.shape[0]
    return np.concatenate([record[k:], record[:k]])


def aligned_zeros(shape: int | tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    """Zeros starting on a 64-byte boundary: a view of a block 64 bytes larger.

    NumPy promises 16 bytes. DFOP's fused pass at d = 200 ran 35% slower with
    its scratch 16- but not 32-byte aligned, and a bank's members 20% slower
    at d = 50 with theirs 8-byte aligned (docs/design/scripts/alignment_study.py).
    ``.base`` is the whole block (``block_at`` finds a block again).
    """
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.zeros(n + 64 // dtype.itemsize, dtype=dtype)
    skip = (-raw.__array_interface__["data"][0] % 64) // dtype.itemsize
    return raw[skip : skip + n].reshape(shape)


def block_at(view: np.ndarray, shape: int | tuple[int, ...]) -> np.ndarray:
    """The C-contiguous block of ``shape`` that starts where ``view`` starts, in the
    same memory (``aligned_zeros``' blocks are views: their fields' ``.base`` is
    the larger block they sit in)."""
    base = view.base if view.base is not None else view
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
    n = int(np.prod(shape))
    block = base.reshape(-1)[start // base.itemsize :][:n].reshape(shape)
    assert block.__array_interface__["data"][0] == view.__array_interface__["data"][0]
    return block


def symmetric_faults(name: str, P: np.ndarray) -> list[tuple[str, str]]:
    """Faults of a matrix the kernels keep exactly symmetric.

    Not required: positive definiteness. A live model's P can lose it to
    rounding (the next step repairs it, see ``_kernels/guards._admit``), and its
    checkpoint must load; an asymmetric P can only come from outside.
    """
    if not np.array_equal(P, P.T):
        return [(name, "is not exactly symmetric")]
    return []


def index_faults(name: str, value: int, low: int, high: int, what: str) -> list[tuple[str, str]]:
    """[(name, reason)] unless low <= value <= high."""
    if low <= value <= high:
        return []
    return [(name, f"holds {what} = {value}, outside {low}..{high}")]
