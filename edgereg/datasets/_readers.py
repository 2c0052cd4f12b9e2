"""Readers of the original data files under a data root, and the streaming iterators.

Every file read is checked against the sha256 recorded in ``_sources.SOURCES``
(``_SOURCE_SHA256``) once per process; every parse error names the file
(:class:`DataFileError`).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._registry import _SPECS, DataFileError, _check_positive_int, _Spec
from ._sources import SOURCES

#: sha256 of every original file (the table of ``_sources``: repository, commit,
#: path, size and sha256 of each).
_SOURCE_SHA256: dict[str, str] = {rel: f.sha256 for rel, f in SOURCES.items()}


_HASH_CACHE: dict[tuple[str, int, int], str] = {}


def _sha256_file(path: Path) -> str:
    """sha256 of a file, streamed in 1 MiB blocks, cached by (path, size, mtime)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise DataFileError(f"data file not found: {path} ({exc})") from exc
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    cached = _HASH_CACHE.get(key)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    _HASH_CACHE[key] = digest
    return digest


def _verify_source(path: Path, rel: str) -> None:
    expected = _SOURCE_SHA256[rel]
    digest = _sha256_file(path)
    if digest != expected:
        raise DataFileError(
            f"data file {path} is corrupted or not the recorded version: sha256 {digest}, "
            f"expected {expected} (see SOURCE.md; pass verify=False to read it anyway)"
        )


def _map_labels(raw: np.ndarray, label_map: dict[Any, float], path: Path) -> np.ndarray:
    """Map original labels through an explicit table; unknown labels are an error."""
    out = np.empty(raw.shape[0], dtype=np.float64)
    found = np.zeros(raw.shape[0], dtype=bool)
    for orig, mapped in label_map.items():
        hit = raw == orig
        out[hit] = mapped
        found |= hit
    if not found.all():
        bad = raw[~found]
        raise DataFileError(
            f"{path}: unexpected label {bad[0]!r} ({bad.shape[0]} rows); expected one of "
            f"{sorted(label_map, key=str)}"
        )
    return out


def _parse_fail(path: Path, exc: BaseException) -> DataFileError:
    return DataFileError(f"cannot parse {path} (truncated or corrupt?): {exc}")


def _loadtxt(path: Path, **kwargs: Any) -> np.ndarray:
    try:
        return np.loadtxt(path, dtype=np.float64, ndmin=2, comments=None, **kwargs)
    except OSError as exc:
        raise DataFileError(f"data file not found: {path} ({exc})") from exc
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise _parse_fail(path, exc) from exc


def _int_labels(values: np.ndarray, path: Path) -> np.ndarray:
    lab = np.rint(values).astype(np.int64)
    if not np.array_equal(lab, values):
        raise DataFileError(f"{path}: labels are not integers")
    return lab


# ------------------------------------------------------------------------ readers
def _read_text_with_labels(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    X = _loadtxt(paths[0], delimiter=spec.options["delimiter"])
    lab = _loadtxt(paths[1])
    if lab.shape[1] != 1:
        raise DataFileError(f"{paths[1]}: expected one label per line, got {lab.shape[1]}")
    return X, _int_labels(lab[:, 0], paths[1])


def _read_text_last_label(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    A = _loadtxt(paths[0], delimiter=spec.options["delimiter"])
    return A[:, :-1], _int_labels(A[:, -1], paths[0])


def _read_text_regression(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    A = _loadtxt(paths[0], skiprows=spec.options["skiprows"])
    m = spec.options["n_targets"]
    X, y = A[:, :-m], A[:, -m:]
    return X, (y[:, 0] if m == 1 else y)


def _read_csv_header(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    A = _loadtxt(paths[0], delimiter=",", skiprows=1)
    return A[:, :-1], _int_labels(A[:, -1], paths[0])


def _read_arff(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    from scipy.io import arff

    try:
        data, meta = arff.loadarff(paths[0])
    except (ValueError, IndexError, arff.ArffError, UnicodeDecodeError) as exc:
        raise _parse_fail(paths[0], exc) from exc
    names = list(meta.names())
    feats, target = names[:-1], names[-1]
    X = np.column_stack([np.asarray(data[c], dtype=np.float64) for c in feats])
    # nominal labels come back as bytes: decode to the str keys of the label map
    y = np.array([b.decode("ascii") for b in data[target]], dtype=object)
    return X, y


def _read_mat(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    from scipy.io import loadmat

    xkey, ykey = spec.options["X"], spec.options["y"]
    keys = [xkey] + ([ykey] if ykey else [])
    try:
        mat = loadmat(paths[0], variable_names=keys)
        A = np.asarray(mat[xkey])
        if ykey is None:  # labels are the last column
            X, lab = A[:, :-1], A[:, -1]
        else:
            X, lab = A, np.asarray(mat[ykey]).ravel()
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError) as exc:
        raise _parse_fail(paths[0], exc) from exc
    return X.astype(np.float64), lab.astype(np.int64)


def _read_sarcos(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    from scipy.io import loadmat

    try:
        A = np.asarray(loadmat(paths[0], variable_names=["sarcos_inv_test"])["sarcos_inv_test"])
        if A.ndim != 2 or A.shape[1] != 28:
            raise ValueError(f"expected 28 columns, got shape {A.shape}")
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise _parse_fail(paths[0], exc) from exc
    A = A.astype(np.float64)
    return A[:, :21], np.ascontiguousarray(A[:, 21:])


def _read_air_quality(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    # ";"-separated, decimal ",", CRLF, -200 = missing; this copy has stray trailing
    # commas after the 15th field and ~114 empty ";;;" rows at the end: keep fields
    # 0..14 and drop rows whose 15 fields are all empty (as pandas' dropna(how="all")).
    path = paths[0]
    try:
        lines = path.read_bytes().decode("ascii").splitlines()
    except UnicodeDecodeError as exc:
        raise _parse_fail(path, exc) from exc
    header = lines[0].split(";")[:15] if lines else []
    if len(header) != 15 or header[2] != "CO(GT)":
        raise DataFileError(f"{path}: unexpected header {lines[0][:80] if lines else ''!r}")
    rows: list[list[float]] = []
    for i, line in enumerate(lines[1:], start=2):
        fields = line.split(";")[:15]
        if all(f.strip() == "" for f in fields):
            continue
        if len(fields) < 15:
            raise DataFileError(f"{path}, line {i}: {len(fields)} fields, expected 15")
        try:
            rows.append([float(f.replace(",", ".")) for f in fields[2:]])
        except ValueError as exc:
            raise DataFileError(f"{path}, line {i}: {exc}") from exc
    A = np.array(rows, dtype=np.float64).reshape(-1, 13)
    A[A == -200.0] = np.nan
    # columns after Date, Time: CO(GT) S1 NMHC(GT) C6H6(GT) S2 NOx(GT) S3 NO2(GT) S4 S5 T RH AH
    x_cols = [1, 4, 6, 8, 9, 10, 11, 12]
    y_cols = [0, 2, 3, 5, 7]
    return np.ascontiguousarray(A[:, x_cols]), np.ascontiguousarray(A[:, y_cols])


def _read_libsvm(spec: _Spec, paths: list[Path]) -> tuple[sp.csr_matrix, np.ndarray]:
    try:
        with open(paths[0], "rb") as fh:
            lines = fh.readlines()
    except OSError as exc:
        raise DataFileError(f"cannot read {paths[0]}: {exc}") from exc
    X, y = _parse_libsvm(lines, spec.n_features, paths[0], 1)
    return X, _int_labels(y, paths[0])


def _read_usps(spec: _Spec, paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    # "10 256" header, then label + 256 values per row (rows wrap over lines), "-1" last
    path = paths[0]
    tokens = path.read_bytes().split()
    try:
        if len(tokens) < 3 or int(tokens[0]) != 10 or int(tokens[1]) != 256:
            raise ValueError("header is not '10 256'")
        if tokens[-1] != b"-1":
            raise ValueError("missing the terminating '-1'")
        body = tokens[2:-1]
        if len(body) % 257:
            raise ValueError(f"{len(body)} values is not a whole number of 257-value rows")
        A = np.array([float(t) for t in body], dtype=np.float64).reshape(-1, 257)
    except ValueError as exc:
        raise _parse_fail(path, exc) from exc
    return np.ascontiguousarray(A[:, 1:]), _int_labels(A[:, 0], path)


def _read_spam(spec: _Spec, paths: list[Path]) -> tuple[sp.csr_matrix, np.ndarray]:
    root = paths[0].parent.parent
    blocks = list(iter_spam_corpus(root, 2048, verify=False))  # verified by the caller
    X = sp.vstack([b[0] for b in blocks], format="csr")
    y = np.concatenate([b[1] for b in blocks])
    inv = {v: k for k, v in (spec.label_map or {}).items()}
    return X, np.array([inv[v] for v in y], dtype=np.int64)


_READERS: dict[str, Callable[[_Spec, list[Path]], tuple[Any, np.ndarray]]] = {
    "text_with_labels": _read_text_with_labels,
    "text_last_label": _read_text_last_label,
    "text_regression": _read_text_regression,
    "csv_header": _read_csv_header,
    "arff": _read_arff,
    "mat": _read_mat,
    "sarcos": _read_sarcos,
    "air_quality": _read_air_quality,
    "libsvm": _read_libsvm,
    "usps": _read_usps,
    "spam": _read_spam,
}


def _parse_libsvm(
    lines: list[bytes], n_features: int, path: Path, first_line: int
) -> tuple[sp.csr_matrix, np.ndarray]:
    labels: list[float] = []
    indptr = [0]
    indices: list[int] = []
    data: list[float] = []
    for off, raw in enumerate(lines):
        line = raw.split(b"#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        try:
            labels.append(float(toks[0]))
            for tok in toks[1:]:
                if tok.startswith(b"qid:"):
                    continue
                i, _, v = tok.partition(b":")
                j = int(i)
                if not _ or not 1 <= j <= n_features:
                    raise ValueError(
                        f"bad token {tok.decode(errors='replace')!r} (indices are 1..{n_features})"
                    )
                indices.append(j - 1)
                data.append(float(v))
        except ValueError as exc:
            raise DataFileError(f"{path}, line {first_line + off}: {exc}") from exc
        indptr.append(len(indices))
    X = sp.csr_matrix(
        (
            np.array(data, dtype=np.float64),
            np.array(indices, dtype=np.int32),
            np.array(indptr, dtype=np.int64),
        ),
        shape=(len(labels), n_features),
    )
    X.sum_duplicates()  # also sorts the indices
    return X, np.array(labels, dtype=np.float64)


def _iter_lines(stream: Any, block: int = 1 << 22) -> Iterator[bytes]:
    """Split a binary stream into lines (without the newline), one block in memory."""
    rest = b""
    while True:
        chunk = stream.read(block)
        if not chunk:
            break
        buf = rest + chunk
        parts = buf.split(b"\n")
        rest = parts.pop()
        yield from parts
    if rest.strip():
        yield rest


def _dense01_nonzeros(line: bytes, n_features: int, path: Path, lineno: int) -> np.ndarray:
    """Column indices of the 1s of a line of ``n_features`` space-separated 0/1 values."""
    if line.endswith(b"\r"):
        line = line[:-1]
    b = np.frombuffer(line, dtype=np.uint8)
    if b.shape[0] == 2 * n_features - 1 or b.shape[0] == 2 * n_features:
        digits = b[0::2][:n_features]
        seps = b[1::2]
        # fast path: one char per value, one space between (trailing space allowed)
        if (seps == 32).all() and ((digits | 1) == 49).all():
            return np.flatnonzero(digits == 49).astype(np.int32)
    toks = line.split()
    if len(toks) != n_features:
        raise DataFileError(
            f"{path}: spam/spam.data line {lineno} has {len(toks)} values, expected "
            f"{n_features} (truncated?)"
        )
    try:
        vals = np.array([float(t) for t in toks])
    except ValueError as exc:
        raise DataFileError(f"{path}: spam/spam.data line {lineno}: {exc}") from exc
    if not np.isin(vals, (0.0, 1.0)).all():
        raise DataFileError(f"{path}: spam/spam.data line {lineno} holds values other than 0/1")
    return np.flatnonzero(vals).astype(np.int32)


def _csr_from_cols(cols: list[np.ndarray], indptr: list[int], n_features: int) -> sp.csr_matrix:
    ind = np.concatenate(cols) if cols else np.empty(0, np.int32)
    return sp.csr_matrix(
        (np.ones(ind.shape[0], dtype=np.float64), ind, np.array(indptr, dtype=np.int64)),
        shape=(len(cols), n_features),
    )



def iter_libsvm(
    path: str | os.PathLike[str],
    n_features: int,
    chunk_size: int = 4096,
) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """Stream a LIBSVM/svmlight text file as CSR chunks, never holding it whole.

    Parameters
    ----------
    path : path-like
        Text file with lines ``label idx:val idx:val ...`` (1-based indices;
        ``#`` comments and ``qid:`` tokens are ignored).
    n_features : int
        Number of columns of every chunk (indices must be in ``1..n_features``).
    chunk_size : int, default 4096
        Rows per chunk (the last chunk may be shorter).

    Yields
    ------
    X_chunk : scipy.sparse.csr_matrix
        float64, shape ``(k, n_features)``.
    y_chunk : numpy.ndarray
        float64 labels exactly as written in the file (no mapping).

    Raises
    ------
    DataFileError
        A malformed line (the message gives file and line number).
    """
    n_features = _check_positive_int("n_features", n_features)
    chunk_size = _check_positive_int("chunk_size", chunk_size)
    path = Path(path)
    try:
        fh = open(path, "rb")  # closed in the finally below
    except OSError as exc:
        raise DataFileError(f"cannot open {path}: {exc}") from exc
    try:
        buf: list[bytes] = []
        first_line = 1
        lineno = 0
        for raw in fh:
            lineno += 1
            buf.append(raw)
            if len(buf) == chunk_size:
                yield _parse_libsvm(buf, n_features, path, first_line)
                buf = []
                first_line = lineno + 1
        if buf:
            chunk = _parse_libsvm(buf, n_features, path, first_line)
            if chunk[1].shape[0]:
                yield chunk
    finally:
        fh.close()


def iter_spam_corpus(
    root: str | os.PathLike[str],
    chunk_size: int = 1024,
    *,
    verify: bool = True,
) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """Stream the spam corpus from ``root/spam_corpus/spam.zip`` as CSR chunks.

    The archive holds ``spam/spam.data`` (9,324 lines of 39,916 space-separated
    0/1 values, 744 MB uncompressed) and ``spam/spam.labels``. The data member is
    decompressed as a stream and each line is turned into its non-zero column
    indices at once, so memory stays at one chunk (about 156 non-zeros a row).

    Parameters
    ----------
    root : path-like
        Directory holding ``spam_corpus/spam.zip``.
    chunk_size : int, default 1024
        Rows per chunk.
    verify : bool, default True
        Check the archive's sha256 first (once per process).

    Yields
    ------
    X_chunk : scipy.sparse.csr_matrix
        float64, shape ``(k, 39916)``.
    y_chunk : numpy.ndarray
        Labels mapped 0 (legitimate) -> -1.0, 1 (spam) -> +1.0.

    Raises
    ------
    DataFileError
        Missing/corrupted archive, a line of the wrong length or a value other than
        0/1, or a row count that differs from the label count.
    """
    chunk_size = _check_positive_int("chunk_size", chunk_size)
    spec = _SPECS["spam_corpus"]
    path = Path(root) / spec.directory / spec.files[0]
    if verify:
        _verify_source(path, f"{spec.directory}/{spec.files[0]}")
    elif not path.is_file():
        raise DataFileError(f"data file not found: {path}")
    n_features = spec.n_features
    label_map = spec.label_map
    assert label_map is not None
    try:
        with zipfile.ZipFile(path) as zf:
            raw_labels = zf.read("spam/spam.labels").split()
            try:
                labels = np.array([label_map[int(t)] for t in raw_labels], dtype=np.float64)
            except (KeyError, ValueError) as exc:
                raise DataFileError(
                    f"{path}: spam/spam.labels holds a label other than 0/1 ({exc})"
                ) from None
            with zf.open("spam/spam.data") as member:
                row = 0
                indptr = [0]
                cols: list[np.ndarray] = []
                for line in _iter_lines(member):
                    if row >= labels.shape[0]:
                        raise DataFileError(
                            f"{path}: spam/spam.data has more rows than the "
                            f"{labels.shape[0]} labels in spam/spam.labels"
                        )
                    nz = _dense01_nonzeros(line, n_features, path, row + 1)
                    cols.append(nz)
                    indptr.append(indptr[-1] + nz.shape[0])
                    row += 1
                    if len(cols) == chunk_size:
                        yield (
                            _csr_from_cols(cols, indptr, n_features),
                            labels[row - len(cols) : row],
                        )
                        cols, indptr = [], [0]
                if cols:
                    yield _csr_from_cols(cols, indptr, n_features), labels[row - len(cols) : row]
                if row != labels.shape[0]:
                    raise DataFileError(
                        f"{path}: spam/spam.data has {row} rows but spam/spam.labels has "
                        f"{labels.shape[0]} labels (truncated archive?)"
                    )
    except (zipfile.BadZipFile, zlib.error, EOFError, KeyError) as exc:
        raise DataFileError(f"{path} is not a readable spam corpus archive: {exc}") from exc

