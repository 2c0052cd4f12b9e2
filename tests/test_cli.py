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
    assert len(rows) == 8 and "samples/s" in out
    assert "learnt forgetting_ ends at" in out
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
    lines, err, counts = _stream("1,2,3\n1,nan,2\n2,3,x\n1_0,2,3\n0.5,1,\n3,1,4\n")
    assert len(lines) == 6  # one output line per input row, bad ones included
    assert lines[1] == lines[2] == lines[3] == "nan"
    assert counts == {"learnt": 2, "predicted": 1, "skipped": 3}
    assert "line 2" in err and "line 3" in err and "line 4" in err
    assert "3 rows skipped" in err  # counted at exit


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


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stream_exits_promptly_on_a_signal_while_idle_with_a_checkpoint(tmp_path, signum):
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
    proc.send_signal(signum)  # stdin stays open and idle: no line to wake the reader
    proc.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr.read()
    assert edgereg.load(state).n_seen_ == 5  # every line read was learnt, then saved


def _rows(X, Y):
    return [",".join(repr(float(v)) for v in (*x, *np.atleast_1d(t)))
            for x, t in zip(X, Y, strict=True)]


def test_stream_target_by_name_from_a_detected_header():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = X @ [1.0, -1.0, 2.0]
    # The target is the second column of the file, named "y".
    lines = ["a,y,b,c"] + [",".join(repr(float(v)) for v in (x[0], t, x[1], x[2]))
                           for x, t in zip(X, y, strict=True)]
    got, err, counts = _stream("\n".join(lines) + "\n", target="y")
    assert counts == {"learnt": 30, "predicted": 0, "skipped": 0}
    np.testing.assert_allclose(np.array(got, dtype=float), edgereg.DFOP(3).learn_many(X, y),
                               rtol=1e-9)
    # --header says so explicitly, even when the names look like numbers.
    numeric_names = ["1,2,3,4"] + lines[1:]
    got2, _, _ = _stream("\n".join(numeric_names) + "\n", target="2", skip_header=True)
    assert len(got2) == 30


def test_stream_target_name_errors_name_the_columns():
    with pytest.raises(SystemExit, match="no such column; the columns are: a, y, b"):
        _stream("a,y,b\n1,2,3\n", target="z")
    with pytest.raises(SystemExit, match="is not a header"):
        _stream("1,2,3\n", target="y")
    with pytest.raises(SystemExit, match="names a column twice"):
        _stream("a,y,b\n1,2,3\n", target="y,1")
    with pytest.raises(SystemExit, match="learns one target; --target names 2"):
        _stream("a,y1,y2\n1,2,3\n", target="y1,y2")


def test_stream_several_targets_for_mores_one_column_each(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    Y = np.column_stack([X @ [1.0, 0.0, 2.0], X @ [0.0, -1.0, 1.0]])
    text = "x1,x2,x3,y1,y2\n" + "\n".join(_rows(X, Y)) + "\n"
    for name in ("mores", "somor"):
        out, err = io.StringIO(), io.StringIO()
        state = str(tmp_path / f"{name}.npz")
        counts = run_stream(name, {}, io.StringIO(text), out, err, target="y1,y2", state=state)
        assert counts["learnt"] == 40
        got = np.array([[float(v) for v in line.split(",")] for line in out.getvalue().split()])
        model = getattr(edgereg, name.upper())(3, 2)
        np.testing.assert_allclose(got, model.learn_many(X, Y), rtol=1e-9, atol=1e-12)
        # Resuming checks the state's number of targets against --target.
        with pytest.raises(SystemExit, match="holds a model of 2 targets; --target names 1"):
            run_stream(name, {}, io.StringIO("x1,x2,x3,y1\n1,2,3,4\n"), io.StringIO(),
                       io.StringIO(), target="y1", state=state)
    # Order of the target columns is the order given.
    out = io.StringIO()
    run_stream("pa", {}, io.StringIO(text), out, io.StringIO(), target="y2,y1")
    first = [float(v) for v in out.getvalue().split()[5].split(",")]
    ref = edgereg.PARegressor(3, 2).learn_many(X[:6], Y[:6, ::-1])[5]
    np.testing.assert_allclose(first, ref, rtol=1e-9, atol=1e-12)


def test_stream_target_by_name_from_the_command_line(tmp_path):
    csv = tmp_path / "log.csv"
    csv.write_text("time,temp,load\n0,20.5,1.0\n1,21.0,1.5\n2,21.4,2.0\n")
    done = subprocess.run([sys.executable, "-m", "edgereg", "stream", "dfop", "--target", "temp",
                           "--input", str(csv)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split()) == 3
    done = subprocess.run([sys.executable, "-m", "edgereg", "stream", "dfop", "--target", "tmp",
                           "--input", str(csv)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "the columns are: time, temp, load" in done.stderr


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


def test_a_wider_row_is_an_error_not_a_skip(tmp_path):
    state = tmp_path / "s.npz"
    with pytest.raises(SystemExit, match="line 3 has 4 columns, the stream started with 3"):
        _stream("1,2,3\n2,3,4\n1,2,3,4\n3,4,5\n", state=str(state))
    assert edgereg.load(state).n_seen_ == 2  # the rows before it, checkpointed
    # A one-field first row no longer fixes n_features = 1 and skips every later row.
    with pytest.raises(SystemExit, match="line 1 has no input column besides the target"):
        _stream("5\n1,2,3\n")
    done = subprocess.run([sys.executable, "-m", "edgereg", "stream", "dfop"],
                          input="1,2,3\n1,2,3,4\n", capture_output=True, text=True)
    assert done.returncode != 0 and "started with 3" in done.stderr


def test_a_short_row_is_a_bad_row_skipped_and_counted(tmp_path):
    # What a power cut leaves at the end of a logger's line: fewer columns than
    # the header. Skipped, reported, counted; the stream goes on and exits 0.
    text = "a,b,c,d,y\n1,2,3,4,5\n1.0,2.0\n2,3,4,5,6\n"
    lines, err, counts = _stream(text, state=str(tmp_path / "s.npz"))
    assert lines == [lines[0], "nan", lines[2]] and lines[0] != "nan"
    assert counts == {"learnt": 2, "predicted": 0, "skipped": 1}
    assert "line 3: skipped (2 columns, the stream started with 5" in err
    assert "1 rows skipped" in err
    assert edgereg.load(tmp_path / "s.npz").n_seen_ == 2
    done = subprocess.run([sys.executable, "-m", "edgereg", "stream", "dfop"],
                          input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "nan" and "line 3: skipped" in done.stderr
    # --strict keeps the stop, with the rows before it checkpointed.
    with pytest.raises(SystemExit, match="line 3 has 2 columns, the stream started with 5"):
        _stream(text, state=str(tmp_path / "t.npz"), strict=True)
    assert edgereg.load(tmp_path / "t.npz").n_seen_ == 1
    done = subprocess.run([sys.executable, "-m", "edgereg", "stream", "dfop", "--strict"],
                          input=text, capture_output=True, text=True)
    assert done.returncode == 1 and "line 3 has 2 columns" in done.stderr


def test_a_bad_param_is_an_error_with_a_non_zero_exit():
    with pytest.raises(SystemExit, match="cannot make dfop"):
        _stream("1,2,3\n", params={"forgeting": 0.1})
    with pytest.raises(SystemExit, match="cannot make dfop"):
        _stream("1,2,3\n", params={"forgetting": 7.0})


def test_an_over_long_line_is_an_error_not_a_memory_error():
    with pytest.raises(SystemExit, match="longer than 65536"):
        _stream("1,2,3\n" + "1," * 600_000 + "\n")


def test_plain_decimal_numbers_only_and_a_bom_is_ignored():
    lines, err, counts = _stream("\ufeff1,2,3\n\u0661,2,3\n1e3,2.5,-.5\ninfinity,1,2\n")
    assert counts == {"learnt": 2, "predicted": 0, "skipped": 2}  # the BOM row is learnt
    assert "line 2" in err and "line 4" in err


def test_stream_with_auto_forgetting_equals_the_bank_and_resumes(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, -1.0, 2.0]
    rows = [",".join(repr(float(v)) for v in (*x, t)) for x, t in zip(X, y, strict=True)]
    state = str(tmp_path / "s.npz")
    params = {"forgetting": "auto"}
    first, _, _ = _stream("\n".join(rows[:35]) + "\n", state=state, params=params)
    second, err, _ = _stream("\n".join(rows[35:]) + "\n", state=state, params=params)
    assert "resumed" in err
    expected = edgereg.DFOP(3, "auto").learn_many(X, y)
    np.testing.assert_allclose([float(v) for v in first + second], expected, rtol=1e-9)
    resumed = edgereg.load(state)
    assert type(resumed) is edgereg.DFOPBank and resumed.n_seen_ == 60
    with pytest.raises(SystemExit, match="differs"):
        _stream("1,2,3\n", state=state, params={"forgetting": 0.1})
    with pytest.raises(SystemExit, match="holds a DFOPBank, not a RLS"):
        run_stream("rls", {}, io.StringIO("1,2,3\n"), io.StringIO(), io.StringIO(), state=state)


def test_a_param_that_differs_from_the_resumed_state_is_an_error(tmp_path):
    state = str(tmp_path / "s.npz")
    _stream("1,2,3\n2,3,4\n", state=state, params={"forgetting": 0.05})
    with pytest.raises(SystemExit, match=r"--param forgetting=0.1 differs .*\(forgetting=0.05\)"):
        _stream("1,2,3\n", state=state, params={"forgetting": 0.1})
    lines, _, _ = _stream("1,2,3\n", state=state, params={"forgetting": 0.05})  # the same: fine
    assert len(lines) == 1


def test_a_missing_state_folder_fails_at_the_start(tmp_path):
    with pytest.raises(SystemExit, match="does not exist"):
        _stream("", state=str(tmp_path / "no" / "such" / "s.npz"))


def test_stream_selective_prints_a_line_when_a_switch_is_declared():
    from edgereg.streams import switch_stream

    X, y, _, _ = switch_stream(4000, 3, switch_at=2000, distance=2.0, seed=2)
    rows = "".join(",".join(repr(float(v)) for v in (*x, t)) + "\n"
                   for x, t in zip(X, y, strict=True))
    out, err = io.StringIO(), io.StringIO()
    run_stream("selective", {}, io.StringIO(rows), out, err)
    expected = edgereg.SelectiveSampler(3)
    expected.learn_many(X, y)
    switch_lines = [line for line in err.getvalue().splitlines() if "switch declared" in line]
    assert expected.n_switches_ >= 1
    assert len(switch_lines) == expected.n_switches_
    first = int(expected.switches_[0])
    assert switch_lines[0].startswith(f"line {first + 1}: switch declared at sample {first} ")
    assert "log e-value" in switch_lines[0] and ">= log(1/delta) = 2.303" in switch_lines[0]


def test_stream_interval_writes_lower_prediction_upper_and_empty_fields_are_missing():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ [1.0, -2.0] + 0.1 * rng.normal(size=60)
    rows = [f"{a},{b},{t}" for (a, b), t in zip(X, y, strict=True)]
    rows[40] = f",{X[40, 1]},{y[40]}"  # a missing input
    text = "\n".join(rows) + "\n"
    out, err = io.StringIO(), io.StringIO()
    counts = run_stream("dfop", {"missing": "impute"}, io.StringIO(text), out, err,
                        interval=0.9)
    assert counts == {"learnt": 60, "predicted": 0, "skipped": 0}
    got = np.array([[float(v) for v in line.split(",")] for line in out.getvalue().split()])
    Xm = X.copy()
    Xm[40, 0] = np.nan
    expected = edgereg.DFOP(2, coverage=0.9, missing="impute").learn_many(Xm, y, interval=True)
    np.testing.assert_allclose(got[1:], expected[1:], rtol=1e-9)  # printed with 10 digits
    assert np.isinf(got[0, [0, 2]]).all()
    out2, err2 = io.StringIO(), io.StringIO()
    counts = run_stream("dfop", {}, io.StringIO(text), out2, err2)  # without impute: skipped
    assert counts["skipped"] == 1 and "missing input" in err2.getvalue()


def test_stream_interval_for_sparse_dfop_and_mores_per_target():
    """--interval with SparseDFOP (one target) and MORES (lower, prediction, upper for
    each target in turn), as the models' own learn_one(..., interval=True) gives them;
    a skipped row writes NaN in every column."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    Y = X @ rng.normal(size=(3, 2)) + 0.1 * rng.normal(size=(50, 2))
    Xs = X.copy()
    Xs[20, 1] = np.inf  # an inf input: skipped
    text = "\n".join(",".join(repr(float(v)) for v in r) for r in np.hstack([Xs, Y])) + "\n"

    out, err = io.StringIO(), io.StringIO()
    counts = run_stream("mores", {}, io.StringIO(text), out, err, target="3,4", interval=0.9)
    assert counts == {"learnt": 49, "predicted": 0, "skipped": 1}
    got = np.array([[float(v) for v in line.split(",")] for line in out.getvalue().split()])
    assert got.shape == (50, 6) and np.isnan(got[20]).all()
    model = edgereg.MORES(3, 2, coverage=0.9)
    expected = [model.learn_one(X[t], Y[t], interval=True).reshape(-1)
                for t in range(50) if t != 20]
    np.testing.assert_allclose(np.delete(got, 20, axis=0)[1:], np.array(expected)[1:],
                               rtol=1e-9)  # printed with 10 digits

    Xd = np.hstack([X, Y[:, :1]])
    text = "\n".join(",".join(repr(float(v)) for v in r) for r in np.hstack([Xd, Y[:, 1:]])) + "\n"
    out, err = io.StringIO(), io.StringIO()
    counts = run_stream("sparse-dfop", {"n_components": 3}, io.StringIO(text), out, err,
                        interval=0.9)
    assert counts["learnt"] == 50
    got = np.array([[float(v) for v in line.split(",")] for line in out.getvalue().split()])
    model = edgereg.SparseDFOP(4, n_components=3, coverage=0.9)
    expected = model.learn_many(Xd, Y[:, 1], interval=True)
    np.testing.assert_allclose(got[1:], expected[1:], rtol=1e-9)
    assert got.shape == (50, 3)
