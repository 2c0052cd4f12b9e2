"""SparseDFOP exported to C (edgereg/export/family_sparse.py) against the JIT.

The compiled cases (``EDGEREG_EXPORT_TESTS=1``, ``-m slow``) replay the export
tests' hostile dense stream (tests/export_support.py: NaN/inf rows under
on_invalid="skip", per-step forgetting), then sparse rows through
``learn_one_sparse`` / ``predict_one_sparse``: good rows (repeated indices, an
empty row), NaN/inf values, an unknown target, and rows the C call must refuse
(an index out of range or negative, decreasing indices, nnz < 0), hashing every
status and prediction, then the learnt state. Three cases: the hashed projection
in float64 on x86-64 (also driven through edgereg.native), the stored
("gaussian") one in float32 classification on x86-64, the hashed one in float32
on the Cortex-M4F (qemu-system-arm, mps2-an386).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import edgereg
from edgereg.export import ExportError

sys.path.insert(0, str(Path(__file__).parent))
import export_support as S  # noqa: E402

D, d = 20, 6  # input dimension and components of every case
_MODELS = {
    "sparse-hashed-float64": lambda: edgereg.SparseDFOP(D, d, 0.01, on_invalid="skip"),
    "sparse-gaussian-float32-classification": lambda: edgereg.SparseDFOP(
        D, d, 0.05, task="classification", projection="gaussian", dtype="float32", seed=7,
        on_invalid="skip"),
    "sparse-hashed-float32": lambda: edgereg.SparseDFOP(D, d, 0.01, dtype="float32", seed=3,
                                                        on_invalid="skip"),
}
CASES = [("sparse-hashed-float64", "x86_64"),
         ("sparse-gaussian-float32-classification", "x86_64"),
         ("sparse-hashed-float32", "cortex-m4f")]
_ASKED = os.environ.get("EDGEREG_EXPORT_TESTS") == "1"
#: Statuses of the sparse calls (the header's OK, INVALID, BAD_INDICES).
OK, INVALID, BAD = 0, 1, -4


def dense_stream(task):
    """The export tests' stream at D = 20, most entries zero (rows are sparse-ish:
    the dense path skips zeros, keeps NaN and inf)."""
    X, Y, MU = S.stream(D, 300, task)
    X[np.abs(X) < 0.8] = 0.0
    return X, Y, MU


def sparse_rows(task, seed=1):
    """(indices, values, y, expected) rows; expected "bad" when the C call must
    refuse the row (the class raises for an index out of range, sorts an unsorted
    row: the C call refuses both), "raise" when the class raises too."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(40):
        k = int(rng.integers(0, 7))
        idx = np.sort(rng.integers(0, D, size=k))  # repeated indices add up
        val = rng.normal(size=k)
        y = float(rng.integers(0, 2)) if task == "classification" else float(rng.normal())
        rows.append((idx, val, y, "ok"))
    rows[3] = (np.array([], np.int64), np.array([]), rows[3][2], "ok")  # an empty row
    rows[5] = (np.array([1, 4, 9]), np.array([0.5, np.nan, 1.0]), 1.0, "ok")  # INVALID
    rows[8] = (np.array([2, 2, 17]), np.array([np.inf, 1.0, 1.0]), 1.0, "ok")  # INVALID
    rows[11] = (np.array([0, 19]), np.array([1.0, -2.0]), 2.0 if task == "classification"
                else np.nan, "ok")  # an unknown label / NaN target: INVALID
    rows[13] = (np.array([3, D]), np.array([1.0, 1.0]), 1.0, "raise")  # out of range
    rows[17] = (np.array([-1, 4]), np.array([1.0, 1.0]), 1.0, "raise")  # negative
    rows[21] = (np.array([7, 2]), np.array([1.0, 1.0]), 1.0, "bad")  # decreasing
    rows[25] = (np.array([7]), np.array([1.0]), 1.0, "bad-nnz")  # nnz = -1
    return [(np.asarray(i, np.int64), np.asarray(v, np.float64), y, e) for i, v, y, e in rows]


def sparse_c(prefix, dtype, rows, x_row):
    """C statements (after learn_many): every sparse row through learn_one_sparse,
    two through predict_one_sparse, a dense predict_one; statuses and predictions
    hashed into h."""
    dt = np.dtype(dtype)
    ut, ub = ("uint64_t", "uint64") if dt.itemsize == 8 else ("uint32_t", "uint32")
    idx = np.concatenate([r[0] for r in rows] + [np.zeros(1, np.int64)])
    val = np.concatenate([r[1] for r in rows] + [np.zeros(1)]).astype(dt)
    starts = np.cumsum([0] + [len(r[0]) for r in rows[:-1]])
    nnz = [-1 if r[3] == "bad-nnz" else len(r[0]) for r in rows]
    ys = np.array([r[2] for r in rows])
    return (
        "    {\n"
        f"    static const int64_t SI[{idx.size}] = {{{','.join(map(str, idx.tolist()))}}};\n"
        f"    static const int64_t SP[{len(rows)}] = {{{','.join(map(str, starts.tolist()))}}};\n"
        f"    static const int64_t SN[{len(rows)}] = {{{','.join(map(str, nnz))}}};\n"
        f"    {S._hex_array('SVbits', val, ut, ub)}"
        f"    {S._hex_array('SYbits', ys, 'uint64_t', 'uint64')}"
        f"    static {prefix}_real SV[{val.size}]; static double SY[{len(rows)}];\n"
        "    memcpy(SV, SVbits, sizeof SV); memcpy(SY, SYbits, sizeof SY);\n"
        f"    for (int r = 0; r < {len(rows)}; r++) {{\n"
        "        double yh = 0.0;\n"
        f"        int64_t st = {prefix}_learn_one_sparse(&s, SI + SP[r], SV + SP[r], SN[r], "
        "SY[r], &yh);\n"
        "        h = fnv(h, (const unsigned char *)&st, sizeof st);\n"
        "        if (st >= 0) h = fnv(h, (const unsigned char *)&yh, sizeof yh);\n"
        "    }\n"
        "    for (int r = 0; r < 2; r++) {\n"
        "        double yh = 0.0;\n"
        f"        int64_t st = {prefix}_predict_one_sparse(&s, SI + SP[r ? 21 : 0], "
        "SV + SP[r ? 21 : 0], SN[r ? 21 : 0], &yh);\n"
        "        h = fnv(h, (const unsigned char *)&st, sizeof st);\n"
        "        if (st >= 0) h = fnv(h, (const unsigned char *)&yh, sizeof yh);\n"
        "    }\n"
        f"    double ph = {prefix}_predict_one(&s, X + (size_t){x_row} * {D});\n"
        "    h = fnv(h, (const unsigned char *)&ph, sizeof ph);\n"
        "    }\n")


def sparse_jit(rows, X, x_row):
    """The bytes ``sparse_c`` hashes, from the JIT model (after learn_many)."""

    def after(model):
        out = []
        for idx, val, y, expected in rows:
            if expected.startswith("bad"):  # the C call refuses it; the class would sort
                out.append(np.int64(BAD).tobytes())
                continue
            if expected == "raise":  # the class refuses it too, state unchanged
                state = [a.copy() for a in model.state]
                with pytest.raises(ValueError, match="indices must be in"):
                    model.learn_one((idx, val.astype(model.dtype)), y)
                assert all(a.tobytes() == b.tobytes() for a, b in zip(state, model.state,
                                                                      strict=True))
                out.append(np.int64(BAD).tobytes())
                continue
            before = model.n_skipped_
            yh = model.learn_one((idx, val.astype(model.dtype)), y)
            status = INVALID if model.n_skipped_ > before else OK
            out += [np.int64(status).tobytes(), np.float64(yh).tobytes()]
        idx, val = rows[0][:2]
        out += [np.int64(OK).tobytes(),
                np.float64(model.predict_one((idx, val.astype(model.dtype)))).tobytes(),
                np.int64(BAD).tobytes(),
                np.float64(model.predict_one(X[x_row].astype(model.dtype))).tobytes()]
        return b"".join(out)

    return after


# ------------------------------------------------------------ no compiling
def test_the_family_lays_out_the_projection_as_more_blocks():
    from edgereg.export.families import SUPPORTED, family_of
    from edgereg.export.header import blob_header, layout, write_header

    assert "SparseDFOP" in SUPPORTED
    hashed = family_of(_MODELS["sparse-hashed-float64"]())
    assert [(b.name, str(b.dtype), b.size) for b in hashed.blocks] == [
        ("PW", "float64", (d + 1) * d), ("B", "float64", 34), ("psi", "float64", d),
        ("col", "float64", d), ("psi_block", "float64", 32 * d), ("hash", "int64", 8)]
    assert layout(hashed)[1] == 8 * (42 + 34 + 6 + 6 + 192 + 8)
    assert hashed.d == D and not hashed.c_api[0].count("edgereg")
    learnt = {f.name: f for f in hashed.fields if f.learnt}
    assert set(learnt) == {"w", "P", "forgotten", "M_T", "counts"}
    assert learnt["M_T"].shape == (0, d)  # nothing stored: a field of no element
    assert set(hashed.functions) == {"learn_one", "learn_many", "predict_one",
                                     "learn_one_sparse", "predict_one_sparse"}
    stored = family_of(_MODELS["sparse-gaussian-float32-classification"]())
    assert ("M_T", "float32", D * d) in [(b.name, str(b.dtype), b.size) for b in stored.blocks]
    assert stored.blocks[2].initial.tobytes() == \
        _MODELS["sparse-gaussian-float32-classification"]()._state.M_T.tobytes()
    info = dict(description="SparseDFOP", triple="x", cpu="", version="v")
    text = write_header(stored, "my_sparse", info, blob_header(stored, "SparseDFOP", {}))
    for call in ("my_sparse_learn_one_sparse(my_sparse_state *s", "MY_SPARSE_BAD_INDICES (-4)",
                 "int64_t my_sparse_predict_one_sparse_blocks(float *PW, double *B, "
                 "float *M_T, float *psi, float *col, float *psi_block, int64_t *hash, "
                 "const int64_t *indices,", "MY_SPARSE_N_COMPONENTS 6", "const float *values"):
        assert call in text
    assert "@P" not in text


@pytest.mark.parametrize("model, why", [
    (lambda: edgereg.SparseDFOP(20_000, 6, projection="gaussian"), "over the export's 65536"),
    (lambda: edgereg.SparseDFOP(20, 6, coverage=0.9), "coverage or missing='impute'"),
    (lambda: edgereg.SparseDFOP(20, 6, "auto"), "SparseDFOPBank cannot be exported yet"),
])
def test_what_the_route_cannot_honour_is_refused_before_compiling(tmp_path, model, why):
    with pytest.raises(ExportError, match=why):
        edgereg.export.export(model(), out=str(tmp_path))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("label", list(_MODELS))
def test_a_sparse_dfop_state_blob_loads_back_and_continues_bit_for_bit(tmp_path, label):
    from edgereg.export import export_state

    a = _MODELS[label]()
    X, Y, MU = dense_stream(a.task)
    Xd = X.astype(a.dtype)
    a.learn_many(Xd[:150], Y[:150])
    export_state(a, tmp_path / "s.bin", format="bin")
    b = edgereg.load(tmp_path / "s.bin")
    assert type(b) is type(a) and b.get_params() == a.get_params()
    rest = slice(150, None)
    assert a.learn_many(Xd[rest], Y[rest], forgetting=MU[rest]).tobytes() == \
        b.learn_many(Xd[rest], Y[rest], forgetting=MU[rest]).tobytes()
    for x, y in zip(a.state, b.state, strict=True):
        assert x.tobytes() == y.tobytes()


def test_the_readme_names_the_sparse_calls():
    from edgereg.export.families import family_of
    from edgereg.export.header import write_readme

    info = dict(description="SparseDFOP", triple="x", cpu="", version="v", state_bytes=1,
                undefined=[], code_bytes=1)
    text = write_readme(family_of(_MODELS["sparse-hashed-float64"]()), "sp", info)
    assert "`sp_learn_one_sparse`, `sp_predict_one_sparse`" in text


def test_a_float32_export_of_the_class_is_refused_and_an_instance_exports_as_it_is():
    from edgereg.export import _model

    with pytest.raises(ExportError, match="no float32-only arithmetic"):
        _model("SparseDFOP", D, "float32", {"n_components": d})
    model = edgereg.SparseDFOP(D, d, dtype="float32")
    assert _model(model, D, "float32", {}) is model


def test_the_classs_sparse_rows_are_what_the_c_calls_take():
    """What the C calls' index check mirrors: the class refuses an index outside
    [0, D) and adds repeated indices in order (after its stable sort), so a
    non-decreasing row is the one C form that needs no copy."""
    m = edgereg.SparseDFOP(D, d)
    with pytest.raises(ValueError, match="indices must be in"):
        m.predict_one((np.array([0, D]), np.array([1.0, 1.0])))
    with pytest.raises(ValueError, match="indices must be in"):
        m.predict_one((np.array([-1]), np.array([1.0])))
    m.learn_one(np.ones(D), 1.0)
    a = m.predict_one((np.array([2, 2, 5]), np.array([1.0, 0.5, 2.0])))
    b = m.predict_one((np.array([2, 5]), np.array([1.5, 2.0])))
    assert a == pytest.approx(b, rel=1e-12)


# ------------------------------------------------------------ compiled
def export_cases(items):
    """This file's compiled cases when the session runs a test that needs them
    (``export_support.session_rows`` exports every export test file's cases
    together), and the host ones linked as shared libraries for edgereg.native."""
    if not any(getattr(i, "originalname", "") in _COMPILED for i in items):
        return [], set()
    cases = [(label, _MODELS[label], key, D, 300,
              "classification" if "classification" in label else "regression")
             for label, key in CASES if not S.missing_for(key)]
    native = {(c[0], c[2]) for c in cases if c[2] == "x86_64"} if shutil.which("cc") else set()
    return cases, native


_COMPILED = ("test_exported_sparse_dfop_equals_the_jit_bit_for_bit",
             "test_native_runs_the_exported_sparse_dfop_as_the_jit_does")


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    """Each case's export (done with the session's others) run by a harness that
    adds the sparse rows to the standard stream."""
    if not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 (.ci/export.sh does) to compile and run")
    from edgereg.export.families import family_of

    everything = S.session_rows(request.session, tmp_path_factory)
    rows = {}
    cases = [(label, key) for label, key in CASES if (label, key) in everything]
    done = [dict(json.loads((Path(everything[c]["out"]) / "info.json").read_text()),
                 shared=everything[c]["shared"]) for c in cases]
    for (label, key), info in zip(cases, done, strict=True):
        model = _MODELS[label]()
        family = family_of(model)
        task = family.task
        X, Y, MU = dense_stream(task)
        sparse = sparse_rows(task)
        extra = sparse_c(info["prefix"], family.dtype, sparse, 3)
        jit = S.jit_line(model, family, X, Y, MU, 150, after=sparse_jit(sparse, X, 3))
        out = Path(info["object"]).parent
        try:
            if key in S.LINUX_TARGETS:
                _, _, cc, flags, runner = S.LINUX_TARGETS[key]
                src = S.harness_source(info["prefix"], family, X, Y, MU, 150, extra=extra)
                line = S.build_and_run(out, info, src, cc, flags, runner)
            else:
                src = S.harness_source(info["prefix"], family, X, Y, MU, 150, bare=True,
                                       extra=extra)
                line = S.build_and_run_bare(out, info, src, key)[0]
        except (subprocess.CalledProcessError, RuntimeError) as exc:
            line = f"ERROR {exc} {getattr(exc, 'stderr', '')}"[:2000]
        rows[label, key] = dict(info, c=line, jit=jit)
        (out / "line.json").write_text(json.dumps(rows[label, key]))
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("label, target", CASES)
def test_exported_sparse_dfop_equals_the_jit_bit_for_bit(request, label, target):
    missing = S.missing_for(target)
    if missing:
        pytest.skip(f"toolchain missing: {', '.join(missing)} (.ci/export.sh installs it)")
    if not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 (.ci/export.sh does) to compile and run")
    row = request.getfixturevalue("results")[(label, target)]
    S.assert_equal_to_jit(row)
    assert not {"malloc", "free"} & set(row["undefined"])


@pytest.mark.slow
def test_native_runs_the_exported_sparse_dfop_as_the_jit_does(request, tmp_path):
    """edgereg.native over the host's float64 hashed export: dense rows, a block with
    per-step forgetting and sparse rows bit for bit; its file continues in the JIT."""
    if shutil.which("cc") is None or not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 with a host C compiler (cc)")
    from edgereg.native import NativeModel

    label = "sparse-hashed-float64"
    native, jit = NativeModel(request.getfixturevalue("results")[label, "x86_64"]["shared"]), \
        _MODELS[label]()
    X, Y, MU = dense_stream("regression")
    for t in range(100):
        assert np.float64(native.learn_one(X[t], Y[t])).tobytes() == \
            np.float64(jit.learn_one(X[t], Y[t])).tobytes()
    assert native.learn_many(X[100:200], Y[100:200], forgetting=MU[100:200]).tobytes() == \
        jit.learn_many(X[100:200], Y[100:200], forgetting=MU[100:200]).tobytes()
    for idx, val, y, expected in sparse_rows("regression"):
        if expected == "bad-nnz":  # nnz is the arrays' length here
            continue
        if expected == "raise":  # out of range: refused by both, the state unchanged
            before = native._struct.tobytes()
            for call, args in ((native.learn_one_sparse, (idx, val, y)),
                               (native.predict_one_sparse, (idx, val)),
                               (jit.learn_one, ((idx, val), y))):
                with pytest.raises(ValueError, match="indices must be in"):
                    call(*args)
            assert native._struct.tobytes() == before
            continue
        # decreasing indices: sorted in Python (stably, as the class does) before the call
        assert np.float64(native.predict_one_sparse(idx, val)).tobytes() == \
            np.float64(jit.predict_one((idx, val))).tobytes()
        assert np.float64(native.learn_one_sparse(idx, val, y)).tobytes() == \
            np.float64(jit.learn_one((idx, val), y)).tobytes()
    assert native.predict_one(X[5]) == jit.predict_one(X[5])
    native.save(tmp_path / "n.npz")
    back = edgereg.load(tmp_path / "n.npz")
    for a, b in zip(back.state, jit.state, strict=True):
        assert a.tobytes() == b.tobytes()
