"""DriftAlarm exported to C: the wrapped model's blocks and the alarm's in one struct.

The slow tests (``EDGEREG_EXPORT_TESTS=1``, as tests/test_export.py) export
three cases, run tests/export_support.py's harness on the host and on the
Cortex-M4F (qemu-system-arm, mps2-an386) and compare its hash of the predictions and of the learnt
state (the alarm's fields included) with the JIT's on a stream whose
coefficients flip half-way (an alarm fires) with NaN/inf rows under
on_invalid="skip"; ``edgereg.native`` drives the host's library as the JIT.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import edgereg
from edgereg.export import ExportError, export_state
from edgereg.export.families import family_of

sys.path.insert(0, str(Path(__file__).parent))
import export_support as S  # noqa: E402

_MODELS = {
    # The default test ("compare") over DFOP with a fixed forgetting factor.
    "drift-float64": lambda: edgereg.DriftAlarm(edgereg.DFOP(6, 0.05, on_invalid="skip")),
    # The e-process test over the forgetting="auto" bank, float32 (default arithmetic).
    "drift-eprocess-bank-float32": lambda: edgereg.DriftAlarm(
        edgereg.DFOP(6, "auto", dtype="float32", on_invalid="skip"), noise=0.1,
        coef_bound=10.0),
}
#: At most three compiled cases (the CI export stage's budget): the host and the
#: Cortex-M4F (mps2-an386), where the test's log, log1p and exp are newlib's.
_CASES = [("drift-float64", "x86_64"), ("drift-float64", "cortex-m4f"),
          ("drift-eprocess-bank-float32", "x86_64")]
_N = 300
_ASKED = os.environ.get("EDGEREG_EXPORT_TESTS") == "1"


def _jit_run(label):
    """The JIT model after the harness's stream (learn_one, then learn_many)."""
    model = _MODELS[label]()
    X, Y, _ = S.stream(6, _N)
    X = X.astype(model.dtype)
    for t in range(_N // 2):
        model.learn_one(X[t], Y[t])
    model.learn_many(X[_N // 2:], Y[_N // 2:])
    return model


# ------------------------------------------------------------------ fast tests
def test_the_alarms_blocks_follow_the_models_in_one_struct():
    model = _MODELS["drift-float64"]()
    family = family_of(model)
    inner = family_of(model.model)
    names = [b.name for b in family.blocks]
    assert names == [b.name for b in inner.blocks] + [
        "drift_E", "drift_N", "drift_work", "drift_hyper", "drift_codes"]
    learnt = {f.name for f in family.fields if f.learnt}
    assert learnt == set(model._state._fields)  # the model's fields and drift, drifts, ...
    assert not family.forgetting  # DriftAlarm.learn_many takes no per-step factor
    assert family.hyper == inner.hyper and family.codes == inner.codes


@pytest.mark.parametrize("inner, why", [
    (lambda: edgereg.NORMARegressor(6, 48), "over NORMARegressor cannot be exported yet"),
    (lambda: edgereg.PARegressor(6), "over PARegressor cannot be exported yet"),
    (lambda: edgereg.DFOP(6, 0.05, dtype="float32", arithmetic="float32"),
     "computes in float64"),
    (lambda: edgereg.DFOP(6, 0.05, coverage=0.9), "coverage"),
])
def test_wrapped_models_off_the_route_are_refused(inner, why):
    with pytest.raises(ExportError, match=why):
        edgereg.export.export(edgereg.DriftAlarm(inner()))


def _header(family, prefix="edgereg_drift_dfop"):
    from edgereg.export.header import blob_header, write_header

    info = {"description": "test", "triple": "x86_64", "cpu": "", "version": "test"}
    return write_header(family, prefix, info, blob_header(family, "DriftAlarm", {}))


def test_the_header_names_the_models_and_the_alarms_constants_apart():
    for label in _MODELS:
        model = _MODELS[label]()
        text = _header(family_of(model), "my_alarm")
        defines = re.findall(r"^#define (\w+) ", text, re.M)
        assert len(defines) == len(set(defines))  # no name twice
        assert "@prefix@" not in text and "@PREFIX@" not in text
        for name in family_of(model).hyper:  # the model's: index into B's hyper
            assert f"#define MY_ALARM_{name} " in text
        test = "COMPARE_DELTA" if model.test == "compare" else "DELTA"
        assert re.search(rf"#define MY_ALARM_ALARM_HYPER_{test} \d+ /\* = 0\.1 \*/", text)
        assert "static inline int64_t my_alarm_n_drifts(const my_alarm_state *s)" in text
        assert "log, log1p and exp" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_c_readers_give_the_classs_drifts(tmp_path):
    """n_drifts, n_tested and drift_at over the struct (the header alone: static
    inline), on a JIT model's state with its ring of alarms wrapped around."""
    from edgereg.export.header import image

    model = _jit_run("drift-float64")
    counts, ring = model._state.drift_counts, model._state.drifts
    assert model.n_drifts_ >= 1
    counts[2] = 70  # 70 alarms: the ring of 64 has wrapped
    ring[:] = np.arange(1000, 1064)
    family = family_of(model)
    (tmp_path / "edgereg_drift_dfop.h").write_text(_header(family))
    data = image(family, family.current)
    body = ",".join(str(b) for b in data)
    (tmp_path / "r.c").write_text(f"""#include <stdio.h>
#include "edgereg_drift_dfop.h"
static const unsigned char img[{len(data)}] = {{{body}}};
int main(void) {{
    edgereg_drift_dfop_state s;
    memcpy(&s, img, sizeof s);
    printf("%lld %lld %lld", (long long)edgereg_drift_dfop_n_drifts(&s),
           (long long)edgereg_drift_dfop_n_tested(&s),
           (long long)edgereg_drift_dfop_last_drift(&s));
    for (int k = 0; k < 66; k++) printf(" %lld", (long long)edgereg_drift_dfop_drift_at(&s, k));
    printf("\\n");
    edgereg_drift_dfop_init(&s);
    printf("%lld %lld\\n", (long long)edgereg_drift_dfop_n_drifts(&s),
           (long long)edgereg_drift_dfop_last_drift(&s));
    return 0;
}}
""")
    subprocess.run(["gcc", "-std=c11", "-I", str(tmp_path), "-o", str(tmp_path / "r"),
                    str(tmp_path / "r.c")], check=True)
    lines = subprocess.run([str(tmp_path / "r")], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    got = [int(v) for v in lines[0].split()]
    latest_first = model.drifts_[::-1].tolist()
    assert got[:3] == [70, model.state.drift_counts[0], latest_first[0]]
    assert got[3:] == latest_first + [-1, -1]  # the 64 kept, then none
    assert lines[1] == "0 -1"


@pytest.mark.parametrize("label", list(_MODELS))
def test_a_drift_alarms_state_blob_loads_back_and_continues_bit_for_bit(tmp_path, label):
    a = _jit_run(label)
    assert a.n_drifts_ >= 1
    export_state(a, tmp_path / "s.bin", format="bin")
    b = edgereg.load(tmp_path / "s.bin")
    assert type(b) is edgereg.DriftAlarm and b.get_params() == a.get_params()
    for x, y in zip(a.state, b.state, strict=True):
        assert x.tobytes() == y.tobytes()
    X, Y, _ = S.stream(6, 200, seed=1)
    X = X.astype(a.dtype)
    assert a.learn_many(X, Y).tobytes() == b.learn_many(X, Y).tobytes()
    for x, y in zip(a.state, b.state, strict=True):
        assert x.tobytes() == y.tobytes()


def test_the_stream_raises_an_alarm_and_skips_rows():
    """What the bit-identity cases cover: an alarm, rows the model skips, and a row
    the test leaves out (beyond its limits)."""
    for label in _MODELS:
        model = _jit_run(label)
        assert model.n_drifts_ >= 1 and model.n_skipped_ >= 3, label


# ------------------------------------------------------------------ slow tests
def export_cases(items):
    """This file's compiled cases when the session runs a test that needs them
    (``export_support.session_rows`` exports every export test file's cases
    together), and the host ones linked as shared libraries for edgereg.native."""
    if not any(getattr(i, "originalname", "") in _COMPILED for i in items):
        return [], set()
    cases = [(label, _MODELS[label], key, 6, _N, "regression") for label, key in _CASES
             if not S.missing_for(key)]
    native = {(c[0], c[2]) for c in cases if c[2] == "x86_64"} if shutil.which("cc") else set()
    if native:  # on_invalid="raise": driven by edgereg.native alone (no harness)
        cases.append(("drift-float64-raise", _raising, "x86_64", 6, _N, S.EXPORT_ONLY))
        native.add(("drift-float64-raise", "x86_64"))
    return cases, native


def _raising():
    return edgereg.DriftAlarm(edgereg.DFOP(6, 0.05))


_COMPILED = ("test_the_exported_alarm_equals_the_jit_bit_for_bit",
             "test_native_drives_the_exported_alarm_as_the_jit_does",
             "test_a_row_the_model_refuses_leaves_the_exported_alarm_unchanged")


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    if not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 (.ci/export.sh does) to compile and run")
    return S.session_rows(request.session, tmp_path_factory)


@pytest.mark.slow
@pytest.mark.parametrize("label, target", _CASES)
def test_the_exported_alarm_equals_the_jit_bit_for_bit(request, label, target):
    missing = S.missing_for(target)
    if missing:
        pytest.skip(f"toolchain missing: {', '.join(missing)} (.ci/export.sh installs it)")
    if not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 (.ci/export.sh does) to compile and run")
    row = request.getfixturevalue("results")[(label, target)]
    S.assert_equal_to_jit(row)
    # libm: the test's log, log1p and exp (the bank's exp too), nothing else of it.
    assert {"exp", "log", "log1p"} <= set(row["undefined"])


@pytest.mark.slow
@pytest.mark.parametrize("label", sorted({m for m, t in _CASES if t == "x86_64"}))
def test_native_drives_the_exported_alarm_as_the_jit_does(request, tmp_path, label):
    """learn_one, learn_many and predict_one bit for bit; the device's files (npz and
    blob) load in the JIT and continue bit for bit; the JIT's file continues in it
    (over a bank too: its members' factors set from the export's table)."""
    if shutil.which("cc") is None or not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 with a host C compiler")
    from edgereg.native import NativeModel

    row = request.getfixturevalue("results")[(label, "x86_64")]
    native, jit = NativeModel(row["shared"]), _MODELS[label]()
    X, Y, _ = S.stream(6, 400)
    X = X.astype(jit.dtype)

    def same(a, b):
        assert np.asarray(a, np.float64).tobytes() == np.asarray(b, np.float64).tobytes()

    for t in range(150):
        same(native.learn_one(X[t], Y[t]), jit.learn_one(X[t], Y[t]))
    same(native.learn_many(X[150:300], Y[150:300]), jit.learn_many(X[150:300], Y[150:300]))
    same(native.predict_one(X[5]), jit.predict_one(X[5]))
    assert jit.n_drifts_ >= 1
    assert native._fields()["drifts"].tobytes() == jit.state.drifts.tobytes()
    with pytest.raises(ValueError, match="no per-step forgetting"):
        native.learn_many(X[:3], Y[:3], forgetting=0.1)
    native.save(tmp_path / "n.npz")
    native.save_blob(tmp_path / "n.bin")
    rest = slice(300, None)
    for path in (tmp_path / "n.npz", tmp_path / "n.bin"):
        back = edgereg.load(path)
        for x, y in zip(back.state, jit.state, strict=True):
            assert x.tobytes() == y.tobytes()
        same(back.learn_many(X[rest], Y[rest]), copy.deepcopy(jit).learn_many(X[rest], Y[rest]))
    jit.save(tmp_path / "j.npz")
    fresh = NativeModel(row["shared"])
    if jit.model.__class__.__name__ == "DFOPBank":  # members placed from the window's table
        assert native.layout["derived_work"]  # (a moved window: tests/test_export.py's bank)
    fresh.load(tmp_path / "j.npz")  # its alarm count (at most the rows tested) accepted
    same(fresh.learn_many(X[rest], Y[rest]), jit.learn_many(X[rest], Y[rest]))
    for x, y in zip(edgereg.load(_saved(fresh, tmp_path)).state, jit.state, strict=True):
        assert x.tobytes() == y.tobytes()


def _saved(native, tmp_path):
    native.save(tmp_path / "again.npz")
    return tmp_path / "again.npz"


@pytest.mark.slow
def test_a_row_the_model_refuses_leaves_the_exported_alarm_unchanged(request):
    """Under on_invalid="raise" a refused row raises before the alarm's test sees it,
    in the class and in C (status INVALID, the state unchanged: the test's counts
    too); the other rows as the JIT's, bit for bit."""
    if shutil.which("cc") is None or not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 with a host C compiler")
    from edgereg.native import NativeModel

    native = NativeModel(request.getfixturevalue("results")[("drift-float64-raise",
                                                              "x86_64")]["shared"])
    jit = _raising()
    X, Y, _ = S.stream(6, _N)  # NaN and inf rows, a 1e300 target
    refused = 0
    for t in range(_N):
        try:
            expected = jit.learn_one(X[t], Y[t])
        except ValueError:
            with pytest.raises(ValueError):
                native.learn_one(X[t], Y[t])
            refused += 1
        else:
            assert np.float64(native.learn_one(X[t], Y[t])).tobytes() == \
                np.float64(expected).tobytes()
        if t % 50 == 0 or refused:
            fields = native._fields()
            for k, v in jit.state._asdict().items():
                assert v.tobytes() == fields[k].tobytes(), (t, k)
    assert refused >= 3 and jit.n_drifts_ >= 1
