"""The command line: demo, stream (bad rows, checkpoints, resume, SIGTERM), bench."""

from __future__ import annotations

import io
import signal
import subprocess
import sys

import numpy as np
import pytest

import edgereg
from edgereg.cli import main, run_demo, run_stream


def test_demo_prints_a_table_for_every_stream_and_model(capsys, tmp_path):
    rows = run_demo(n=3000, plot=None)
    out = capsys.readouterr().out
    assert {r["stream"] for r in rows} == {"electricity", "sea"}
    assert len(rows) == 6 and "samples/s" in out
    # A linear model on Electricity beats the majority class (57.5 % DOWN).
    dfop = next(r for r in rows if r["stream"] == "electricity" and r["model"].startswith("DFOP"))
    assert dfop["accuracy"] > 0.7


def test_demo_writes_a_plot_when_matplotlib_is_there(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "demo.png"
    run_demo(n=1500, plot=str(path))
    assert path.stat().st_size > 1000
    assert str(path) in capsys.readouterr().out


def _stream(text, **kw):
    out, err = io.StringIO(), io.StringIO()
    counts = run_stream("dfop", kw.pop("params", {}), io.StringIO(text), out, err, **kw)
    return out.getvalue().splitlines(), err.getvalue(), counts


def test_stream_predicts_every_row_and_skips_bad_ones_without_dying():
    lines, err, counts = _stream("1,2,3\n1,nan,2\n2,3,x\n1,2\n0.5,1,\n3,1,4\n")
    assert len(lines) == 6  # one output line per input row, bad ones included
    assert lines[1] == lines[2] == lines[3] == "nan"
    assert counts == {"learnt": 2, "predicted": 1, "skipped": 3}
    assert "line 2" in err and "line 3" in err and "line 4" in err


def test_stream_equals_the_model_and_resumes_from_its_state(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -1.0, 2.0]
    rows = [",".join(repr(float(v)) for v in (*x, t)) for x, t in zip(X, y, strict=True)]
    state = str(tmp_path / "s.npz")
    first, _, _ = _stream("\n".join(rows[:25]) + "\n", state=state, checkpoint_every=10)
    second, err, _ = _stream("\n".join(rows[25:]) + "\n", state=state)
    assert "resumed" in err
    expected = edgereg.DFOP(3).learn_many(X, y)
    got = np.array([float(v) for v in first + second])
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert edgereg.load(state).n_seen_ == 40


def test_stream_checkpoints_on_sigterm(tmp_path):
    state = tmp_path / "s.npz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "edgereg", "stream", "dfop", "--state", str(state)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    for i in range(5):
        proc.stdin.write(f"{i},1,{2 * i}\n")
    proc.stdin.flush()
    for _ in range(5):
        assert proc.stdout.readline()  # each row answered as it arrives (line-buffered)
    proc.send_signal(signal.SIGTERM)
    proc.stdin.write("9,9,9\n")  # wakes the reader so it sees the flag
    proc.stdin.flush()
    proc.wait(timeout=60)
    assert proc.returncode == 0
    assert edgereg.load(state).n_seen_ >= 5


def test_unknown_model_and_bad_param_are_explained():
    with pytest.raises(SystemExit, match="unknown model"):
        run_stream("nope", {}, io.StringIO(""), io.StringIO(), io.StringIO())
    with pytest.raises(SystemExit, match="key=value"):
        main(["stream", "dfop", "--param", "forgetting"])


def test_python_dash_m_runs_the_cli():
    out = subprocess.run(
        [sys.executable, "-m", "edgereg", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("demo", "stream", "bench", "warmup"):
        assert command in out
