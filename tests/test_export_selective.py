"""SelectiveSampler exported to C: the JIT's results bit for bit.

Two compiled cases (the host and the Cortex-M4F, one model): the standard
harness of tests/export_support.py (learn_one then learn_many over the hostile
stream) and a second harness, on the same object, running the selective round
as two C calls (``assess``, then ``commit`` with the label when it was asked
for) against ``process_one`` / ``process_many``: predictions, labels asked and
the learnt state, hashed. The stream switches concept half way; the model's
comparison test declares a switch in both runs. The host case's object is also
linked as a shared library for ``edgereg.native``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import edgereg
from edgereg.export.families import family_of

sys.path.insert(0, str(Path(__file__).parent))
import export_support as S  # noqa: E402

_ASKED = os.environ.get("EDGEREG_EXPORT_TESTS") == "1"
D, N = 6, 1000
#: test_every=1: the comparison test sees every asked label and fires on this stream
#: (its default, 4, declares no switch within 2000 rows of it).
PARAMS = dict(n_features=D, test_every=1, on_invalid="skip")
TARGETS = ("x86_64", "cortex-m4f")


def _model():
    return edgereg.SelectiveSampler(**PARAMS)


def _round_source(prefix: str, family, X: np.ndarray, Y: np.ndarray, bare: bool) -> str:
    """A C program running the stream through assess / commit and printing
    ``ROUND <hash> asked <k> skipped <s>`` (hash: per row the prediction's 8 bytes
    and the asked flag's byte, then the learnt fields)."""
    n, d = X.shape
    P = prefix.upper()
    ut, ub = ("uint64_t", "uint64") if family.dtype.itemsize == 8 else ("uint32_t", "uint32")
    # Bare metal: the most stack any assess or commit of the stream used (startup.c's
    # painting), on a second line.
    head = ("void semihost_write(const char *);\n#define REPORT(t) semihost_write(t)\n"
            "void stack_paint(void);\nunsigned stack_used(void);\n"
            "#define PAINT() stack_paint()\n"
            "#define USED(m) do { unsigned u_ = stack_used(); if (u_ > m) m = u_; } while (0)\n"
            if bare else "#include <stdio.h>\n#define REPORT(t) fputs(t, stdout)\n"
            "#define PAINT() ((void)0)\n#define USED(m) ((void)0)\n")
    hashed = S.hash_learnt(family)
    return f"""#include <math.h>
#include <stdint.h>
#include <string.h>
#include "{prefix}.h"
{head}{S._hex_array("Xbits", X.astype(family.dtype), ut, ub)}
{S._hex_array("Ybits", Y.astype(np.float64), "uint64_t", "uint64")}
static {prefix}_state s;
static {prefix}_real X[{n * d}];
static double Y[{n}];
{S.C_HELPERS}int main(void) {{
    char line[160], *p = line;
    memcpy(X, Xbits, sizeof X); memcpy(Y, Ybits, sizeof Y);
    {prefix}_init(&s);
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t asked = 0, skipped = 0;
    unsigned st_assess = 0, st_commit = 0;
    if ({prefix}_commit(&s, 1.0) != {P}_NO_ROUND) REPORT("commit without assess\\n");
    for (int t = 0; t < {n}; t++) {{
        double yhat = 0.0;
        int64_t ask = -1;
        PAINT();
        int64_t status = {prefix}_assess(&s, X + (size_t)t * {d}, &yhat, &ask);
        USED(st_assess);
        unsigned char q = (unsigned char)(status == {P}_OK && ask == 1);
        if (status == {P}_OK) {{
            if (ask != 0 && ask != 1) REPORT("ask is not 0 or 1\\n");
            PAINT();
            status = {prefix}_commit(&s, ask ? Y[t] : NAN);
            USED(st_commit);
            if (status != {P}_OK) q = 0;
        }} else if (ask != 0) REPORT("an invalid row asked\\n");
        skipped += status != {P}_OK;
        asked += q;
        h = fnv(h, (const unsigned char *)&yhat, sizeof yhat);
        h = fnv(h, &q, 1);
    }}
    if ({prefix}_commit(&s, 1.0) != {P}_NO_ROUND) REPORT("a round committed twice\\n");
{hashed}    p = put_text(p, "ROUND "); p = put_hex(p, h);
    p = put_text(p, " asked "); p = put_int(p, asked);
    p = put_text(p, " skipped "); p = put_int(p, skipped);
    *p++ = '\\n'; *p = 0;
    REPORT(line);
    if (st_assess | st_commit) {{
        p = line; p = put_text(p, "STACK assess "); p = put_int(p, st_assess);
        p = put_text(p, " commit "); p = put_int(p, st_commit); *p++ = '\\n'; *p = 0;
        REPORT(line);
    }}
    return 0;
}}
"""


def _round_reference(X: np.ndarray, Y: np.ndarray) -> tuple[str, edgereg.SelectiveSampler]:
    """The JIT's ROUND line: process_one row by row (the oracle returns y[t]), checked
    equal to process_many first (predictions, labels asked, learnt state)."""
    one, many = _model(), _model()
    preds, asked = [], []
    for t in range(X.shape[0]):
        pred, q = one.process_one(X[t], lambda t=t: Y[t])
        preds.append(pred)
        asked.append(q)
    p_many, a_many = many.process_many(X, Y)
    assert np.array_equal(preds, p_many) and np.array_equal(asked, a_many)
    for name, value in one.state._asdict().items():
        assert np.asarray(value).tobytes() == np.asarray(many.state._asdict()[name]).tobytes()
    family = family_of(one)
    rows = np.zeros(X.shape[0], dtype=[("p", "<f8"), ("q", "u1")])
    rows["p"], rows["q"] = preds, asked
    h = S.fnv1a(rows.tobytes())
    blocks = {name: a.reshape(-1) for name, a in family.current.items()}
    for name, first, count in S.learnt_ranges(family):
        h = S.fnv1a(blocks[name][first: first + count].tobytes(), h)
    return (f"ROUND {h:016x} asked {int(np.sum(asked))} skipped {one.n_skipped_}", one)


def test_selective_sampler_is_exportable_with_its_further_calls():
    family = family_of(_model())
    assert set(family.functions) == {"learn_one", "learn_many", "predict_one", "assess",
                                     "commit"}
    assert [b.name for b in family.blocks] == ["A", "N", "E", "Z", "F", "hyper", "codes",
                                               "round"]
    assert "@prefix@_assess_blocks" in "\n".join(family.c_api)
    # Without a switch test E is empty: one unused slot in the struct, nothing learnt there.
    plain = family_of(edgereg.SelectiveSampler(3, detect_switch=False))
    assert plain.blocks[2].size == 1
    assert "switch_test" not in {f.name for f in plain.fields}


def test_the_test_stream_switches_and_skips():
    """What the bit-identity cases cover: switches in the learn run (its learn_many
    half) and in the selective run, NaN/inf rows and an unknown label skipped."""
    X, Y, _ = S.stream(D, N, "classification")
    _, model = _round_reference(X, Y)
    assert model.n_switches_ >= 1 and model.n_skipped_ >= 2
    learnt = _model()
    for t in range(N // 2):
        learnt.learn_one(X[t], Y[t])
    learnt.learn_many(X[N // 2:], Y[N // 2:])
    assert learnt.n_switches_ >= 1 and learnt.n_skipped_ >= 3


def export_cases(items):
    """This file's compiled cases when the session runs a test that needs them
    (``export_support.session_rows`` exports every export test file's cases
    together), and the host one linked as a shared library for edgereg.native."""
    if not any("exported" in getattr(i, "fixturenames", ()) for i in items):
        return [], set()
    targets = [t for t in TARGETS if not S.missing_for(t)]
    native = {("selective", "x86_64")} if shutil.which("cc") else set()
    return [("selective", _model, t, D, N, "classification") for t in targets], native


@pytest.fixture(scope="module")
def exported(request, tmp_path_factory):
    if not _ASKED:
        pytest.skip("slow: set EDGEREG_EXPORT_TESTS=1 (.ci/export.sh does) to compile and run")
    everything = S.session_rows(request.session, tmp_path_factory)
    rows = [everything["selective", t] for t in TARGETS if ("selective", t) in everything]
    X, Y, _ = S.stream(D, N, "classification")
    reference, _ = _round_reference(X, Y)
    family = family_of(_model())
    out = {}
    for row in rows:
        folder = Path(row["out"])
        info = json.loads((folder / "info.json").read_text())
        bare = row["target"] in S.BARE_TARGETS
        source = _round_source(info["prefix"], family, X, Y, bare)
        if bare:  # the harness replaced by the rounds' (its line is in row["c"])
            line, _ = S.build_and_run_bare(folder, info, source, row["target"])
        else:
            _, _, cc, flags, runner = S.LINUX_TARGETS[row["target"]]
            line = S.build_and_run(folder, info, source, cc, flags, runner)
        out[row["target"]] = dict(row, rounds=line, rounds_jit=reference)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_exported_selective_sampler_equals_the_jit_bit_for_bit(exported, target):
    missing = S.missing_for(target)
    if missing:
        pytest.skip(f"toolchain missing: {', '.join(missing)} (.ci/export.sh installs it)")
    row = exported[target]
    S.assert_equal_to_jit(row)
    rounds = row["rounds"].splitlines()[0]
    assert rounds == row["rounds_jit"]
    assert re.fullmatch(r"ROUND [0-9a-f]{16} asked [1-9]\d* skipped [1-9]\d*", rounds)
    for name in ("log", "pow"):  # the query threshold's pow, the test's logs: libm
        assert any(s.startswith(name) for s in row["undefined"]), row["undefined"]


@pytest.mark.slow
def test_native_drives_the_exported_selective_sampler_as_the_jit_does(exported, tmp_path):
    """edgereg.native over the host's shared library: learn_one, learn_many,
    predict_one and process_one (a Python oracle) bit for bit the JIT's, with the
    stream's switch and its skipped rows; its file loads in the JIT and continues."""
    from edgereg.native import NativeModel

    row = exported.get("x86_64")
    if row is None or not row.get("shared"):
        pytest.skip("needs the host's export and a host C compiler (cc)")
    X, Y, _ = S.stream(D, N, "classification")
    native, jit = NativeModel(row["shared"]), _model()
    for t in range(N // 2):
        assert native.learn_one(X[t], Y[t]) == jit.learn_one(X[t], Y[t])
    assert native.learn_many(X[N // 2:], Y[N // 2:]).tobytes() == \
        jit.learn_many(X[N // 2:], Y[N // 2:]).tobytes()
    assert native.predict_one(X[3]) == jit.predict_one(X[3])
    assert jit.n_switches_ >= 1
    native.save(tmp_path / "n.npz")
    back = edgereg.load(tmp_path / "n.npz")
    for a, b in zip(back.state, jit.state, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    native, jit = NativeModel(row["shared"]), _model()
    calls = {"native": 0, "jit": 0}

    def oracle(who, t):
        calls[who] += 1
        return Y[t]

    for t in range(N):
        got = native.process_one(X[t], lambda t=t: oracle("native", t))
        assert got == jit.process_one(X[t], lambda t=t: oracle("jit", t))
        assert calls["native"] == calls["jit"]
    assert jit.n_switches_ >= 1 and jit.n_skipped_ >= 1
    native.save(tmp_path / "p.npz")
    for a, b in zip(edgereg.load(tmp_path / "p.npz").state, jit.state, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    # learn_one overwrites the scratch an assessed round keeps: commit then refuses.
    x = np.ascontiguousarray(X[1])
    assert native._assess(*native._pointers, x.ctypes.data_as(native._real), native._yhat_p,
                          native._ask_p) == 0
    native.learn_one(X[2], Y[2])
    assert native._commit(*native._pointers, 1.0) == 3  # NO_ROUND


@pytest.mark.parametrize("params", [{}, {"detect_switch": False},
                                    {"switch_test": "spec", "window_max": 60,
                                     "dtype": "float32"}])
def test_a_state_blob_loads_back_and_continues_bit_for_bit(tmp_path, params):
    """export_state's blob (the struct a device holds) read by edgereg.load: the
    learnt state equal, and learning goes on as the model's own."""
    from edgereg.export import export_state

    X, Y, _ = S.stream(D, 400, "classification")
    model = edgereg.SelectiveSampler(D, on_invalid="skip", **params)
    model.process_many(X[:300], Y[:300])
    export_state(model, tmp_path / "s.bin", format="bin")
    back = edgereg.load(tmp_path / "s.bin")
    for a, b in zip(back.state, model.state, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    assert back.process_many(X[300:], Y[300:])[0].tobytes() == \
        model.process_many(X[300:], Y[300:])[0].tobytes()
    for a, b in zip(back.state, model.state, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
