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

Every other dataset needs ``root``: a directory laid out like the project's
``shared/data`` (``root/<dataset dir>/<files>``, see ``SOURCE.md`` there). Files
under ``root`` are checked against the sha256 recorded in ``SOURCE.md`` (hard
coded below) once per process; ``verify=False`` skips it.

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

import hashlib
import io
import os
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "BUNDLED",
    "DataFileError",
    "Dataset",
    "citation",
    "iter_dataset",
    "iter_libsvm",
    "iter_spam_corpus",
    "list_datasets",
    "load",
    "load_debutanizer",
    "load_elec2",
    "load_sru",
    "load_weather",
]

#: Names of the datasets shipped inside the package (``load(name)`` with no root).
BUNDLED: tuple[str, ...] = ("elec2", "weather", "debutanizer", "sru")

_DATA_DIR = Path(__file__).resolve().parent / "data"

#: sha256 of each bundled file in ``edgereg/data`` (rebuilt by
#: ``tests/build_bundled_data.py``, which prints this table).
_BUNDLED_SHA256: dict[str, str] = {
    "elec2.npz": "5c50946c351daa576297cea9fa454a35a943c53e7ae111d6df41550f7036cb9d",
    "weather.npz": "2bd0bebe8e281b9623235e15bfe090a3eb00bddde89331e81f36a4e4853e98f4",
    "debutanizer.npz": "f75d9deff901fd585dbe84eac2c5f21d21e1ab668f08bc5f6cfaf24f30fcbf50",
    "sru.npz": "ecf2d18d5b4de40dce5885f45370deffea1c36b99860a265b3e353ed610622f3",
}

#: sha256 of every original file, as recorded in ``shared/data/*/SOURCE.md``.
_SOURCE_SHA256: dict[str, str] = {
    "a9a/a9a": "7ba53cccb27e2e525f0fb173e1f446d49856e3fb007eb43be4ec6d0f5b3335ca",
    "a9a/a9a.t": "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
    "air_quality/AirQualityUCI.csv": (
        "c810b84beaca8194dc0ad35ca8d2eb201f0c97a10572eb5c1f02f27523e2b367"
    ),
    "chess/chessweka.csv": "73b7c9402b67684e2283a526ca3dea35e5e5060598c5cd54b32727fb0b1122e9",
    "debutanizer/debutanizer_data.txt": (
        "071734574de642301a7ab68f409a863c4f3358e7b3cfc141da4742f1a9aca5e6"
    ),
    "elec2/elec2_data.dat": "f96f3b096a5318c1dab465f9c64b50824f751d651a13b864137cfefac6a6bef2",
    "elec2/elec2_label.dat": "769805ed2f942698b72bb6398d1f685ddd2c8b01213334658df709466890c154",
    "hyperplane/hyperplane1.arff": (
        "81f3c39558d5a1cf2b39dfe3c987264835b9a2d53c85450716f11ff4d0885fc1"
    ),
    "hyperplane/hyperplane2.arff": (
        "72446dc567e579e47646a8f0ff53ce8713b0c37cba7b9c84a9478f6c385af7e6"
    ),
    "hyperplane/hyperplane3.arff": (
        "e1fff1ec7971f1e02c49fb87168d754e926daab9dbbd4f24bc8327df007aed24"
    ),
    "hyperplane/hyperplane4.arff": (
        "c243ab65fb38b9bf24ca2ca9f434c589908b76702d53ae937208a42244effb26"
    ),
    "hyperplane/hyperplane5.arff": (
        "fb696e19b3c95125d964cf9f33b101ece3a0cb3e38c0598f9f0acdd046dc66bc"
    ),
    "hyperplane/hyperplane6.arff": (
        "db1b3c2effd52b7d0b2e6cbb55f429ce41100abcba5cb8c8b091648c433f02cb"
    ),
    "hyperplane/hyperplane7.arff": (
        "14e6817a12a70f4b05c0fd70ceab68623b588b77b53397f96c32cb5e1ebf0ea4"
    ),
    "hyperplane/hyperplane8.arff": (
        "5319cdf5b6c81a29fd89af96d845645238068b854714d096c01e60793888b42e"
    ),
    "hyperplane/hyperplane9.arff": (
        "7cb22b2292c91c4377c65b02c5d83d3e29feeb9400d18aeeff001d09c3395771"
    ),
    "luxembourg/LUdata.csv": "856d5684b4550f8d6c854ef3407b43293c0f8ad9794ec3a04dff675ade6b989f",
    "powersupply/powersupply.arff": (
        "0e2c061f6211c2a25563fe565d7f97c2fceae098e314bf84f95370f01356e7be"
    ),
    "sarcos/sarcos_inv_test.mat": (
        "161a59b5c3b4f4b404584323f181607b2acbe620eb134dc720760dc3f38f5cec"
    ),
    "sea/SEA_training_data.csv": (
        "dd2d7d5d08fa9c60ae4cb460f096e15e714cab4fa882b9a359eb24bd095f9f91"
    ),
    "sea/SEA_training_class.csv": (
        "03ee15105c454a4359724109feda3b3117c70115251f30ae4ca43549ef113a40"
    ),
    "souza_nonstationary/1CDT.txt": (
        "fc4c1b0c3c113b5755c2c40f76a20d8973cb2ac5557effb19ff2508fb399bbf9"
    ),
    "souza_nonstationary/2CDT.txt": (
        "a1bcb438c57f2f05dbf0bf6a45eb214f14469e297aad1a3cc5da11b8a8fb6130"
    ),
    "souza_nonstationary/1CHT.txt": (
        "d45be2b78cf3e46245f4878fa05d49e124ee48ff4e3990b2fd0d8f8e78f93507"
    ),
    "souza_nonstationary/2CHT.txt": (
        "e76ed887b84b1679164a0c8cabbd8761636d878ba98a73be13d11633bb20d617"
    ),
    "souza_nonstationary/1CSurr.txt": (
        "e8dcbc79d8f220a52ca42de2eeeaade6fa5dcf4ffbe3b5d1ea1d565092d199c5"
    ),
    "souza_nonstationary/UG_2C_2D.txt": (
        "3e17e46d85a36f98505e7eb62416f6ff06f5a53463d275af2b8c2ebbca39aff6"
    ),
    "souza_nonstationary/MG_2C_2D.txt": (
        "2a4d93a516c4eb0a5eb93266f5d6b253d9cb457dcce35dac255a3a6b898a9630"
    ),
    "souza_nonstationary/GEARS_2C_2D.txt": (
        "d0cabc8857b6bbc49dcc9f9b6e85aa4665f13b1a958e0d728280d426c28ae7d3"
    ),
    "spam_corpus/spam.zip": "0c3eb317fcca5495d5768bb9fb57603965b42c36da514bae9d98087c144baf26",
    "sru/SRU_data.txt": "6a8f1a632e7618b5aee2a3b50e80bad5af8c5730b17bc40c6072c8033f30a1ef",
    "usenet1/usenet1.mat": "dacc1f98d4eaccca704904bd2ac8c1459b32080a76fb307a1666ce7ca9e72b98",
    "usenet2/usenet2.mat": "745aa8df36560393362bea3b3dd4d25b7a7440c950d1c63fa5face131dfa7f88",
    "usps/usps_test.jf": "f802e6ba3fbc8778cdea6a105311fb4a1a8251eb706b77882bb1966116bf87d2",
    "w8a/w8a": "b464b4f6ce6a5d9e181ffc793e19a04751036273722312398ef7673705014902",
    "weather/NEweather_data.csv": (
        "e38ef95890ec0df3daee0493e92e59c38ae1c27cd01c4805367f189d52dfeed9"
    ),
    "weather/NEweather_class.csv": (
        "9c4f62a1d7828b498affb0bd453f7a23aa4f5aa11854537773fef3433a914fa5"
    ),
}

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


# --------------------------------------------------------------------- citations
_CIT_KATAKIS_ECAI = (
    'I. Katakis, G. Tsoumakas, I. Vlahavas, "An Ensemble of Classifiers for coping with '
    'Recurring Contexts in Data Streams", ECAI 2008.'
)
_CIT_ZLIOBAITE = (
    'I. Zliobaite, "Combining similarity in time and space for training set formation '
    'under concept drift", Intelligent Data Analysis 15(4):589-611, 2011.'
)
_CIT_SOUZA = (
    'V. M. A. Souza, D. F. Silva, J. Gama, G. E. A. P. A. Batista, "Data Stream '
    "Classification Guided by Clustering on Nonstationary Environments and Extreme "
    'Verification Latency", SIAM SDM 2015, pp. 873-881.'
)
_CIT_PLATT_LIBSVM = (
    'J. Platt, "Fast training of support vector machines using sequential minimal '
    'optimization", 1998. LIBSVM datasets: C.-C. Chang, C.-J. Lin, "LIBSVM: a library '
    'for support vector machines", ACM TIST 2(3), 2011.'
)
_CIT_FORTUNA_BOOK = (
    'L. Fortuna, S. Graziani, A. Rizzo, M. G. Xibilia, "Soft Sensors for Monitoring and '
    'Control of Industrial Processes", Springer, 2007.'
)

_CITATIONS: dict[str, str] = {
    "elec2": (
        'M. Harries, "SPLICE-2 Comparative Evaluation: Electricity Pricing", Technical '
        "Report UNSW-CSE-TR-9905, University of New South Wales, 1999. Normalised version "
        'distributed with MOA: A. Bifet, G. Holmes, R. Kirkby, B. Pfahringer, "MOA: '
        'Massive Online Analysis", JMLR 11:1601-1604, 2010.'
    ),
    "weather": (
        'R. Elwell, R. Polikar, "Incremental Learning of Concept Drift in Nonstationary '
        'Environments", IEEE Trans. Neural Networks 22(10):1517-1531, 2011. Raw data: '
        "NOAA Global Surface Summary of the Day."
    ),
    "powersupply": (
        'X. Zhu, "Stream Data Mining Repository", 2010, http://www.cse.fau.edu/~xqzhu/stream.html.'
    ),
    "sea": (
        'W. N. Street, Y. Kim, "A streaming ensemble algorithm (SEA) for large-scale '
        'classification", KDD 2001.'
    ),
    "hyperplane": (
        'W. Fan, "Systematic data selection to mine concept-drifting data streams", '
        'KDD 2004; G. Hulten, L. Spencer, P. Domingos, "Mining time-changing data '
        'streams", KDD 2001.'
    ),
    "chess": _CIT_ZLIOBAITE,
    "luxembourg": _CIT_ZLIOBAITE,
    "usenet1": _CIT_KATAKIS_ECAI,
    "usenet2": _CIT_KATAKIS_ECAI,
    "spam_corpus": (
        'I. Katakis, G. Tsoumakas, I. Vlahavas, "Tracking recurring contexts using '
        'ensemble classifiers: an application to email filtering", Knowledge and '
        "Information Systems 22(3):371-391, 2010."
    ),
    "souza": _CIT_SOUZA,
    "debutanizer": _CIT_FORTUNA_BOOK,
    "sru": (
        'L. Fortuna, A. Rizzo, M. Sinatra, M. G. Xibilia, "Soft analyzers for a sulfur '
        'recovery unit", Control Engineering Practice 11(12):1491-1500, 2003; and '
        + _CIT_FORTUNA_BOOK
    ),
    "sarcos": (
        "S. Vijayakumar, A. D'Souza, S. Schaal, \"Incremental Online Learning in High "
        'Dimensions", Neural Computation 17(12), 2005; data from C. E. Rasmussen, '
        'C. K. I. Williams, "Gaussian Processes for Machine Learning", MIT Press, 2006.'
    ),
    "air_quality": (
        'S. De Vito, E. Massera, M. Piga, L. Martinotto, G. Di Francia, "On field '
        "calibration of an electronic nose for benzene estimation in an urban pollution "
        'monitoring scenario", Sensors and Actuators B 129(2):750-757, 2008. UCI Machine '
        'Learning Repository, "Air Quality" (CC BY 4.0).'
    ),
    "a9a": (
        _CIT_PLATT_LIBSVM + ' Adult data: R. Kohavi, "Scaling up the accuracy of naive-Bayes '
        'classifiers: a decision-tree hybrid", KDD 1996 (UCI, CC BY 4.0).'
    ),
    "w8a": _CIT_PLATT_LIBSVM,
    "usps": (
        'J. J. Hull, "A database for handwritten text recognition research", IEEE TPAMI '
        "16(5):550-554, 1994."
    ),
}


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
        Directory laid out like ``shared/data`` (``root/<dir>/<files>``). Needed for
        every dataset except the bundled ones (:data:`BUNDLED`); for a bundled name
        it makes the loader parse the original files instead of the bundled copy
        (the values are identical bit for bit).
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
        Missing ``root`` for a non-bundled set, bad ``split``/``variant``/``binarize``.
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
        if spec.name not in BUNDLED:
            raise ValueError(
                f"dataset {spec.name!r} is not bundled with edgereg; pass root=<directory "
                f"holding {spec.directory}/> (laid out like shared/data). Bundled: {BUNDLED}"
            )
        return _load_bundled(spec.name, verify=verify)
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
        As in :func:`load`.
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
            f"{indent}``{name}``{bundled}: {spec.task}, {spec.n_samples:,} x {spec.n_features}. "
            f"{spec.description} Labels: {_label_doc(spec)}."
        )
        cite = _CITATIONS[spec.cite_key]
        if cite not in seen:  # each reference once, under its first dataset
            seen.add(cite)
            out.append(f"{indent}    Cite: {cite}")
    return "\n".join(out) + "\n"


if load.__doc__ is not None:
    load.__doc__ = load.__doc__ + _doc_table()
