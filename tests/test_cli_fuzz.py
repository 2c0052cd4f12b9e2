"""A CSV fuzzer for ``edgereg stream``.

Random streams (well-formed numbers, text, every kind of float spelling,
control characters, stray delimiters, very long cells, width changes, empty
targets) go through ``run_stream`` in process: it must end with its counts
or stop with a clear ``SystemExit`` message, never another exception, every
output line must be one prediction per target (or ``nan``), and the state
file it leaves must load. A few cases also run as ``python -X faulthandler -m
edgereg stream`` subprocesses. Depth: ``EDGEREG_HOSTILE`` (``contract_data.hostile_examples``).
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from contract_data import hostile_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import edgereg
from edgereg.cli import run_stream

# The slow tier (pytest -m slow; CI's hostile stage runs it at depth).
pytestmark = pytest.mark.slow

EXAMPLES = hostile_examples(60)

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["1e308", "-1e308", "1e-320", "5e152", "4294967295", "0", "-0", ".5",
                     "5.", "1_0", "١", "infinity", "NaN", "+inf", "0x10", "1e", "--1", " 3 ",
                     "", "abc", "\x00", "\ufeff1", "1,5", '"2"']),
)


@st.composite
def streams(draw) -> str:
    width = draw(st.integers(1, 5))
    rows = []
    for _ in range(draw(st.integers(0, 30))):
        w = width if draw(st.integers(0, 9)) else draw(st.integers(1, 7))
        cells = [draw(NUMBERS) for _ in range(w)]
        rows.append(draw(st.sampled_from([",", ";", ", "])).join(cells) if draw(
            st.integers(0, 19)) == 0 else ",".join(cells))
    if draw(st.booleans()):
        rows.insert(0, ",".join(f"c{i}" for i in range(width)))  # a header
    return "\n".join(rows) + draw(st.sampled_from(["", "\n", "\r\n"]))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=streams(), model=st.sampled_from(["dfop", "norma-regressor", "pa", "selective"]))
def test_stream_survives_any_csv(tmp_path, text, model):
    state = tmp_path / f"{model}.npz"
    if state.exists():
        state.unlink()
    out, err = io.StringIO(), io.StringIO()
    try:
        run_stream(model, {}, io.StringIO(text), out, err, state=str(state),
                   checkpoint_every=5)
    except SystemExit as exc:
        assert str(exc.code).startswith("edgereg: "), exc.code  # a message, not a traceback
    for line in out.getvalue().splitlines():
        for cell in line.split(","):
            float(cell)  # every answer is a number or nan
    if state.exists():
        edgereg.load(state)


def test_stream_as_a_process_on_garbage_exits_cleanly(tmp_path):
    rng = np.random.default_rng(5)
    garbage = bytes(rng.integers(0, 256, size=4000, dtype=np.uint8))
    cases = [garbage, b"1,2,3\n" * 50 + garbage, b"\xef\xbb\xbfa,b,y\n1,2,3\n4,5,6\n"]
    for blob in cases:
        done = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-m", "edgereg", "stream", "dfop",
             "--state", str(tmp_path / "s.npz")],
            input=blob, capture_output=True, timeout=120,
        )
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
        assert done.returncode in (0, 1), done.returncode
