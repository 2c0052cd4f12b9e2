"""The four datasets shipped inside the package (``edgereg/data/*.npz``).

Each file holds every column as integer decimal mantissas plus one decimal
exponent per column, decoded as ``mantissa / 10.0**k`` (bit-identical to parsing
the original text, see the package docstring), and is checked against its
sha256 on every load.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ._readers import _map_labels
from ._registry import _SPECS, DataFileError, Dataset, _make

_DATA_DIR = Path(__file__).resolve().parent.parent / "data"

#: sha256 of each bundled file in ``edgereg/data`` (rebuilt by
#: ``tests/build_bundled_data.py``, which prints this table).
_BUNDLED_SHA256: dict[str, str] = {
    "elec2.npz": "5c50946c351daa576297cea9fa454a35a943c53e7ae111d6df41550f7036cb9d",
    "weather.npz": "2bd0bebe8e281b9623235e15bfe090a3eb00bddde89331e81f36a4e4853e98f4",
    "debutanizer.npz": "f75d9deff901fd585dbe84eac2c5f21d21e1ab668f08bc5f6cfaf24f30fcbf50",
    "sru.npz": "ecf2d18d5b4de40dce5885f45370deffea1c36b99860a265b3e353ed610622f3",
}


def _read_verified_bytes(path: Path, expected: str) -> bytes:
    """Read a bundled file whole and check its sha256 (it is small)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"bundled file {path.name} is missing: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise DataFileError(
            f"bundled file {path.name} is corrupted: sha256 {digest} expected {expected} "
            f"(path {path}; reinstall edgereg)"
        )
    return data


def _decode_bundled(data: bytes, path: Path) -> dict[str, np.ndarray]:
    """Decode the arrays of a bundled npz (mantissa/exponent encoding, see module doc)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        mant = arrays["mantissa"]
        expo = arrays["exponent"]
        if mant.ndim != 2 or expo.shape != (mant.shape[0],) or mant.dtype.kind != "i":
            raise ValueError("inconsistent mantissa/exponent arrays")
        if expo.min() < 0 or expo.max() > 22:
            raise ValueError("decimal exponent out of range 0..22")
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, zlib.error) as exc:
        raise DataFileError(f"bundled file {path.name} cannot be read: {exc}") from exc
    scale = np.array([float(10 ** int(k)) for k in expo], dtype=np.float64)
    # (n_cols, n) integers -> (n, n_cols) float64; the division is exact-rounded
    values = (mant.astype(np.float64) / scale[:, None]).T
    arrays["values"] = np.ascontiguousarray(values)
    return arrays


def _load_bundled(name: str, path: Path | None = None, *, verify: bool = True) -> Dataset:
    """Load bundled dataset ``name`` from ``path`` (default: the package copy)."""
    spec = _SPECS[name]
    fname = f"{name}.npz"
    if path is None:
        path = _DATA_DIR / fname
    path = Path(path)
    if verify:
        data = _read_verified_bytes(path, _BUNDLED_SHA256[fname])
    else:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DataFileError(f"bundled file {path.name} is missing: {exc}") from exc
    arrays = _decode_bundled(data, path)
    values = arrays["values"]
    d = spec.n_features
    if spec.task == "classification":
        X = values
        labels = arrays.get("labels")
        if labels is None or labels.shape != (X.shape[0],):
            raise DataFileError(f"bundled file {path.name} has no labels of {X.shape[0]} rows")
        assert spec.label_map is not None
        y = _map_labels(labels.astype(np.int64), spec.label_map, path)
    else:
        X = np.ascontiguousarray(values[:, :d])
        y = np.ascontiguousarray(values[:, d:])
        if y.shape[1] == 1:
            y = y[:, 0].copy()
    if X.shape != (spec.n_samples, d):
        raise DataFileError(
            f"bundled file {path.name} holds X of shape {X.shape}, expected {(spec.n_samples, d)}"
        )
    return _make(spec, X, y, spec.label_map, path)

