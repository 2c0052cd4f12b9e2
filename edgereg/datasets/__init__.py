"""Real data streams: four small ones bundled, the rest read from a data directory.

Bundled (``load(name)`` works offline, no ``root``): ``elec2``, ``weather``,
``debutanizer`` and ``sru``. They ship in ``edgereg/data/`` as compressed
``.npz`` files whose values are **bit-identical** to parsing the original text
files as float64: every column is stored as integer decimal mantissas plus one
decimal exponent ``k`` per column, and decoded as ``mantissa / 10.0**k``. IEEE
division is correctly rounded and both operands are exact (``|m| < 2**53``,
``k <= 22``), so the quotient is the double nearest the decimal in the file,
which is exactly what a correct float parser returns (``tests/
build_bundled_data.py`` rebuilds the files and checks this column by column).
Each bundled file's sha256 is checked on every load.

Every other dataset is downloaded once from its public source by
:func:`fetch` (or ``edgereg data fetch NAME``): the file at its recorded
commit, its sha256 checked, kept in the user's data folder
(:func:`get_data_home`; ``$EDGEREG_DATA`` moves it), where ``load(name)``
then finds it. ``root`` reads a directory laid out the same way
(``root/<dataset dir>/<files>``) instead. Files are checked against the sha256
recorded for them (``_sources.py``: repository, commit, path, size, sha256)
once per process; ``verify=False`` skips it.

Label conventions (explicit maps, never inferred from the data):

* binary classification: ``y`` in {-1.0, +1.0}; the table in :func:`load` says
  which original label is +1 (rule: the larger original label, i.e. the
  "event" class: DOWN, rain, spam, interesting, class 2, ...);
* multiclass: integer class ids as float (``usps`` digits 0-9, ``powersupply``
  hours 0-23); ``binarize=True`` maps them to {-1, +1} with a documented rule;
* regression: float64 targets, 1-D for one target, ``(n, m)`` for several.

Dataset names are listed by :func:`list_datasets`; :func:`citation` returns the
reference to cite for each.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ._bundled import _load_bundled
from ._fetch import dataset_files, fetch, get_data_home, is_fetched, source_url
from ._readers import (
    _READERS,
    _int_labels,
    _map_labels,
    _parse_fail,
    _verify_source,
    iter_libsvm,
    iter_spam_corpus,
)
from ._registry import (
    BUNDLED,
    DataFileError,
    Dataset,
    _check_positive_int,
    _doc_table,
    _make,
    _Spec,
    _spec,
    _split_file,
    citation,
    list_datasets,
)

__all__ = [
    "BUNDLED",
    "DataFileError",
    "Dataset",
    "citation",
    "dataset_files",
    "fetch",
    "get_data_home",
    "is_fetched",
    "iter_dataset",
    "iter_libsvm",
    "iter_spam_corpus",
    "list_datasets",
    "load",
    "load_debutanizer",
    "load_elec2",
    "load_sru",
    "load_weather",
    "source_url",
]


def load(
    name: str,
    root: str | os.PathLike[str] | None = None,
    *,
    verify: bool = True,
    split: str = "train",
    variant: int | None = None,
    binarize: bool | Collection[int] = False,
) -> Dataset:
    """Load a dataset as a :class:`Dataset` (rows in stream order).

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets`; ``"hyperplane"`` with ``variant=1..9``
        is the same as ``"hyperplane1".."hyperplane9"``.
    root : path-like, optional
        Directory laid out as ``root/<dir>/<files>``. By default the bundled
        copy (:data:`BUNDLED`), else the data folder :func:`fetch` downloads
        into (:func:`get_data_home`). For a bundled name it makes the loader
        parse the original files instead of the bundled copy (the values are
        identical bit for bit).
    verify : bool, default True
        Check the sha256 of every file read (bundled files: on every load; files
        under ``root``: once per process and file, cached by path, size and mtime).
    split : {"train", "test"}
        ``"test"`` is only available for ``a9a`` (the file ``a9a.t``).
    variant : int, optional
        Hyperplane stream 1..9 when ``name == "hyperplane"``.
    binarize : bool or collection of int, default False
        Multiclass sets only (``usps``, ``powersupply``): ``True`` maps to {-1, +1}
        with the dataset's documented rule; a collection gives the class ids that
        map to +1 (all others -1).

    Returns
    -------
    Dataset

    Raises
    ------
    KeyError
        Unknown name.
    ValueError
        A non-bundled set neither fetched nor given a ``root`` (the message says
        how to fetch it), bad ``split``/``variant``/``binarize``.
    DataFileError
        A file is missing, its sha256 differs from the recorded one, or it is
        truncated / cannot be parsed.

    Notes
    -----
    The datasets, their label maps and the references to cite:

    """
    spec = _spec(name, variant)
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    if split == "test" and "test" not in spec.options:
        raise ValueError(f"dataset {spec.name!r} has no test split")
    if binarize is not False and spec.task != "multiclass":
        raise ValueError(
            f"binarize applies to the multiclass datasets (usps, powersupply), not {spec.name!r}"
        )
    if root is None:
        if spec.name in BUNDLED:
            return _load_bundled(spec.name, verify=verify)
        if not is_fetched(spec.name, variant):
            raise ValueError(
                f"dataset {spec.name!r} is not bundled with edgereg and not downloaded yet: "
                f"run edgereg.datasets.fetch({spec.name!r}) or `edgereg data fetch "
                f"{spec.name}` (it downloads once into {get_data_home()}), or pass "
                f"root=<directory holding {spec.directory}/>. Bundled: {BUNDLED}"
            )
        root = get_data_home()
    return _load_root(spec, Path(root), verify=verify, split=split, binarize=binarize)


def load_elec2(*, verify: bool = True) -> Dataset:
    """Load the bundled Electricity (Elec2) stream: 45,312 x 8, labels in {-1, +1}.

    Labels: 0 = UP -> -1.0 (19,237 rows), 1 = DOWN -> +1.0 (26,075 rows).

    Cite: M. Harries, "SPLICE-2 Comparative Evaluation: Electricity Pricing", Technical
    Report UNSW-CSE-TR-9905, University of New South Wales, 1999; normalised version
    from MOA (Bifet et al., JMLR 11, 2010).
    """
    return load("elec2", verify=verify)


def load_weather(*, verify: bool = True) -> Dataset:
    """Load the bundled NOAA Weather stream: 18,159 x 8, labels in {-1, +1}.

    Labels: 1 = no rain -> -1.0 (12,461 rows), 2 = rain -> +1.0 (5,698 rows).

    Cite: R. Elwell, R. Polikar, "Incremental Learning of Concept Drift in
    Nonstationary Environments", IEEE Trans. Neural Networks 22(10):1517-1531, 2011.
    """
    return load("weather", verify=verify)


def load_debutanizer(*, verify: bool = True) -> Dataset:
    """Load the bundled Debutanizer soft-sensor series: 2,394 x 7 inputs, 1-D target.

    Cite: L. Fortuna, S. Graziani, A. Rizzo, M. G. Xibilia, "Soft Sensors for
    Monitoring and Control of Industrial Processes", Springer, 2007.
    """
    return load("debutanizer", verify=verify)


def load_sru(*, verify: bool = True) -> Dataset:
    """Load the bundled Sulfur Recovery Unit series: 10,081 x 5 inputs, targets (n, 2).

    Cite: L. Fortuna, A. Rizzo, M. Sinatra, M. G. Xibilia, "Soft analyzers for a
    sulfur recovery unit", Control Engineering Practice 11(12):1491-1500, 2003.
    """
    return load("sru", verify=verify)


def iter_dataset(
    name: str,
    root: str | os.PathLike[str] | None = None,
    chunk_size: int = 4096,
    **kwargs: Any,
) -> Iterator[tuple[Any, np.ndarray]]:
    """Yield ``(X_chunk, y_chunk)`` blocks of a dataset in stream order.

    The sparse LIBSVM sets and the spam corpus are streamed from disk (never held
    whole); every other dataset is loaded with :func:`load` and sliced (the chunks
    are views). Labels are mapped exactly as by :func:`load`.

    Parameters
    ----------
    name, root
        As in :func:`load` (a fetched dataset is read from the data folder).
    chunk_size : int, default 4096
        Rows per chunk.
    **kwargs
        ``verify``, ``split``, ``variant``, ``binarize`` as in :func:`load`.

    Yields
    ------
    (X_chunk, y_chunk)
    """
    chunk_size = _check_positive_int("chunk_size", chunk_size)
    spec = _spec(name, kwargs.get("variant"))
    if root is None and spec.name not in BUNDLED and is_fetched(spec.name, kwargs.get("variant")):
        root = get_data_home()  # what fetch downloaded (streamed from there too)
    verify = kwargs.get("verify", True)
    if spec.name == "spam_corpus" and root is not None:
        yield from iter_spam_corpus(root, chunk_size, verify=verify)
        return
    if spec.reader == "libsvm" and root is not None:
        split = kwargs.get("split", "train")
        fname, _n = _split_file(spec, split)
        rel = f"{spec.directory}/{fname}"
        path = Path(root) / rel
        if verify:
            _verify_source(path, rel)
        assert spec.label_map is not None
        for Xc, yc in iter_libsvm(path, spec.n_features, chunk_size):
            yield Xc, _map_labels(_int_labels(yc, path), spec.label_map, path)
        return
    ds = load(name, root, **kwargs)
    for start in range(0, ds.y.shape[0], chunk_size):
        yield ds.X[start : start + chunk_size], ds.y[start : start + chunk_size]



def _load_root(
    spec: _Spec, root: Path, *, verify: bool, split: str, binarize: bool | Collection[int]
) -> Dataset:
    if not root.is_dir():
        raise DataFileError(f"data root {root} is not a directory")
    fname, n_expected = _split_file(spec, split)
    files = (fname,) + spec.files[1:]
    paths = [root / spec.directory / f for f in files]
    for p, f in zip(paths, files, strict=True):
        if not p.is_file():
            raise DataFileError(f"data file not found: {p} (dataset {spec.name!r})")
        if verify:
            _verify_source(p, f"{spec.directory}/{f}")
    reader: Callable[[_Spec, list[Path]], tuple[Any, np.ndarray]] = _READERS[spec.reader]
    try:
        X, y_raw = reader(spec, paths)
    except DataFileError:
        raise
    except (OSError, ValueError, IndexError, KeyError, TypeError, EOFError, zlib.error) as exc:
        # safety net: whatever a parser raises on a damaged file names the file
        raise _parse_fail(paths[0], exc) from exc
    n = X.shape[0]
    name = spec.name if split == "train" else fname
    if verify and (n, X.shape[1]) != (n_expected, spec.n_features):
        raise DataFileError(
            f"{paths[0]}: parsed shape {(n, X.shape[1])}, expected {(n_expected, spec.n_features)}"
        )
    if y_raw.shape[0] != n:
        raise DataFileError(
            f"{paths[-1]}: {y_raw.shape[0]} targets for {n} rows of {paths[0]} (truncated?)"
        )
    task = spec.task
    label_map = spec.label_map
    if task in ("regression", "multioutput"):
        y = y_raw
        label_map = None
    else:
        assert spec.label_map is not None
        y = _map_labels(y_raw, spec.label_map, paths[0])
        if binarize is not False:
            y, label_map = _binarize(spec, y, binarize)
            task = "classification"
    return _make(spec, X, y, label_map, paths[0], name=name, task=task)


def _binarize(
    spec: _Spec, y: np.ndarray, binarize: bool | Collection[int]
) -> tuple[np.ndarray, dict[Any, float]]:
    assert spec.label_map is not None
    if binarize is True:
        positive = set(spec.default_positive)
    elif isinstance(binarize, Iterable) and not isinstance(binarize, (str, bytes)):
        positive = {int(c) for c in binarize}
        n_classes = len(spec.label_map)
        if not positive or not positive <= set(range(n_classes)):
            raise ValueError(
                f"binarize must name class ids in 0..{n_classes - 1} mapped to +1, "
                f"got {sorted(positive)}"
            )
    else:
        raise ValueError(f"binarize must be a bool or a collection of class ids, got {binarize!r}")
    pos = np.isin(y, np.array(sorted(positive), dtype=np.float64))
    out = np.where(pos, 1.0, -1.0)
    new_map = {
        orig: (1.0 if int(cid) in positive else -1.0) for orig, cid in spec.label_map.items()
    }
    return out, new_map





if load.__doc__ is not None:
    load.__doc__ = load.__doc__.rstrip(" ") + _doc_table()  # the table at the indent of the text

