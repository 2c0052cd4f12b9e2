"""``edgereg`` command line: demo, stream, bench, warmup, data.

``edgereg demo``
    The README's main job: DFOP (mu = 0.01 and mu = "auto"), RLS and a NORMA
    classifier learn the bundled Electricity stream and a SEA stream
    prequentially; prints accuracy and samples/s and, when matplotlib is
    installed, plots prequential accuracy and the forgetting factor the
    auto model learns over time.
``edgereg stream MODEL``
    Reads CSV rows from a file or stdin as they arrive, prints one prequential
    prediction per row, checkpoints the state atomically, never dies on a bad
    row (a bad value or a row cut short: reported on stderr and skipped;
    ``--strict`` stops at a short row).
``edgereg bench [--quick]``
    Samples/s of every model on this machine, one table.
``edgereg warmup``
    Compiles every kernel into numba's on-disk cache (for deployment images).
``edgereg data fetch NAME...``
    Downloads datasets from their public sources into the user's data folder
    (sha256-checked, resumable); ``edgereg data path`` prints that folder.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

import numpy as np

from ._bench import Progress, run_bench, run_cache, warmup

# --------------------------------------------------------------------- demo


def _with_bias(X: np.ndarray) -> np.ndarray:
    """Append a constant-1 input so linear models learn an intercept."""
    return np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))


def _demo_streams(n: int | None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    from . import datasets, streams

    elec = datasets.load("elec2")
    X, y = elec.X, elec.y
    if n is not None:
        X, y = X[:n], y[:n]
    Xs, ys, _ = streams.sea(n_samples=n or 50_000, seed=1)
    # SEA inputs live in [0, 10]: centre and scale them like the normalised Electricity.
    return [("electricity", _with_bias(X), y), ("sea", _with_bias((Xs - 5.0) / 5.0), ys)]


def _demo_models(d: int) -> dict[str, Any]:
    from . import DFOP, RLS, NORMAClassifier

    return {
        "DFOP (mu=0.01)": DFOP(d, 0.01, task="classification"),
        "DFOP (mu=auto)": DFOP(d, "auto", task="classification"),
        "RLS": RLS(d, task="classification"),
        "NORMA (rbf, budget 200)": NORMAClassifier(
            d, budget=200, gamma=1.0, learning_rate=0.2, regularization=0.01, margin=1.0
        ),
    }


def run_demo(n: int | None = None, plot: str | None = "edgereg-demo.png") -> list[dict[str, Any]]:
    """Run the demo, print its table, return its rows."""
    from .metrics import windowed_accuracy

    rows: list[dict[str, Any]] = []
    curves: dict[str, dict[str, np.ndarray]] = {}
    drift: dict[str, np.ndarray] = {}  # stream -> forgetting_ of the auto model over time
    streams = _demo_streams(n)
    progress = Progress(len(streams) * len(_demo_models(1)), "edgereg demo")
    for name, X, y in streams:
        curves[name] = {}
        for model_name, model in _demo_models(X.shape[1]).items():
            model.learn_many(X[:2], y[:2])  # compile outside the timing
            model.reset()
            t0 = time.perf_counter()
            pred = model.learn_many(X, y)
            elapsed = time.perf_counter() - t0
            if hasattr(model, "forgetting_"):
                drift[name] = _forgetting_over_time(model, X, y)
            hits = pred == y
            rows.append(
                {
                    "stream": name,
                    "model": model_name,
                    "samples": len(y),
                    "accuracy": float(hits.mean()),
                    "samples_per_s": len(y) / elapsed,
                }
            )
            curves[name][model_name] = windowed_accuracy(y, pred, min(1000, len(y)))
            progress.advance()
    progress.close()
    print("Prequential (test-then-train) accuracy on bundled Electricity and a SEA stream")
    print(f"{'stream':<12} {'model':<26} {'samples':>8} {'accuracy':>9} {'samples/s':>12}")
    for r in rows:
        print(
            f"{r['stream']:<12} {r['model']:<26} {r['samples']:>8} {r['accuracy']:>9.4f} "
            f"{r['samples_per_s']:>12,.0f}"
        )
    for name, trace in drift.items():
        print(f"{name}: the auto model's learnt forgetting_ ends at {trace[-1, 1]:.4g} "
              f"(from {trace[:, 1].min():.3g} to {trace[:, 1].max():.3g} over the stream)")
    if plot:
        _plot_demo(curves, drift, plot)
    return rows


def _forgetting_over_time(model: Any, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(sample, forgetting_) every len/200 samples: the same learning again, in blocks
    (a bank's learn_many over blocks is bit for bit one call)."""
    model.reset()
    step = max(1, len(y) // 200)
    trace = []
    for start in range(0, len(y), step):
        model.learn_many(X[start : start + step], y[start : start + step])
        trace.append((min(start + step, len(y)), model.forgetting_))
    return np.array(trace)


def _plot_demo(curves: dict[str, dict[str, np.ndarray]], drift: dict[str, np.ndarray],
               path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot; pip install 'edgereg[plot]')")
        return
    fig, axes = plt.subplots(len(curves), 2, figsize=(13, 3.2 * len(curves)), squeeze=False,
                             gridspec_kw={"width_ratios": [2, 1]})
    for (ax, ax_mu), (name, by_model) in zip(axes, curves.items(), strict=True):
        for model_name, acc in by_model.items():
            ax.plot(acc, label=model_name, lw=1)
        ax.set_title(f"{name}: prequential accuracy (window 1000)")
        ax.set_xlabel("sample")
        ax.set_ylim(0.4, 1.0)
        ax.legend(loc="lower right", fontsize=8)
        if name in drift:
            ax_mu.plot(drift[name][:, 0], drift[name][:, 1], lw=1, color="C1")
            ax_mu.set_yscale("log")
        ax_mu.set_title(f"{name}: forgetting_ learnt by mu=auto")
        ax_mu.set_xlabel("sample")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote plot to {os.path.abspath(path)}")


# ------------------------------------------------------------------- stream

MODEL_NAMES: dict[str, str] = {
    "dfop": "DFOP",
    "rls": "RLS",
    "norma-classifier": "NORMAClassifier",
    "norma-regressor": "NORMARegressor",
    "norma-novelty": "NORMANovelty",
    "sparse-dfop": "SparseDFOP",
    "selective": "SelectiveSampler",
    "pa": "PARegressor",
    "mores": "MORES",
    "somor": "SOMOR",
}

#: Models that learn several targets at once (``--target y1,y2``).
MULTI_OUTPUT = ("mores", "somor", "pa")


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    return text


def _parse_params(items: Iterable[str]) -> dict[str, Any]:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"edgereg: --param expects key=value, got {item!r}")
        params[key.strip()] = _parse_value(value.strip())
    return params


#: The longest CSV line accepted (a logger's row is a few hundred bytes; a
#: megabyte of garbage is an error, not something to buffer).
MAX_LINE = 1 << 16

#: The plain decimal grammar of a CSV number (what a logger writes): Python's
#: float() also takes "1_0", Arabic-Indic digits or "infinity", which no CSV
#: writer means as a number. nan and inf are accepted (then skipped as bad).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf)",
                     re.IGNORECASE | re.ASCII)


class _Stop(Exception):
    """SIGTERM or SIGINT while waiting for input."""


class StreamError(SystemExit):
    """The stream cannot go on (a width change, an over-long line): exit non-zero."""

    def __init__(self, message: str) -> None:
        super().__init__(f"edgereg: {message}")


def _number(cell: str) -> float:
    if not _NUMBER.fullmatch(cell):
        raise ValueError(f"not a number: {cell[:40]!r}")
    return float(cell)


def _lines(source: TextIO) -> Iterator[str]:
    # readline, not iteration: a pipe's rows are handled as they arrive.
    first = True
    while True:
        line = source.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith("\n"):
            raise StreamError(f"a line longer than {MAX_LINE} characters: not a CSV row")
        if first:
            line = line.removeprefix("\ufeff")  # a UTF-8 byte-order mark is not data
            first = False
        yield line


class _Checkpointer:
    def __init__(self, path: str | None, every: int) -> None:
        self.path, self.every = path, every
        self.since = 0

    def tick(self, model: Any) -> None:
        self.since += 1
        if self.path and self.since >= self.every:
            self.save(model)

    def save(self, model: Any) -> None:
        if self.path and model is not None:
            model.save(self.path)
            self.since = 0


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell))


def _looks_like_header(cells: list[str]) -> bool:
    """A first row with a non-empty cell that is not a number names the columns."""
    return any(c and not _is_number(c) for c in cells)


def _target_columns(spec: str, header: list[str] | None, width: int) -> list[int]:
    """Column indices of ``--target``: names (with a header row) or indices, comma-separated."""
    columns: list[int] = []
    for item in (part.strip() for part in spec.split(",")):
        try:
            index = int(item)
        except ValueError:
            if header is None:
                raise SystemExit(
                    f"edgereg: --target {item!r} names a column, but the first row is not a "
                    f"header (it parses as numbers); give --header, or a column index"
                ) from None
            if item not in header:
                raise SystemExit(
                    f"edgereg: --target {item!r}: no such column; the columns are: "
                    f"{', '.join(header)}"
                ) from None
            index = header.index(item)
        else:
            if not -width <= index < width:
                raise SystemExit(
                    f"edgereg: --target {index}: no such column in rows of {width} columns"
                )
            index %= width
        columns.append(index)
    if len(set(columns)) != len(columns):
        raise SystemExit(f"edgereg: --target {spec!r} names a column twice")
    return columns


def _nan_row(n_targets: int, interval: float | None) -> str:
    """The output line of a row skipped: NaN for each output column (three a target
    with intervals: lower, prediction, upper)."""
    return ",".join(["nan"] * ((3 if interval else 1) * max(n_targets, 1))) + "\n"


def _make_model(cls: Any, model_name: str, n_features: int, n_targets: int,
                params: dict[str, Any]) -> Any:
    if n_targets > 1 and model_name not in MULTI_OUTPUT:
        raise SystemExit(
            f"edgereg: {model_name} learns one target; --target names {n_targets} "
            f"(several targets: {', '.join(MULTI_OUTPUT)})"
        )
    if model_name in ("mores", "somor") or (model_name == "pa" and n_targets > 1):
        return cls(n_features, n_targets, **params)
    return cls(n_features, **params)


def run_stream(
    model_name: str,
    params: dict[str, Any],
    source: TextIO,
    out: TextIO,
    err: TextIO,
    *,
    target: int | str = -1,
    state: str | None = None,
    checkpoint_every: int = 1000,
    delimiter: str = ",",
    skip_header: bool = False,
    interval: float | None = None,
    strict: bool = False,
) -> dict[str, int]:
    """Prequential loop over CSV rows; returns counts of rows learnt/predicted/skipped.

    ``target``: a column index (negative from the end), a column name (the
    first row is then a header), or several of them comma-separated for the
    multi-output models, one prediction column each. A first row that does
    not parse as numbers is a header; ``skip_header`` (``--header``) says so
    explicitly. ``interval`` (``--interval C``): the model calibrates
    intervals of coverage C and each row's output is lower, prediction,
    upper (for each target in turn with a multi-output model: MORES). An
    empty input field is a missing value (learnt with
    ``--param missing=impute``, else the row is skipped).
    A row with fewer columns than the first (a line cut short by
    a power loss) is skipped like a row with a bad value; with ``strict``
    (``--strict``) it stops the stream, as a row with more columns always does.
    """
    import edgereg

    if interval is not None:
        params = {**params, "coverage": interval}
    if model_name not in MODEL_NAMES:
        raise SystemExit(
            f"edgereg: unknown model {model_name!r}; choose from {', '.join(MODEL_NAMES)}"
        )
    cls = getattr(edgereg, MODEL_NAMES[model_name])
    unsupervised = getattr(cls, "_task", None) == "novelty"
    target_spec = str(target)
    model = None
    if state and not os.path.isdir(os.path.dirname(os.path.abspath(state))):
        raise StreamError(f"the folder of --state {state} does not exist")
    if state and os.path.exists(state):
        model = edgereg.load(state)
        # A subclass no model name here names is what that name built with
        # these parameters (``dfop --param forgetting=auto``: a DFOPBank).
        held = type(model).__name__
        if type(model) is not cls and not (
            isinstance(model, cls) and held not in MODEL_NAMES.values()
        ):
            raise SystemExit(f"edgereg: {state} holds a {held}, not a {cls.__name__}")
        held_params = model.get_params()
        for key, value in params.items():
            if key not in held_params:
                raise StreamError(f"--param {key}: {cls.__name__} has no such parameter")
            if held_params[key] != value:
                raise StreamError(
                    f"--param {key}={value!r} differs from the state resumed from {state} "
                    f"({key}={held_params[key]!r}); remove --param or start a new state"
                )
        err.write(f"resumed from {state} after {model.n_seen_} samples\n")
    checkpoint = _Checkpointer(state, checkpoint_every)
    counts = {"learnt": 0, "predicted": 0, "skipped": 0}
    stop = {"now": False}
    columns: list[int] | None = None  # target columns, fixed by the first row
    width: int | None = None  # cells per row, fixed by the first data row
    multi = False
    waiting = {"for_input": False}

    def on_signal(signum: int, frame: Any) -> None:
        # Idle on input: stop at once (no line is half read by us). While a
        # line is being handled: finish it, then stop.
        stop["now"] = True
        if waiting["for_input"]:
            raise _Stop

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    lines = _lines(source)
    lineno = 0
    try:
        while not stop["now"]:
            waiting["for_input"] = True
            try:
                line = next(lines)
            except (StopIteration, _Stop):
                break
            finally:
                waiting["for_input"] = False
            lineno += 1
            text = line.strip()
            if not text:
                continue
            cells = [c.strip() for c in text.split(delimiter)]
            if columns is None:
                header = cells if skip_header or _looks_like_header(cells) else None
                columns = [] if unsupervised else _target_columns(target_spec, header,
                                                                   len(cells))
                multi = len(columns) > 1 or (model_name in ("mores", "somor"))
                if model is not None and multi and model.n_outputs != len(columns):
                    raise SystemExit(
                        f"edgereg: {state} holds a model of {model.n_outputs} targets; "
                        f"--target names {len(columns)}"
                    )
                if header is not None:
                    width = len(cells)
                    continue
            if width is None:
                width = len(cells)
            elif len(cells) < width and not strict:
                # What a power cut leaves at the end of a logger's line: a bad row.
                counts["skipped"] += 1
                err.write(f"line {lineno}: skipped ({len(cells)} columns, the stream started "
                          f"with {width}: a cut row)\n")
                out.write(_nan_row(len(columns), interval))
                out.flush()
                continue
            elif len(cells) != width:
                raise StreamError(
                    f"line {lineno} has {len(cells)} columns, the stream started with "
                    f"{width}: a different layout, not a bad value (the rows before it were "
                    f"learnt and checkpointed)"
                )
            if len(cells) <= max(columns, default=-1):
                raise StreamError(f"line {lineno}: no target column {max(columns)} in a row of "
                                  f"{len(cells)} columns")
            y_cells = [cells[c] for c in columns]
            x_cells = [c for i, c in enumerate(cells) if i not in columns]
            if not x_cells:
                raise StreamError(f"line {lineno} has no input column besides the target")
            if model is None:
                try:
                    model = _make_model(cls, model_name, len(x_cells), len(columns), params)
                except (TypeError, ValueError) as exc:
                    raise StreamError(f"cannot make {model_name} with {params}: {exc}") from None
                err.write(f"started {model!r}\n")
            try:
                x = np.array([np.nan if c == "" else _number(c) for c in x_cells])
                if np.any(np.isinf(x)):
                    raise ValueError("non-finite input")
                if np.any(np.isnan(x)) and getattr(model, "missing", "reject") != "impute":
                    raise ValueError("missing input (--param missing=impute fills it)")
                if unsupervised:
                    yhat = model.learn_one(x)
                    counts["learnt"] += 1
                elif all(c == "" for c in y_cells):
                    # no label yet: predict only
                    yhat = model.predict_interval(x) if interval else model.predict_one(x)
                    counts["predicted"] += 1
                else:
                    y = np.array([_number(c) for c in y_cells])
                    if not np.all(np.isfinite(y)):
                        raise ValueError("non-finite target")
                    switches = getattr(model, "n_switches_", 0)
                    yhat = model.learn_one(x, y if multi else float(y[0]),
                                           interval=True) if interval \
                        else model.learn_one(x, y if multi else float(y[0]))
                    counts["learnt"] += 1
                    if getattr(model, "n_switches_", 0) > switches:
                        err.write(_switch_line(model, lineno))
            except (ValueError, TypeError) as exc:
                counts["skipped"] += 1
                err.write(f"line {lineno}: skipped ({exc})\n")
                out.write(_nan_row(len(columns), interval))
                out.flush()
                continue
            values = np.asarray(yhat, dtype=np.float64).reshape(-1)
            out.write(",".join(f"{v:.10g}" for v in values) + "\n")
            out.flush()
            if counts["learnt"]:
                checkpoint.tick(model)
    finally:
        checkpoint.save(model)
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if counts["skipped"]:
        err.write(f"{counts['skipped']} rows skipped for bad values or missing columns\n")
    return counts


def _switch_line(model: Any, lineno: int) -> str:
    """The stderr line of a switch declared by a SelectiveSampler."""
    line = f"line {lineno}: switch declared at sample {model.n_seen_ - 1}"
    score = model.last_switch_score_
    if score == score:  # the e-process test: its evidence
        line += (f" (log e-value {score:.3f} >= log(1/delta) = {-np.log(model.delta):.3f}); "
                 "the classifier restarts")
    return line + "\n"


# --------------------------------------------------------------------- data


def run_data(args: argparse.Namespace) -> None:
    """``edgereg data fetch NAME...`` / ``edgereg data path``."""
    from . import datasets

    if args.data_command == "path":
        print(datasets.get_data_home())
        return
    names = args.names
    if names == ["all"]:
        names = [n for n in datasets.list_datasets() if n not in datasets.BUNDLED]
    for name in names:
        try:
            home = datasets.fetch(name, data_home=args.data_home, base_url=args.base_url)
        except KeyError as exc:
            raise SystemExit(f"edgereg: {exc.args[0]}") from None
        except datasets.DataFileError as exc:
            raise SystemExit(f"edgereg: {exc}") from None
        print(f"{name}: in {home}")


# --------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edgereg", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="prequential demo on bundled data (the README's main job)")
    p.add_argument("--n", type=int, default=None, help="cap each stream at N samples")
    p.add_argument("--plot", default="edgereg-demo.png", help="PNG path (needs matplotlib)")
    p.add_argument("--no-plot", action="store_true")

    p = sub.add_parser("stream", help="learn from CSV rows on stdin or a file, as they arrive")
    p.add_argument("model", help=f"one of: {', '.join(MODEL_NAMES)}")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="model hyper-parameter, e.g. --param forgetting=0.02 (repeatable)")
    p.add_argument("--target", default="-1", metavar="COLUMN[,COLUMN...]",
                   help="target column: a name from the header row or an index (default: "
                        "-1, the last); several, comma-separated, for mores, somor and pa "
                        "(one prediction column each); an empty cell = predict only")
    p.add_argument("--input", default="-", help="CSV file, or - for stdin (default)")
    p.add_argument("--state", default=None,
                   help="state file: resumed if present, checkpointed atomically")
    p.add_argument("--checkpoint-every", type=int, default=1000, metavar="N")
    p.add_argument("--delimiter", default=",")
    p.add_argument("--interval", type=float, default=None, metavar="COVERAGE",
                   help="calibrated intervals of this coverage (dfop, rls, sparse-dfop, "
                        "mores): output columns lower,prediction,upper (mores: for each "
                        "target in turn)")
    p.add_argument("--header", action="store_true",
                   help="the first line names the columns (detected anyway when it does "
                        "not parse as numbers)")
    p.add_argument("--strict", action="store_true",
                   help="stop at a row with fewer columns than the first (default: skip "
                        "it as a bad row, reported on stderr and counted)")

    p = sub.add_parser("bench", help="samples/s of every model on this machine")
    p.add_argument("--quick", action="store_true")

    sub.add_parser("warmup", help="compile every kernel into the on-disk cache")

    p = sub.add_parser("data", help="download datasets into the user's data folder")
    data = p.add_subparsers(dest="data_command", required=True)
    q = data.add_parser("fetch", help="download a dataset from its source, check its sha256")
    q.add_argument("names", nargs="+", metavar="NAME",
                   help="dataset names (edgereg.datasets.list_datasets()), or 'all'")
    q.add_argument("--data-home", default=None, help="folder to keep them in (default: "
                   "$EDGEREG_DATA, else the user data folder)")
    q.add_argument("--base-url", default=None,
                   help="download <base-url>/<dir>/<file> instead (a mirror)")
    data.add_parser("path", help="print the folder fetched datasets are kept in")

    p = sub.add_parser("cache", help="where compiled kernels are cached, how many, how big")
    p.add_argument("--clear", action="store_true", help="remove edgereg's cached kernels")

    p = sub.add_parser("export", help="compile a model's kernels to a C object for a device")
    p.add_argument("model", help="a class name (DFOP, RLS) or a saved model file")
    p.add_argument("--target", default=None, help="LLVM triple (default: this machine)")
    p.add_argument("--cpu", default="", help="LLVM cpu, e.g. cortex-m4 (default: generic)")
    p.add_argument("--abi", default="",
                   help="calling convention where a target has several, e.g. ilp32f for a "
                        "RISC-V FPU (must match the C compiler's -mabi; default: LLVM's)")
    p.add_argument("--dtype", default=None, choices=["float32", "float64"])
    p.add_argument("--features", type=int, default=None, help="input dimension d")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", default=".", help="folder for the .o, .h and README")
    p.add_argument("--name", default=None, help="C prefix (default edgereg_<model>)")
    p.add_argument("--size", action="store_true", help="optimise for code size")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        run_demo(args.n, None if args.no_plot else args.plot)
    elif args.command == "stream":
        source = sys.stdin if args.input == "-" else open(args.input)  # noqa: SIM115
        try:
            run_stream(
                args.model, _parse_params(args.param), source, sys.stdout, sys.stderr,
                target=args.target, state=args.state, checkpoint_every=args.checkpoint_every,
                delimiter=args.delimiter, skip_header=args.header, interval=args.interval,
                strict=args.strict,
            )
        finally:
            if source is not sys.stdin:
                source.close()
    elif args.command == "bench":
        run_bench(args.quick)
    elif args.command == "warmup":
        warmup()
    elif args.command == "data":
        run_data(args)
    elif args.command == "cache":
        run_cache(args.clear, sys.stdout)
    elif args.command == "export":
        return run_export(args)
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``edgereg export``: print what was written, or why not (exit status 2)."""
    from .export import ExportError, export

    model: Any = args.model
    if os.path.exists(model):
        from ._load import load

        model = load(model)
    try:
        info = export(model, target=args.target, cpu=args.cpu, abi=args.abi, dtype=args.dtype,
                      features=args.features, out=args.out, name=args.name, size=args.size,
                      **_parse_params(args.param))
    except (ExportError, ValueError, TypeError, NotImplementedError) as exc:
        print(f"edgereg export: {exc}", file=sys.stderr)
        return 2
    for key in ("object", "header", "readme"):
        print(f"wrote {info[key]}")
    print(f"{info['triple']}: {info['code_bytes']} bytes of code, state "
          f"{info['state_bytes']} bytes, needs {' '.join(info['undefined']) or 'nothing'}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
