"""Input validation shared by every model (the Python layer; kernels trust it).

Each function either returns an array the kernels can take as it is (the
model's dtype, C-contiguous, the expected shape) or raises a ``TypeError`` /
``ValueError`` that says what was expected and what came. Finiteness is *not*
checked here for the per-sample path: the kernels detect non-finite values
themselves (it costs them nothing, see ``_kernels/dfop._dfop_step``) and report a status
code, so that the Python side only pays for it when something is wrong.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float: safely castable to float

ON_INVALID_POLICIES = ("raise", "skip")


def check_dtype(dtype: Any) -> np.dtype:
    """Return the float dtype of a model: float64 (default) or float32."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be 'float64' or 'float32', got {dtype!r}") from exc
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"dtype must be 'float64' or 'float32', got {dt}")
    return dt


def check_on_invalid(value: str) -> str:
    if value not in ON_INVALID_POLICIES:
        raise ValueError(f"on_invalid must be one of {ON_INVALID_POLICIES}, got {value!r}")
    return value


#: The largest integer hyper-parameter: every size, count and seed must fit the
#: kernels' int64 arithmetic with room to spare (2^62 - 1; a size that large
#: is refused by the memory long before).
INT_MAX = 2**62 - 1


def check_int(name: str, value: Any, minimum: int = 1, maximum: int = INT_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value}")
    return int(value)


def check_float(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Check a real hyper-parameter against an interval; open ends exclude the bound."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int such as 10**400
        raise ValueError(f"{name} must be a finite real number, got an integer of "
                         f"{len(str(abs(int(value))))} digits") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    bad = (
        (low is not None and (v < low or (low_open and v == low)))
        or (high is not None and (v > high or (high_open and v == high)))
    )
    if bad:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (
            ")" if high_open or high is None else "]"
        )
        raise ValueError(f"{name} must be in {interval}, got {v:g}")
    return v


def _as_numeric_array(value: Any, what: str, dtype: np.dtype) -> np.ndarray:
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:
            got = type(value).__name__
            raise TypeError(f"{what} must be numeric array-like, got {got}") from exc
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"{what} must hold real numbers (bool, int or float); got dtype {arr.dtype}"
        )
    if type(arr) is np.ndarray and arr.dtype == dtype and arr.flags.carray:
        return arr  # nothing to convert: spare the errstate below (~1 us, Fleet's learn_one)
    if arr.dtype.kind == "f" and arr.dtype.itemsize > np.dtype(dtype).itemsize:
        with np.errstate(over="ignore"):  # beyond float32's range: inf, reported by the model
            return kernel_ready(np.ascontiguousarray(arr, dtype=dtype))
    return kernel_ready(np.ascontiguousarray(arr, dtype=dtype))


def kernel_ready(arr: np.ndarray) -> np.ndarray:
    """``arr`` (C-contiguous), or a copy of it when it is read-only or unaligned.

    numba types a read-only or unaligned array apart from a writeable aligned
    one, so such an input would compile every kernel it reaches a second time
    (30-80 CPU-s per model on a PC, minutes on a Pi) although the kernels never
    write their inputs. Read-only arrays are common: memory maps, pandas'
    copy-on-write ``to_numpy()``, scikit-learn's read-only checks. The copy
    costs one pass over the block (for learn_one, one row: as a conversion of
    dtype does).
    """
    return arr if arr.flags.carray else np.array(arr, order="C")


def _vector(v: Any, length: int, dtype: np.dtype, what: str) -> np.ndarray:
    """``v`` as a C-contiguous 1-D array of ``length`` values of ``dtype``."""
    arr = _as_numeric_array(v, what, dtype)
    if arr.shape != (length,):
        raise ValueError(f"{what} must be a 1-D array of shape ({length},), got shape {arr.shape}")
    return arr


def as_row(x: Any, n_features: int, dtype: np.dtype, what: str = "x") -> np.ndarray:
    """One sample as a C-contiguous 1-D array of ``n_features`` values of ``dtype``."""
    return _vector(x, n_features, dtype, what)


def as_matrix(X: Any, n_features: int, dtype: np.dtype, what: str = "X") -> np.ndarray:
    """A block of samples as a C-contiguous (n, n_features) array of ``dtype``."""
    arr = _as_numeric_array(X, what, dtype)
    if arr.ndim != 2 or arr.shape[1] != n_features:
        raise ValueError(
            f"{what} must be a 2-D array of shape (n_samples, {n_features}), got shape {arr.shape}"
        )
    return arr


def as_targets(y: Any, n_samples: int, dtype: np.dtype, what: str = "y") -> np.ndarray:
    """A block of scalar targets as a C-contiguous 1-D array of length ``n_samples``."""
    return _vector(y, n_samples, dtype, what)


def as_scalar(y: Any, what: str = "y") -> float:
    """One scalar target as a Python float (finiteness is checked by the kernel)."""
    if isinstance(y, float):
        return y
    if isinstance(y, (bool, int, np.integer, np.floating, np.bool_)):
        return float(y)
    arr = np.asarray(y)
    if arr.dtype.kind not in _NUMERIC_KINDS or arr.size != 1:
        raise TypeError(f"{what} must be a real scalar, got {y!r}")
    return float(arr.reshape(()))


def describe_nonfinite(row: np.ndarray, what: str = "x") -> str:
    """Say which entries of a row are NaN or infinite (for error messages)."""
    bad = np.flatnonzero(~np.isfinite(row))
    if bad.size == 0:
        return ""
    shown = ", ".join(f"{what}[{j}]={row[j]}" for j in bad[:5])
    more = f" (and {bad.size - 5} more)" if bad.size > 5 else ""
    return shown + more


#: The one label policy of every classifier: the labels learnt as +1 and as -1
#: (both the {-1, +1} and the {0, 1} coding); any other value is not a label.
POSITIVE_LABELS = (1.0,)
NEGATIVE_LABELS = (0.0, -1.0)
#: How a message says that a value is not a label (after "y=<value> ").
NOT_A_LABEL = "is not a class label (-1/+1, or 0/1)"


def is_label(y: Any) -> Any:
    """Whether y (a number, or elementwise an array) is a label of the policy."""
    return np.isin(y, POSITIVE_LABELS + NEGATIVE_LABELS)


def label_sign(y: Any, what: str = "y") -> float:
    """The one label policy of every classifier: +1 -> 1.0; 0 or -1 -> -1.0.

    Any other number (2, 0.5, NaN) maps to NaN, which every kernel rejects as
    an invalid sample: ``on_invalid`` then decides, alike in ``learn_one`` and
    ``learn_many`` (a classifier must not guess what an unknown label means).
    A y that is not one real number is a ``TypeError`` naming it.
    """
    y = as_scalar(y, what)
    if y in POSITIVE_LABELS:
        return 1.0
    if y in NEGATIVE_LABELS:
        return -1.0
    return math.nan


def label_signs(Y: Any, n: int, what: str = "y") -> np.ndarray:
    """``label_sign`` over a block of n labels, as float64 (unknown labels NaN)."""
    y = np.asarray(Y)
    if y.shape != (n,):
        raise ValueError(f"{what} must be a 1-D array of shape ({n},), got shape {y.shape}")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold real numbers, got dtype {y.dtype}")
    return np.where(np.isin(y, POSITIVE_LABELS), 1.0,
                    np.where(np.isin(y, NEGATIVE_LABELS), -1.0, np.nan))
