"""Tests of edgereg.datasets: bundled files, every shared dataset, streaming readers."""

from __future__ import annotations

import hashlib
import itertools
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from edgereg import datasets as D
from edgereg.datasets import BUNDLED, DataFileError, Dataset, _bundled, _readers

# name -> (n, d, {mapped label: count}) as recorded with each source file (_sources.py)
BINARY = {
    "elec2": (45_312, 8, {-1.0: 19_237, 1.0: 26_075}),
    "weather": (18_159, 8, {-1.0: 12_461, 1.0: 5_698}),
    "sea": (50_000, 3, {-1.0: 30_952, 1.0: 19_048}),
    "chess": (503, 8, {-1.0: 198, 1.0: 305}),
    "luxembourg": (1_901, 31, {-1.0: 977, 1.0: 924}),
    "usenet1": (1_500, 99, {-1.0: 800, 1.0: 700}),
    "usenet2": (1_500, 99, {-1.0: 1_000, 1.0: 500}),
    "a9a": (32_561, 123, {-1.0: 24_720, 1.0: 7_841}),
    "w8a": (49_749, 300, {-1.0: 48_270, 1.0: 1_479}),
}
SOUZA = {
    "1CDT": 16_000,
    "2CDT": 16_000,
    "1CHT": 16_000,
    "2CHT": 16_000,
    "1CSurr": 55_283,
    "UG_2C_2D": 100_000,
    "MG_2C_2D": 200_000,
    "GEARS_2C_2D": 200_000,
}
REGRESSION = {  # name -> (n, d, target shape tail)
    "debutanizer": (2_394, 7, ()),
    "sru": (10_081, 5, (2,)),
    "sarcos": (4_449, 21, (7,)),
    "air_quality": (9_357, 8, (5,)),
}
MULTICLASS = {"usps": (2_007, 256, 10), "powersupply": (29_928, 2, 24)}


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _check_dense(ds: Dataset, n: int, d: int) -> None:
    assert isinstance(ds.X, np.ndarray)
    assert ds.X.shape == (n, d)
    assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    assert ds.y.dtype == np.float64 and ds.y.flags.c_contiguous
    assert ds.y.shape[0] == n
    assert ds.citation
    if ds.feature_names is not None:
        assert len(ds.feature_names) == d


def _counts(y: np.ndarray) -> dict[float, int]:
    vals, cnt = np.unique(y, return_counts=True)
    return {float(v): int(c) for v, c in zip(vals, cnt, strict=True)}


# ----------------------------------------------------------------------- bundled
@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_loads(name: str) -> None:
    ds = D.load(name)
    assert ds.name == name
    assert ds.source.endswith(f"{name}.npz")
    if name in BINARY:
        n, d, counts = BINARY[name]
        _check_dense(ds, n, d)
        assert ds.task == "classification"
        assert _counts(ds.y) == counts
        assert set(ds.label_map.values()) == {-1.0, 1.0}
    else:
        n, d, tail = REGRESSION[name]
        _check_dense(ds, n, d)
        assert ds.y.shape == (n, *tail)
        assert ds.task == ("regression" if not tail else "multioutput")
        assert ds.label_map is None
        assert len(ds.target_names) == (tail[0] if tail else 1)
        assert np.isfinite(ds.X).all() and np.isfinite(ds.y).all()


def test_bundled_convenience_loaders_and_labels() -> None:
    assert D.load_elec2().label_map == {0: -1.0, 1: 1.0}  # 0=UP -> -1, 1=DOWN -> +1
    assert D.load_weather().label_map == {1: -1.0, 2: 1.0}  # 1=no rain, 2=rain -> +1
    assert D.load_debutanizer().y.ndim == 1
    assert D.load_sru().y.shape == (10_081, 2)
    assert "Harries" in D.load_elec2.__doc__


def test_bundled_files_small_and_listed() -> None:
    files = sorted(p.name for p in _bundled._DATA_DIR.glob("*.npz"))
    assert files == sorted(_bundled._BUNDLED_SHA256)
    total = sum((_bundled._DATA_DIR / f).stat().st_size for f in files)
    assert total < 2_000_000
    for f in files:  # the table in the code matches the shipped bytes
        digest = hashlib.sha256((_bundled._DATA_DIR / f).read_bytes()).hexdigest()
        assert digest == _bundled._BUNDLED_SHA256[f]
    assert (_bundled._DATA_DIR / "CITATIONS.md").is_file()


def test_bundled_npz_plain_numpy_readable() -> None:
    with np.load(_bundled._DATA_DIR / "elec2.npz", allow_pickle=False) as npz:
        assert set(npz.files) == {"mantissa", "exponent", "labels"}


def test_corrupted_bundled_file_is_detected(tmp_path: Path) -> None:
    src = _bundled._DATA_DIR / "weather.npz"
    bad = tmp_path / "weather.npz"
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    expected = _bundled._BUNDLED_SHA256["weather.npz"]
    with pytest.raises(
        DataFileError,
        match=r"bundled file weather.npz is corrupted: sha256 "
        rf"[0-9a-f]{{64}} expected {expected}",
    ):
        _bundled._load_bundled("weather", bad)
    # without the hash check the damage still gives a clear error, not a traceback
    with pytest.raises(DataFileError, match="weather.npz"):
        _bundled._load_bundled("weather", bad, verify=False)
    # the intact copy loads through the same path
    good = tmp_path / "good.npz"
    shutil.copyfile(src, good)
    assert _bundled._load_bundled("weather", good).X.shape == (18_159, 8)


def test_truncated_bundled_file(tmp_path: Path) -> None:
    bad = tmp_path / "sru.npz"
    bad.write_bytes((_bundled._DATA_DIR / "sru.npz").read_bytes()[:5000])
    with pytest.raises(DataFileError, match="corrupted"):
        _bundled._load_bundled("sru", bad)
    with pytest.raises(DataFileError, match="sru.npz"):
        _bundled._load_bundled("sru", bad, verify=False)


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_equals_original_bit_for_bit(name: str, shared_data: Path) -> None:
    import build_bundled_data as build

    bundled = D.load(name)
    original = D.load(name, shared_data)
    assert original.source.startswith(str(shared_data))
    np.testing.assert_array_equal(_bits(bundled.X), _bits(original.X))
    np.testing.assert_array_equal(_bits(bundled.y), _bits(original.y))
    # and against an independent parse of the decimal strings with Python's float
    rel, delim, skip, _ = build.SOURCES[name]
    ref = build.reference_values(shared_data / rel, delim, skip)
    both = (
        bundled.X
        if bundled.task == "classification"
        else np.column_stack([bundled.X, bundled.y.reshape(len(bundled.y), -1)])
    )
    np.testing.assert_array_equal(_bits(both), _bits(ref))


# ---------------------------------------------------------------- shared datasets
@pytest.mark.parametrize("name", [n for n in BINARY if n not in BUNDLED])
def test_binary_root_datasets(name: str, shared_data: Path) -> None:
    n, d, counts = BINARY[name]
    ds = D.load(name, shared_data)
    assert ds.task == "classification"
    if name in ("a9a", "w8a"):
        assert sp.isspmatrix_csr(ds.X) and ds.X.shape == (n, d) and ds.X.dtype == np.float64
        assert ds.y.dtype == np.float64 and ds.y.shape == (n,)
    else:
        _check_dense(ds, n, d)
    assert _counts(ds.y) == counts


@pytest.mark.parametrize("name", list(SOUZA))
def test_souza_datasets(name: str, shared_data: Path) -> None:
    ds = D.load(name, shared_data)
    _check_dense(ds, SOUZA[name], 2)
    assert set(_counts(ds.y)) == {-1.0, 1.0}
    assert ds.label_map == {1: -1.0, 2: 1.0}


@pytest.mark.parametrize("k", range(1, 10))
def test_hyperplane(k: int, shared_data: Path) -> None:
    ds = D.load(f"hyperplane{k}", shared_data)
    _check_dense(ds, 10_000, 10)
    assert ds.label_map == {"0": -1.0, "1": 1.0}
    c = _counts(ds.y)
    assert set(c) == {-1.0, 1.0} and min(c.values()) > 4_000
    if k == 3:
        same = D.load("hyperplane", shared_data, variant=3)
        np.testing.assert_array_equal(same.X, ds.X)
        assert same.name == "hyperplane3"


def test_hyperplane_needs_variant(shared_data: Path) -> None:
    with pytest.raises(ValueError, match="variant"):
        D.load("hyperplane", shared_data)
    with pytest.raises(ValueError, match="variant"):
        D.load("sea", shared_data, variant=2)


@pytest.mark.parametrize("name", [n for n in REGRESSION if n not in BUNDLED])
def test_regression_root_datasets(name: str, shared_data: Path) -> None:
    n, d, tail = REGRESSION[name]
    ds = D.load(name, shared_data)
    _check_dense(ds, n, d)
    assert ds.y.shape == (n, *tail) and ds.task == "multioutput"
    assert len(ds.target_names) == tail[0]


def test_air_quality_missing_values_are_nan(shared_data: Path) -> None:
    ds = D.load("air_quality", shared_data)
    assert not (ds.X == -200).any() and not (ds.y == -200).any()
    assert np.isnan(ds.y).any(axis=0).all()  # every reference gas has gaps
    assert np.isnan(ds.y[:, 1]).sum() > 8_000  # NMHC(GT) is mostly missing
    assert ds.target_names[0] == "CO(GT)"
    # first row of the file: CO 2,6; PT08.S1 1360; ... AH 0,7578
    assert ds.y[0, 0] == 2.6 and ds.X[0, 0] == 1360.0 and ds.X[0, -1] == 0.7578


@pytest.mark.parametrize("name", list(MULTICLASS))
def test_multiclass_and_binarize(name: str, shared_data: Path) -> None:
    n, d, k = MULTICLASS[name]
    ds = D.load(name, shared_data)
    _check_dense(ds, n, d)
    assert ds.task == "multiclass"
    assert set(np.unique(ds.y)) == {float(c) for c in range(k)}
    bi = D.load(name, shared_data, binarize=True)
    assert bi.task == "classification" and set(np.unique(bi.y)) == {-1.0, 1.0}
    cut = 5 if name == "usps" else 12
    np.testing.assert_array_equal(bi.y, np.where(ds.y >= cut, 1.0, -1.0))
    custom = D.load(name, shared_data, binarize={0})
    np.testing.assert_array_equal(custom.y, np.where(ds.y == 0, 1.0, -1.0))
    with pytest.raises(ValueError, match="binarize"):
        D.load(name, shared_data, binarize={k})


def test_binarize_rejected_for_binary_sets() -> None:
    with pytest.raises(ValueError, match="binarize"):
        D.load("elec2", binarize=True)


def test_a9a_test_split(shared_data: Path) -> None:
    ds = D.load("a9a", shared_data, split="test")
    assert ds.name == "a9a.t" and ds.X.shape == (16_281, 123)
    assert _counts(ds.y) == {-1.0: 12_435, 1.0: 3_846}
    with pytest.raises(ValueError, match="no test split"):
        D.load("w8a", shared_data, split="test")


def test_every_listed_dataset_has_a_citation() -> None:
    names = D.list_datasets()
    assert names[: len(BUNDLED)] == list(BUNDLED)
    expected = (
        set(BINARY)
        | set(SOUZA)
        | set(REGRESSION)
        | set(MULTICLASS)
        | {f"hyperplane{k}" for k in range(1, 10)}
        | {"spam_corpus"}
    )
    assert set(names) == expected
    for name in names:
        assert len(D.citation(name)) > 20
    assert "Souza" in D.citation("souza") and "Katakis" in D.citation("spam_corpus")
    assert "Elwell" in D.load.__doc__ and "Hull" in D.load.__doc__


def test_bad_names_and_missing_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDGEREG_DATA", str(tmp_path / "nothing fetched"))
    with pytest.raises(KeyError, match="unknown dataset"):
        D.load("mnist")
    with pytest.raises(ValueError, match="not bundled with edgereg and not downloaded yet"):
        D.load("a9a")
    with pytest.raises(DataFileError, match="not found"):
        D.load("sea", tmp_path)


# ------------------------------------------------------------ corrupt root files
def _fake_root(tmp_path: Path, shared: Path, rel: str, cut: int | None) -> Path:
    dst = tmp_path / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    data = (shared / rel).read_bytes()
    dst.write_bytes(data if cut is None else data[:cut])
    return tmp_path


def test_truncated_text_file(tmp_path: Path, shared_data: Path) -> None:
    root = _fake_root(tmp_path, shared_data, "chess/chessweka.csv", 5_001)
    with pytest.raises(DataFileError, match="sha256"):
        D.load("chess", root)
    with pytest.raises(DataFileError, match="chessweka.csv"):
        D.load("chess", root, verify=False)


def test_truncated_label_file(tmp_path: Path, shared_data: Path) -> None:
    _fake_root(tmp_path, shared_data, "sea/SEA_training_data.csv", None)
    root = _fake_root(tmp_path, shared_data, "sea/SEA_training_class.csv", 50_000)
    with pytest.raises(DataFileError, match="SEA_training_class.csv"):
        D.load("sea", root, verify=False)


def test_truncated_libsvm(tmp_path: Path, shared_data: Path) -> None:
    data = (shared_data / "a9a/a9a").read_bytes()
    cut = data.index(b":", 1000) + 1  # ends with "idx:" and no value
    root = _fake_root(tmp_path, shared_data, "a9a/a9a", cut)
    with pytest.raises(DataFileError, match=r"a9a, line \d+"):
        D.load("a9a", root, verify=False)


def test_corrupted_mat_and_zip(tmp_path: Path, shared_data: Path) -> None:
    root = _fake_root(tmp_path, shared_data, "usenet1/usenet1.mat", 3_000)
    with pytest.raises(DataFileError, match="usenet1.mat"):
        D.load("usenet1", root, verify=False)
    root = _fake_root(tmp_path, shared_data, "spam_corpus/spam.zip", 1_000_000)
    with pytest.raises(DataFileError, match="spam.zip"):
        next(D.iter_spam_corpus(root, verify=False))
    with pytest.raises(DataFileError, match="sha256"):
        next(D.iter_spam_corpus(root))


# -------------------------------------------------------------------- streaming
def test_iter_libsvm_matches_load(shared_data: Path) -> None:
    full = D.load("a9a", shared_data)
    chunks = list(D.iter_libsvm(shared_data / "a9a" / "a9a", 123, chunk_size=5_000))
    assert [c[0].shape[0] for c in chunks] == [5_000] * 6 + [2_561]
    assert all(sp.isspmatrix_csr(c[0]) and c[0].shape[1] == 123 for c in chunks)
    X = sp.vstack([c[0] for c in chunks], format="csr")
    assert (X != full.X).nnz == 0
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), full.y)
    via_name = list(D.iter_dataset("a9a", shared_data, chunk_size=10_000, split="test"))
    assert sum(c[0].shape[0] for c in via_name) == 16_281


def test_iter_dataset_dense_chunks() -> None:
    full = D.load("weather")
    chunks = list(D.iter_dataset("weather", chunk_size=5_000))
    assert [len(c[1]) for c in chunks] == [5_000, 5_000, 5_000, 3_159]
    np.testing.assert_array_equal(np.vstack([c[0] for c in chunks]), full.X)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), full.y)


def test_iter_spam_corpus_first_chunks(shared_data: Path) -> None:
    chunks = list(itertools.islice(D.iter_spam_corpus(shared_data, chunk_size=512), 4))
    X = sp.vstack([c[0] for c in chunks], format="csr")
    y = np.concatenate([c[1] for c in chunks])
    assert X.shape == (2_048, 39_916) and X.dtype == np.float64
    assert (X.data == 1.0).all() and X.has_sorted_indices
    assert 100 < X.nnz / X.shape[0] < 400  # about 156 non-zeros a row over the corpus
    assert set(np.unique(y)) <= {-1.0, 1.0}
    # rows agree with a plain parse of the first line of the archive
    with (
        zipfile.ZipFile(shared_data / "spam_corpus" / "spam.zip") as zf,
        zf.open("spam/spam.data") as fh,
    ):
        first = np.array(fh.readline().split(), dtype=np.float64)
    assert first.shape == (39_916,)
    np.testing.assert_array_equal(X[0].toarray().ravel(), first)
    same = next(D.iter_dataset("spam_corpus", shared_data, chunk_size=512, verify=False))
    assert (same[0] != chunks[0][0]).nnz == 0


def test_dense01_fallback_parser() -> None:
    line = b"0  1 0 1 \r"  # irregular spacing takes the slow path
    nz = _readers._dense01_nonzeros(line, 4, Path("x"), 1)
    np.testing.assert_array_equal(nz, [1, 3])
    with pytest.raises(DataFileError, match="3 values, expected 4"):
        _readers._dense01_nonzeros(b"0 1 0", 4, Path("x"), 7)
    with pytest.raises(DataFileError, match="other than 0/1"):
        _readers._dense01_nonzeros(b"0 2 0 1", 4, Path("x"), 7)


def test_source_hash_is_cached(shared_data: Path) -> None:
    path = shared_data / "chess" / "chessweka.csv"
    _readers._sha256_file(path)
    key = next(k for k in _readers._HASH_CACHE if k[0] == str(path.resolve()))
    assert _readers._HASH_CACHE[key] == _readers._SOURCE_SHA256["chess/chessweka.csv"]
