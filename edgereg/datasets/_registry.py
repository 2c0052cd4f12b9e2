"""The registry of datasets: what each is, its files, labels and citation.

One ``_Spec`` per dataset (files relative to ``root/<directory>``, shape,
task, the explicit label map, the name of the reader in ``_readers``; the
citations are ``_citations``), and the lookups shared by the loaders
(:func:`list_datasets`, :func:`citation`, ``_spec``, ``_make``). No file is
read here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._citations import _CITATIONS

#: Names of the datasets shipped inside the package (``load(name)`` with no root).
BUNDLED: tuple[str, ...] = ("elec2", "weather", "debutanizer", "sru")

_TASKS = ("classification", "regression", "multioutput", "multiclass")


class DataFileError(ValueError):
    """A data file is missing, corrupted (sha256 mismatch), truncated or unparsable."""


class Dataset(NamedTuple):
    """A loaded dataset, rows in stream (time) order.

    Attributes
    ----------
    X : numpy.ndarray or scipy.sparse.csr_matrix
        Inputs, float64, shape ``(n, d)``; C-contiguous when dense, CSR (sorted
        indices, int32/int64 indices) for the sparse sets (a9a, w8a, spam_corpus).
    y : numpy.ndarray
        float64 targets: shape ``(n,)`` for one target, ``(n, m)`` for several.
        Binary labels are in {-1.0, +1.0}; multiclass ids are ``0.0 .. K-1``.
    task : str
        "classification" (binary), "multiclass", "regression" or "multioutput".
    name : str
        Dataset name (``"hyperplane3"``, ``"a9a.t"`` for the a9a test split).
    feature_names : list of str or None
    target_names : list of str
    citation : str
        What to cite when publishing results on this data.
    label_map : dict or None
        Original label (as written in the file: int, or str for ARFF nominals)
        -> value in ``y``. None for regression.
    source : str
        Path of the file read (the bundled ``.npz`` or the original data file).
    """

    X: Any
    y: np.ndarray
    task: str
    name: str
    feature_names: list[str] | None
    target_names: list[str]
    citation: str
    label_map: dict[Any, float] | None
    source: str


# ------------------------------------------------------------------ specifications
@dataclass(frozen=True)
class _Spec:
    name: str
    directory: str
    files: tuple[str, ...]  # relative to root/<directory>; the first one is "source"
    task: str
    n_samples: int
    n_features: int
    reader: str  # name of a _read_* function below
    cite_key: str
    description: str
    feature_names: tuple[str, ...] | None = None
    target_names: tuple[str, ...] = ("class",)
    # binary: original label -> +-1; multiclass: original label -> class id
    label_map: dict[Any, float] | None = None
    binarize_rule: str = ""  # multiclass only: how binarize=True maps the ids
    default_positive: tuple[int, ...] = ()  # multiclass only: ids mapped to +1
    options: dict[str, Any] = field(default_factory=dict)


def _pm(negative: Any, positive: Any) -> dict[Any, float]:
    return {negative: -1.0, positive: 1.0}


_SOUZA_ROWS = {
    "1CDT": 16_000,
    "2CDT": 16_000,
    "1CHT": 16_000,
    "2CHT": 16_000,
    "1CSurr": 55_283,
    "UG_2C_2D": 100_000,
    "MG_2C_2D": 200_000,
    "GEARS_2C_2D": 200_000,
}
_HYPERPLANE_PARAMS = {
    1: (2, 0.1),
    2: (2, 0.5),
    3: (2, 1.0),
    4: (5, 0.1),
    5: (5, 0.5),
    6: (5, 1.0),
    7: (8, 0.1),
    8: (8, 0.5),
    9: (8, 1.0),
}

_SPECS: dict[str, _Spec] = {}


def _add(spec: _Spec) -> None:
    _SPECS[spec.name] = spec


_add(
    _Spec(
        name="elec2",
        directory="elec2",
        files=("elec2_data.dat", "elec2_label.dat"),
        task="classification",
        n_samples=45_312,
        n_features=8,
        reader="text_with_labels",
        cite_key="elec2",
        description="Electricity (Elec2, normalised MOA version), NSW market every 30 min, "
        "1996-1998. Label: price relative to the last 24 h moving average, 0 = UP, "
        "1 = DOWN. Many papers drop `date` and `nswprice` (columns 0 and 3).",
        feature_names=(
            "date",
            "day",
            "period",
            "nswprice",
            "nswdemand",
            "vicprice",
            "vicdemand",
            "transfer",
        ),  # fmt: skip
        target_names=("DOWN",),
        label_map=_pm(0, 1),  # 0 = UP -> -1, 1 = DOWN -> +1
        options={"delimiter": None},
    )
)
_add(
    _Spec(
        name="weather",
        directory="weather",
        files=("NEweather_data.csv", "NEweather_class.csv"),
        task="classification",
        n_samples=18_159,
        n_features=8,
        reader="text_with_labels",
        cite_key="weather",
        description="NOAA weather, Offutt AFB (Nebraska) 1949-1999, daily; 1 = no rain, 2 = rain.",
        feature_names=(
            "temperature",
            "dew_point",
            "sea_level_pressure",
            "visibility",
            "avg_wind_speed",
            "max_sustained_wind_speed",
            "max_temperature",
            "min_temperature",
        ),  # fmt: skip
        target_names=("rain",),
        label_map=_pm(1, 2),  # 1 = no rain -> -1, 2 = rain -> +1
        options={"delimiter": ","},
    )
)
_add(
    _Spec(
        name="powersupply",
        directory="powersupply",
        files=("powersupply.arff",),
        task="multiclass",
        n_samples=29_928,
        n_features=2,
        reader="arff",
        cite_key="powersupply",
        description="Italian power supply, hourly; class = hour of day (24 classes).",
        feature_names=("attribute0", "attribute1"),
        target_names=("hour",),
        label_map={str(h): float(h) for h in range(24)},  # ARFF nominal '0'..'23'
        binarize_rule="hour >= 12 -> +1, hour < 12 -> -1",
        default_positive=tuple(range(12, 24)),
    )
)
_add(
    _Spec(
        name="sea",
        directory="sea",
        files=("SEA_training_data.csv", "SEA_training_class.csv"),
        task="classification",
        n_samples=50_000,
        n_features=3,
        reader="text_with_labels",
        cite_key="sea",
        description="SEA concepts: 4 abrupt concepts of 12,500 samples, 10% label noise.",
        feature_names=("f1", "f2", "f3"),
        label_map=_pm(0, 1),
        options={"delimiter": ","},
    )
)
for _k, (_kk, _t) in _HYPERPLANE_PARAMS.items():
    _add(
        _Spec(
            name=f"hyperplane{_k}",
            directory="hyperplane",
            files=(f"hyperplane{_k}.arff",),
            task="classification",
            n_samples=10_000,
            n_features=10,
            reader="arff",
            cite_key="hyperplane",
            description=f"Rotating hyperplane (Fan 2004 grid): k={_kk} drifting dimensions, "
            f"t={_t}.",
            feature_names=tuple(f"attr{i}" for i in range(10)),
            target_names=("output",),
            label_map=_pm("0", "1"),  # ARFF nominal {0,1}
        )
    )
for _name, _n, _d, _desc in (
    ("chess", 503, 8, "Chess.com games of one player (Zliobaite), time ordered."),
    ("luxembourg", 1_901, 31, "European Social Survey, Luxembourg: high vs low internet use."),
):
    _add(
        _Spec(
            name=_name,
            directory=_name,
            files=("chessweka.csv" if _name == "chess" else "LUdata.csv",),
            task="classification",
            n_samples=_n,
            n_features=_d,
            reader="csv_header",
            cite_key=_name,
            description=_desc,
            target_names=("target",),
            label_map=_pm(0, 1),
        )
    )
for _name, _opts in (("usenet1", {"X": "usenet1", "y": None}), ("usenet2", {"X": "X", "y": "Y"})):
    _add(
        _Spec(
            name=_name,
            directory=_name,
            files=(f"{_name}.mat",),
            task="classification",
            n_samples=1_500,
            n_features=99,
            reader="mat",
            cite_key=_name,
            description=f"{_name.capitalize()} (20 Newsgroups, simulated user interest; abrupt "
            "recurring drift every 300).",
            target_names=("interesting",),
            label_map=_pm(0, 1),
            options=_opts,
        )
    )
_add(
    _Spec(
        name="spam_corpus",
        directory="spam_corpus",
        files=("spam.zip",),
        task="classification",
        n_samples=9_324,
        n_features=39_916,
        reader="spam",
        cite_key="spam_corpus",
        description="Spam corpus (Katakis), 39,916 binary word features, sparse CSR "
        "(~156 nnz/row); 0 = legitimate, 1 = spam.",
        target_names=("spam",),
        label_map=_pm(0, 1),
    )
)
for _s, _n in _SOUZA_ROWS.items():
    _add(
        _Spec(
            name=_s,
            directory="souza_nonstationary",
            files=(f"{_s}.txt",),
            task="classification",
            n_samples=_n,
            n_features=2,
            reader="text_last_label",
            cite_key="souza",
            description=f"Souza et al. nonstationary synthetic stream {_s} (incremental drift).",
            feature_names=("x1", "x2"),
            label_map=_pm(1, 2),
            options={"delimiter": ","},
        )
    )
_add(
    _Spec(
        name="debutanizer",
        directory="debutanizer",
        files=("debutanizer_data.txt",),
        task="regression",
        n_samples=2_394,
        n_features=7,
        reader="text_regression",
        cite_key="debutanizer",
        description="Debutanizer column soft sensor (scaled): predict butane (C4) content "
        "in the bottom.",
        feature_names=(
            "u1_top_temperature",
            "u2_top_pressure",
            "u3_reflux_flow",
            "u4_flow_to_next_process",
            "u5_6th_tray_temperature",
            "u6_bottom_temperature_a",
            "u7_bottom_temperature_b",
        ),  # fmt: skip
        target_names=("y_c4_content",),
        options={"skiprows": 0, "n_targets": 1},
    )
)
_add(
    _Spec(
        name="sru",
        directory="sru",
        files=("SRU_data.txt",),
        task="multioutput",
        n_samples=10_081,
        n_features=5,
        reader="text_regression",
        cite_key="sru",
        description="Sulfur recovery unit soft sensor (scaled): predict H2S and SO2 in the "
        "tail gas.",
        feature_names=(
            "u1_mea_gas",
            "u2_air_mea",
            "u3_secondary_air",
            "u4_sws_gas",
            "u5_air_sws",
        ),  # fmt: skip
        target_names=("y1_h2s", "y2_so2"),
        options={"skiprows": 1, "n_targets": 2},
    )
)
_add(
    _Spec(
        name="sarcos",
        directory="sarcos",
        files=("sarcos_inv_test.mat",),
        task="multioutput",
        n_samples=4_449,
        n_features=21,
        reader="sarcos",
        cite_key="sarcos",
        description="SARCOS robot arm inverse dynamics (GPML test split): 7 joint torques.",
        feature_names=tuple(
            f"{kind}{j}" for kind in ("position", "velocity", "acceleration") for j in range(1, 8)
        ),
        target_names=tuple(f"torque{j}" for j in range(1, 8)),
    )
)
_add(
    _Spec(
        name="air_quality",
        directory="air_quality",
        files=("AirQualityUCI.csv",),
        task="multioutput",
        n_samples=9_357,
        n_features=8,
        reader="air_quality",
        cite_key="air_quality",
        description="UCI Air Quality, hourly 2004-2005: predict the 5 reference gas "
        "concentrations from the 5 metal-oxide sensors and T, RH, AH. Missing values (-200 "
        "in the file) are NaN, in X and in y.",
        feature_names=(
            "PT08.S1(CO)",
            "PT08.S2(NMHC)",
            "PT08.S3(NOx)",
            "PT08.S4(NO2)",
            "PT08.S5(O3)",
            "T",
            "RH",
            "AH",
        ),  # fmt: skip
        target_names=("CO(GT)", "NMHC(GT)", "C6H6(GT)", "NOx(GT)", "NO2(GT)"),
    )
)
for _name, _n, _d, _desc, _opts in (
    ("a9a", 32_561, 123, "a9a (UCI Adult, LIBSVM one-hot): income > 50K. split='test' reads "
     "a9a.t (16,281 rows).", {"test": ("a9a.t", 16_281)}),
    ("w8a", 49_749, 300, "w8a (LIBSVM web page classification), 3% positive.", {}),
):  # fmt: skip
    _add(
        _Spec(
            name=_name,
            directory=_name,
            files=(_name,),
            task="classification",
            n_samples=_n,
            n_features=_d,
            reader="libsvm",
            cite_key=_name,
            description=_desc,
            label_map=_pm(-1, 1),
            options=_opts,
        )
    )
_add(
    _Spec(
        name="usps",
        directory="usps",
        files=("usps_test.jf",),
        task="multiclass",
        n_samples=2_007,
        n_features=256,
        reader="usps",
        cite_key="usps",
        description="USPS handwritten digits (test split), 16x16 grey levels in [0, 2].",
        target_names=("digit",),
        label_map={d: float(d) for d in range(10)},
        binarize_rule="digits 5-9 -> +1, digits 0-4 -> -1",
        default_positive=(5, 6, 7, 8, 9),
    )
)


# ------------------------------------------------------------------------ public
def list_datasets() -> list[str]:
    """Return the names accepted by :func:`load` (``"hyperplane"`` also takes ``variant``).

    Returns
    -------
    list of str
        The bundled names first, then the others in alphabetical order.
    """
    others = sorted((n for n in _SPECS if n not in BUNDLED), key=str.lower)
    return list(BUNDLED) + others


def citation(name: str) -> str:
    """Return the reference to cite for dataset ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets` (or ``"hyperplane"``/``"souza"``).

    Returns
    -------
    str
    """
    if name in _CITATIONS:
        return _CITATIONS[name]
    return _CITATIONS[_spec(name).cite_key]


# ------------------------------------------------------------------- internals
def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _spec(name: str, variant: int | None = None) -> _Spec:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    if name == "hyperplane":
        if variant not in _HYPERPLANE_PARAMS:
            raise ValueError(f"load('hyperplane') needs variant=1..9, got {variant!r}")
        name = f"hyperplane{variant}"
    elif variant is not None:
        raise ValueError(f"variant only applies to 'hyperplane', not {name!r}")
    try:
        return _SPECS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(list_datasets())}") from None


def _split_file(spec: _Spec, split: str) -> tuple[str, int]:
    if split == "test":
        fname, n = spec.options["test"]
        return fname, n
    return spec.files[0], spec.n_samples


def _make(
    spec: _Spec,
    X: Any,
    y: np.ndarray,
    label_map: dict[Any, float] | None,
    path: Path,
    name: str | None = None,
    task: str | None = None,
) -> Dataset:
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
    return Dataset(
        X=X,
        y=np.ascontiguousarray(y, dtype=np.float64),
        task=task or spec.task,
        name=name or spec.name,
        feature_names=list(spec.feature_names) if spec.feature_names is not None else None,
        target_names=list(spec.target_names),
        citation=citation(spec.name),
        label_map=dict(label_map) if label_map is not None else None,
        source=str(path),
    )


# ------------------------------------------------------------- docstring table
def _label_doc(spec: _Spec) -> str:
    if spec.task in ("regression", "multioutput"):
        return "targets " + ", ".join(spec.target_names)
    assert spec.label_map is not None
    if spec.task == "multiclass":
        return f"{len(spec.label_map)} classes as ids 0..; binarize=True: {spec.binarize_rule}"
    neg = [k for k, v in spec.label_map.items() if v < 0][0]
    pos = [k for k, v in spec.label_map.items() if v > 0][0]
    return f"{neg!r} -> -1, {pos!r} -> +1 ({spec.target_names[0]})"


def _doc_table() -> str:
    out = []
    indent = "    "
    seen: set[str] = set()
    for name in list_datasets():
        spec = _SPECS[name]
        bundled = " [bundled]" if name in BUNDLED else ""
        out.append(
            f"{indent}* ``{name}``{bundled}: {spec.task}, {spec.n_samples:,} x {spec.n_features}. "
            f"{spec.description} Labels: {_label_doc(spec)}."
        )
        cite = _CITATIONS[spec.cite_key]
        if cite not in seen:  # each reference once, under its first dataset
            seen.add(cite)
            out.append(f"{indent}  Cite: {cite}")  # the bullet's second line
    return "\n".join(out) + "\n"
