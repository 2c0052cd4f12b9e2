"""Rebuild the bundled data files in edgereg/data/ from the original text files.

Usage::

    python tests/build_bundled_data.py [DATA_ROOT]

DATA_ROOT defaults to $EDGEREG_DATA_ROOT, else edgereg's data folder
(``edgereg data fetch elec2 weather debutanizer sru`` puts the original files there).
The script writes ``edgereg/data/<name>.npz`` for every bundled dataset and
``edgereg/data/CITATIONS.md``, checks that decoding each file gives values that
are bit-identical to parsing the original decimal strings with Python's
``float`` (correctly rounded), and prints the sha256 table to paste into
``edgereg/datasets/_bundled.py`` (``_BUNDLED_SHA256``). The output is deterministic: the
zip entries carry a fixed timestamp, so rebuilding gives the same bytes.

Encoding: each column is stored as integer decimal mantissas ``m`` with one
decimal exponent ``k`` per column (``value = m / 10**k``), array ``mantissa`` of
shape ``(n_columns, n)`` in the smallest signed integer dtype that holds it,
``exponent`` (int8) and, for classification, ``labels`` (int8, the original
labels). Regression sets store inputs then targets as columns.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import zipfile
from decimal import Decimal
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA_OUT = REPO / "edgereg" / "data"
def _default_root() -> Path:
    env = os.environ.get("EDGEREG_DATA_ROOT")
    if env:
        return Path(env)
    from edgereg.datasets import get_data_home

    return get_data_home()


# name -> (text file, delimiter or None for whitespace, lines to skip, label file or None)
SOURCES: dict[str, tuple[str, str | None, int, str | None]] = {
    "elec2": ("elec2/elec2_data.dat", None, 0, "elec2/elec2_label.dat"),
    "weather": ("weather/NEweather_data.csv", ",", 0, "weather/NEweather_class.csv"),
    "debutanizer": ("debutanizer/debutanizer_data.txt", None, 0, None),
    "sru": ("sru/SRU_data.txt", None, 1, None),
}


def read_tokens(path: Path, delimiter: str | None, skip: int) -> list[list[str]]:
    """Rows of decimal strings of a text table (blank lines dropped)."""
    lines = path.read_bytes().decode("ascii").splitlines()[skip:]
    rows = []
    for line in lines:
        if not line.strip():
            continue
        toks = line.split(delimiter) if delimiter else line.split()
        rows.append([t.strip() for t in toks])
    width = {len(r) for r in rows}
    if len(width) != 1:
        raise ValueError(f"{path}: ragged rows {sorted(width)}")
    return rows


def reference_values(path: Path, delimiter: str | None, skip: int) -> np.ndarray:
    """Parse a text table with Python ``float`` (correctly rounded): the reference."""
    return np.array(
        [[float(t) for t in r] for r in read_tokens(path, delimiter, skip)], dtype=np.float64
    )


def reference_labels(path: Path) -> np.ndarray:
    return np.array([int(t) for t in path.read_bytes().split()], dtype=np.int64)


def encode_column(tokens: list[str]) -> tuple[np.ndarray, int]:
    """Integer mantissas and a common decimal exponent k such that value = m / 10**k."""
    decs = [Decimal(t) for t in tokens]
    k = max(0, max(-d.as_tuple().exponent for d in decs))
    if k > 22:
        raise ValueError(f"decimal exponent {k} > 22: 10**k is not exact in float64")
    mant = [int(d.scaleb(k)) for d in decs]
    if any(d.scaleb(k) != m for d, m in zip(decs, mant, strict=True)):
        raise ValueError("column is not exactly representable as m / 10**k")
    if max(abs(m) for m in mant) >= 2**53:
        raise ValueError("mantissa too large to be exact in float64")
    if any(d.is_signed() and d == 0 for d in decs):
        raise ValueError("negative zero cannot be encoded as an integer mantissa")
    return np.array(mant, dtype=np.int64), k


def smallest_int(a: np.ndarray) -> np.ndarray:
    for dt in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        if a.min() >= info.min and a.max() <= info.max:
            return a.astype(dt)
    raise AssertionError("unreachable")


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> bytes:
    """A deterministic np.savez_compressed: fixed timestamps, fixed order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for key, arr in arrays.items():
            npy = io.BytesIO()
            np.lib.format.write_array(npy, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy.getvalue(), compresslevel=9)
    data = buf.getvalue()
    path.write_bytes(data)
    return data


def build(name: str, root: Path) -> tuple[bytes, np.ndarray]:
    rel, delim, skip, label_rel = SOURCES[name]
    rows = read_tokens(root / rel, delim, skip)
    cols = list(zip(*rows, strict=True))
    mants, exps = [], []
    for col in cols:
        m, k = encode_column(list(col))
        mants.append(m)
        exps.append(k)
    arrays = {
        "mantissa": smallest_int(np.stack(mants)),
        "exponent": np.array(exps, dtype=np.int8),
    }
    if label_rel is not None:
        arrays["labels"] = reference_labels(root / label_rel).astype(np.int8)
    data = write_npz(DATA_OUT / f"{name}.npz", arrays)
    return data, reference_values(root / rel, delim, skip)


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else _default_root()
    sys.path.insert(0, str(REPO))
    from edgereg import datasets

    DATA_OUT.mkdir(exist_ok=True)
    table = {}
    for name in SOURCES:
        data, ref = build(name, root)
        path = DATA_OUT / f"{name}.npz"
        decoded = datasets._bundled._decode_bundled(data, path)["values"]
        if decoded.shape != ref.shape or not np.array_equal(
            decoded.view(np.int64), ref.view(np.int64)
        ):
            raise SystemExit(f"{name}: decoded values are not bit-identical to the original")
        table[path.name] = hashlib.sha256(data).hexdigest()
        print(f"{path.name}: {len(data):,} bytes, {ref.shape}, bit-identical", file=sys.stderr)
    write_citations(datasets)
    print("_BUNDLED_SHA256: dict[str, str] = {")
    for k, v in table.items():
        print(f'    "{k}": "{v}",')
    print("}")
    return 0


def write_citations(datasets: object) -> None:
    lines = [
        "# Citations for the data bundled with edgereg",
        "",
        "The files here are compressed re-encodings (values bit-identical) of public",
        "research datasets. They belong to their original authors; cite them as below.",
        "`edgereg.datasets.citation(name)` returns the same text. Rebuilt by",
        "`tests/build_bundled_data.py`.",
        "",
    ]
    sources = {
        "elec2": "vlosing/driftDatasets @01d08dec, realWorld/Elec2/elec2_data.dat, elec2_label.dat",
        "weather": "asieriko/REFuzzStream @b52a97a4, datasets/NEweather_data.csv, "
        "NEweather_class.csv",
        "debutanizer": "AnkurP771/Debutanizer-Data-Analysis @4388d7cf, debutanizer_data.txt",
        "sru": "onecoinbuybus/Database_chemoinformatics @1eaa7b94, SRU_data.txt",
    }
    for name in SOURCES:
        lines += [
            f"## {name}",
            "",
            datasets.citation(name),  # type: ignore[attr-defined]
            "",
            f"Copied from: {sources[name]}. No license file in the source repository; "
            "the data is redistributed for research and the original terms are not stated.",
            "",
        ]
    (DATA_OUT / "CITATIONS.md").write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
