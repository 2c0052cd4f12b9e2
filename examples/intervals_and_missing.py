"""Calibrated intervals under drift, and rows with missing inputs: the measurements.

Prints (and with ``--output`` writes into docs/results.md, between its
markers) the tables of docs/design/intervals.md and docs/design/missing-inputs.md:

* 90% intervals of DFOP (``coverage=0.9``) on Debutanizer, both SRU targets,
  each Air Quality output and a synthetic stream with a jump in the
  coefficients and a doubling of the noise variance: long-run prequential
  coverage, the share of windows of 1000 samples within 90 +- 7 points,
  the mean width; beside a split-conformal interval fitted on the first
  10% of the stream and river's ``conf.RegressionJackknife`` around the
  same model (when river is installed);
* 90% intervals of MORES (``coverage=0.9``, one per output) on Air Quality
  and of SparseDFOP on the sparse state-space stream (D = 1000, d = 100):
  the same long-run and windowed coverage;
* missing inputs on ``drifting_linear`` (d = 10): prequential MSE of
  ``missing="impute"`` against complete data, for 10% and 30% of the
  features missing at random and for one sensor missing for 1000 rows, the
  conditional rule beside the running-mean rule.

Usage::

    python examples/intervals_and_missing.py                         # print
    python examples/intervals_and_missing.py --output docs/results.md
    edgereg data fetch air_quality      # once (debutanizer and sru are bundled)
    python examples/intervals_and_missing.py

Real-data protocol (as examples/reproduce_dfop.py): inputs standardised with
the statistics of the first T/50 rows, a constant-1 column appended, mu the
best of the grid on the first T/50 rows (prequential); Air Quality rows with
a missing input or target are dropped (per output).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from edgereg import DFOP, MORES, SparseDFOP
from edgereg.datasets import load

COVERAGE = 0.9
WINDOW = 1000
MU_GRID = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)
BEGIN, END = "<!-- intervals-and-missing: begin -->", "<!-- intervals-and-missing: end -->"


def default_root() -> Path | None:
    """``$EDGEREG_DATA_ROOT`` when set, else None: edgereg's data folder."""
    env = os.environ.get("EDGEREG_DATA_ROOT")
    return Path(env) if env else None


def prepare(X: np.ndarray, T: int) -> np.ndarray:
    prefix = X[: max(T // 50, 1)]
    mean = prefix.mean(axis=0)
    std = prefix.std(axis=0)
    std[std <= 1e-8 * np.maximum(1.0, np.abs(mean))] = 1.0
    Z = np.empty((X.shape[0], X.shape[1] + 1))
    Z[:, :-1] = (X - mean) / std
    Z[:, -1] = 1.0
    return Z


def choose_mu(Z: np.ndarray, y: np.ndarray) -> float:
    n = max(len(y) // 50, 1)
    best, best_mu = np.inf, MU_GRID[0]
    for mu in MU_GRID:
        m = DFOP(Z.shape[1], mu, on_invalid="skip")
        s = float(np.mean((m.learn_many(Z[:n], y[:n]) - y[:n]) ** 2))
        if s < best:
            best, best_mu = s, mu
    return best_mu


def streams(root: Path | None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    out = []
    ds = load("debutanizer")
    out.append(("debutanizer", np.asarray(ds.X, float), np.asarray(ds.y, float)))
    ds = load("sru")
    for j, t in enumerate(ds.target_names):
        out.append((f"sru [{t}]", np.asarray(ds.X, float), np.ascontiguousarray(ds.y[:, j])))
    try:
        ds = load("air_quality", root=root)
    except (OSError, ValueError) as exc:
        print(f"air_quality not loaded ({exc}); skipped", file=sys.stderr)
    else:
        X = np.asarray(ds.X, float)
        for j, t in enumerate(ds.target_names):
            y = np.asarray(ds.y[:, j], float)
            keep = np.isfinite(X).all(axis=1) & np.isfinite(y)
            out.append((f"air_quality [{t}]", X[keep], np.ascontiguousarray(y[keep])))
    return out


def synthetic(n: int = 20_000, d: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x ~ N(0, I); w jumps to a fresh N(0, I) draw at n/2; noise sd 0.5, its variance
    doubled from 3n/4 on."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=(2, d))
    y = np.where(np.arange(n) < n // 2, X @ w[0], X @ w[1])
    sd = np.where(np.arange(n) < 3 * n // 4, 0.5, 0.5 * np.sqrt(2.0))
    return X, y + sd * rng.normal(size=n)


def window_share(hit: np.ndarray) -> tuple[float, int]:
    """Share of full windows of WINDOW rows whose coverage is within 90 +- 7 points."""
    k = len(hit) // WINDOW
    if k == 0:
        return float("nan"), 0  # printed as "no full window"
    cov = hit[: k * WINDOW].reshape(k, WINDOW).mean(axis=1)
    return float(np.mean(np.abs(cov - COVERAGE) <= 0.07)), k


def split_conformal(yhat: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Width q fitted on the first 10% of the prequential residuals; (hits after, q, start)."""
    n0 = max(len(y) // 10, 1)
    r = np.sort(np.abs(y[:n0] - yhat[:n0]))
    k = min(int(np.ceil((n0 + 1) * COVERAGE)) - 1, n0 - 1)
    q = float(r[k])
    return np.abs(y[n0:] - yhat[n0:]) <= q, q, n0


def jackknife(Z: np.ndarray, y: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        from river import conf

        from edgereg.river import DFOPRegressor
    except ImportError:
        return None
    model = conf.RegressionJackknife(DFOPRegressor(forgetting=mu, on_invalid="skip"),
                                     confidence_level=COVERAGE)
    names = [f"x{j}" for j in range(Z.shape[1])]
    hit = np.empty(len(y), bool)
    width = np.empty(len(y))
    for t in range(len(y)):
        x = dict(zip(names, Z[t], strict=True))
        iv = model.predict_one(x, with_interval=True)
        hit[t] = iv.lower <= y[t] <= iv.upper
        width[t] = iv.upper - iv.lower
        model.learn_one(x, y[t])
    return hit, width


def interval_row(name: str, Z: np.ndarray, y: np.ndarray, mu: Any, river: bool) -> dict:
    m = DFOP(Z.shape[1], mu, coverage=COVERAGE, on_invalid="skip")
    band = m.learn_many(Z, y, interval=True)
    ok = np.isfinite(band[:, 0])
    hit = (band[:, 0] <= y) & (y <= band[:, 2])
    width = band[:, 2] - band[:, 0]
    n0 = max(len(y) // 10, 1)
    share, nwin = window_share(hit[ok])
    split_hit, q, _ = split_conformal(band[:, 1], y)
    row = {
        "stream": name, "T": len(y), "mu": mu,
        "cov": hit[ok].mean(), "cov_after": hit[n0:].mean(), "share": share, "nwin": nwin,
        "width": width[n0:].mean(), "split_cov": split_hit.mean(),
        "split_share": window_share(split_hit)[0], "split_width": 2 * q,
        "kernel_cov": m.coverage_,
    }
    if river:
        jk = jackknife(Z, y, mu)
        if jk is not None:
            jhit, jwidth = jk
            row.update(jk_cov=jhit[n0:].mean(), jk_share=window_share(jhit)[0],
                       jk_width=float(np.mean(jwidth[n0:][np.isfinite(jwidth[n0:])])))
    return row


def _share(share: float, nwin: int | None = None) -> str:
    if share != share:
        return "no full window"
    return f"{100 * share:.0f}%" + ("" if nwin is None else f" of {nwin}")


def interval_table(root: Path | None, river: bool) -> list[str]:
    rows = []
    for name, X, y in streams(root):
        Z = prepare(X, len(y))
        rows.append(interval_row(name, Z, y, choose_mu(Z, y), river))
        rows.append(interval_row(name, Z, y, "auto", False))
    X, y = synthetic()
    Z = np.hstack([X, np.ones((len(y), 1))])
    rows.append(interval_row("synthetic jump + noise x2 (mu 0.01)", Z, y, 0.01, river))
    rows.append(interval_row("synthetic jump + noise x2 (RLS, mu 0)", Z, y, 0.0, river))
    rows.append(interval_row("synthetic jump + noise x2", Z, y, "auto", False))
    head = ("| stream | T | mu | coverage, ours | windows within 90 +- 7 | mean width, ours "
            "| split conformal (first 10%): coverage after | its windows within | its width "
            "| river Jackknife: coverage after | its windows within | its mean width |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        jk = (f"{100 * r['jk_cov']:.1f} | {_share(r['jk_share'])} | {r['jk_width']:.4g}"
              if "jk_cov" in r else "– | – | –")
        lines.append(
            f"| {r['stream']} | {r['T']:,} | {r['mu']} | {100 * r['cov']:.1f} "
            f"| {_share(r['share'], r['nwin'])} | {r['width']:.4g} "
            f"| {100 * r['split_cov']:.1f} | {_share(r['split_share'])} "
            f"| {r['split_width']:.4g} | {jk} |"
        )
    return lines


def _coverage_cells(band: np.ndarray, y: np.ndarray) -> tuple[float, str, float]:
    """Long-run coverage, windows within 90 +- 7 and mean width over the finite intervals."""
    ok = np.isfinite(band[:, 0])
    hit = ((band[:, 0] <= y) & (y <= band[:, 2]))[ok]
    share, nwin = window_share(hit)
    return 100 * hit.mean(), _share(share, nwin), float(np.mean((band[:, 2] - band[:, 0])[ok]))


def mores_table(root: Path | None, decay: float = 0.99) -> list[str]:
    """MORES with one 90% interval per output on Air Quality: the outputs observed on
    enough rows to learn jointly (NMHC(GT), on 887 rows, is left out), rows with a
    missing input or any of these targets dropped; inputs and targets standardised
    with the first T/50 rows' statistics (widths back in the target's units)."""
    try:
        ds = load("air_quality", root=root)
    except (OSError, ValueError) as exc:
        print(f"air_quality not loaded ({exc}); MORES skipped", file=sys.stderr)
        return []
    names = list(ds.target_names)
    cols = [j for j, t in enumerate(names) if np.isfinite(ds.y[:, j]).sum() > 2000]
    X = np.asarray(ds.X, float)
    Y = np.asarray(ds.y, float)[:, cols]
    keep = np.isfinite(X).all(axis=1) & np.isfinite(Y).all(axis=1)
    X, Y = X[keep], Y[keep]
    T = len(Y)
    Z = prepare(X, T)[:, :-1]  # MORES fits its own intercept
    prefix = Y[: max(T // 50, 1)]
    mean, std = prefix.mean(axis=0), prefix.std(axis=0)
    model = MORES(Z.shape[1], len(cols), decay=decay, coverage=COVERAGE, on_invalid="skip")
    band = model.learn_many(Z, (Y - mean) / std, interval=True)  # (T, m, 3)
    lines = [f"MORES(decay={decay}, coverage=0.9), {len(cols)} outputs learnt jointly on the "
             f"{T:,} rows where all are observed.", "",
             "| output | T | coverage | windows within 90 +- 7 | mean width (target units) "
             "| kernel's coverage_ |",
             "|---|---:|---:|---:|---:|---:|"]
    for k, j in enumerate(cols):
        cov, share, width = _coverage_cells(band[:, k], (Y[:, k] - mean[k]) / std[k])
        lines.append(f"| {names[j]} | {T:,} | {cov:.1f} | {share} | {width * std[k]:.4g} "
                     f"| {100 * model.coverage_[k]:.1f} |")
    return lines


def sparse_table(n: int = 20_000) -> list[str]:
    """SparseDFOP (d = 100, hashed projection) on the sparse state-space stream of
    examples/sparse_dfop_synthetic.py (D = 1000, 10 non-zero weights that jump every
    500 rows), with noise sd 0.1 added (without noise the band tracks model error only)."""
    from edgereg.streams import sparse_state_space

    lines = ["| stream | T | mu | coverage | windows within 90 +- 7 | mean width |",
             "|---|---:|---:|---:|---:|---:|"]
    for noise in (0.0, 0.1):
        Xc, y, _ = sparse_state_space(n, 1000, sparsity=10, jump_every=500, support="random",
                                      noise=noise, as_csr=True, seed=0)
        for mu in (2e-3, 1e-2):
            model = SparseDFOP(1000, 100, forgetting=mu, coverage=COVERAGE, on_invalid="skip")
            band = model.learn_many(Xc, y, interval=True)
            cov, share, width = _coverage_cells(band, y)
            lines.append(f"| sparse_state_space (D 1000, d 100, noise {noise}) | {n:,} | {mu} "
                         f"| {cov:.1f} | {share} | {width:.4g} |")
    return lines


def running_mean_rule(X: np.ndarray, y: np.ndarray, mu: float) -> np.ndarray:
    """Prequential predictions of DFOP with each NaN filled by its feature's running mean
    (forgetting-weighted at the model's mu over the values observed), weight 1."""
    n, d = X.shape
    model = DFOP(d, mu)
    mean = np.zeros(d)
    weight = np.zeros(d)
    out = np.empty(n)
    lam = 1.0 - mu
    for t in range(n):
        x = X[t]
        seen = ~np.isnan(x)
        filled = np.where(seen, x, mean)
        out[t] = model.learn_one(filled, y[t])
        weight[seen] = lam * weight[seen] + 1.0
        mean[seen] += (x[seen] - mean[seen]) / weight[seen]
    return out


def missing_streams(seed: int = 1) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """drifting_linear at d = 10 (independent N(0, 1) inputs, as it generates them), and
    the same weights on inputs correlated 0.9^|i - j| (sensors that share information)."""
    from edgereg.streams import drifting_linear

    X, y, W = drifting_linear(20_000, 10, seed=seed)
    rng = np.random.default_rng(seed + 100)
    cov = 0.9 ** np.abs(np.subtract.outer(np.arange(10), np.arange(10)))
    Xc = X @ np.linalg.cholesky(cov).T
    yc = np.einsum("nd,nd->n", W, Xc) + 0.1 * rng.normal(size=len(y))
    return [("independent inputs", X, y, W), ("inputs correlated 0.9^abs(i-j)", Xc, yc, W)]


def masks(n: int, d: int, seed: int = 7) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    sensor = np.zeros((n, d), bool)
    sensor[10_000:11_000, 3] = True
    return [("10% at random", rng.random((n, d)) < 0.1),
            ("30% at random", rng.random((n, d)) < 0.3),
            ("sensor 3 missing for rows 10,000-10,999", sensor)]


def missing_table(mu: float = 0.01) -> list[str]:
    lines = ["| inputs | missing | complete-data MSE | conditional rule (missing='impute') "
             "| ratio | running-mean rule | ratio | oracle (true w, E[x_m given x_o]) "
             "| rows imputed |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, X, y, W in missing_streams():
        full = float(np.mean((DFOP(10, mu).learn_many(X, y) - y) ** 2))
        for name, mask in masks(*X.shape):
            Xm = np.where(mask, np.nan, X)
            rows = mask.any(axis=1)
            model = DFOP(10, mu, missing="impute")
            mse_c = float(np.mean((model.learn_many(Xm, y) - y) ** 2))
            mse_m = float(np.mean((running_mean_rule(Xm, y, mu) - y) ** 2))
            oracle = float(np.mean((oracle_predictions(Xm, W, X) - y) ** 2))
            where = ("" if rows.all() or not name.startswith("sensor")
                     else f"; on the 1000 rows: {_on(model, Xm, y, rows, mu)}")
            lines.append(
                f"| {label} | {name} | {full:.4f} | {mse_c:.4f} | {mse_c / full:.2f} "
                f"| {mse_m:.4f} | {mse_m / full:.2f} | {oracle:.4f} "
                f"| {model.n_imputed_:,}{where} |")
    return lines


def _on(model: DFOP, Xm: np.ndarray, y: np.ndarray, rows: np.ndarray, mu: float) -> str:
    conditional = DFOP(Xm.shape[1], mu, missing="impute").learn_many(Xm, y)
    mean = running_mean_rule(Xm, y, mu)
    return (f"MSE conditional {np.mean((conditional - y)[rows] ** 2):.4f}, "
            f"running mean {np.mean((mean - y)[rows] ** 2):.4f}")


def oracle_predictions(Xm: np.ndarray, W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """w_t^T E[x | x_o] with the true w_t and the true input covariance (estimated
    from the complete inputs): the best any rule can do on these rows."""
    cov = X.T @ X / len(X)
    out = np.empty(len(Xm))
    for t in range(len(Xm)):
        x = Xm[t]
        m = np.isnan(x)
        if m.any():
            o = ~m
            x = x.copy()
            x[m] = cov[np.ix_(m, o)] @ np.linalg.solve(cov[np.ix_(o, o)], x[o])
        out[t] = W[t] @ x
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=default_root())
    ap.add_argument("--output", type=Path)
    ap.add_argument("--no-river", action="store_true", help="skip river's Jackknife")
    ap.add_argument("--part", choices=("all", "intervals", "mores-sparse", "missing"),
                    default="all")
    args = ap.parse_args(argv)
    start = time.time()
    lines: list[str] = []
    if args.part in ("all", "intervals"):
        lines += ["### 90% prediction intervals (DFOP, coverage=0.9)", ""]
        lines += interval_table(args.root, not args.no_river)
        lines.append("")
    if args.part in ("all", "intervals", "mores-sparse"):
        lines += ["### 90% prediction intervals per output (MORES, coverage=0.9), Air Quality",
                  ""] + mores_table(args.root) + [""]
        lines += ["### 90% prediction intervals (SparseDFOP, coverage=0.9)", ""]
        lines += sparse_table() + [""]
    if args.part in ("all", "missing"):
        lines += ["### Missing inputs (drifting_linear, d = 10)", ""] + missing_table() + [""]
    text = "\n".join(lines)
    print(text)
    print(f"({time.time() - start:.0f} s)", file=sys.stderr)
    if args.output:
        command = "python examples/intervals_and_missing.py --output docs/results.md"
        block = (f"{BEGIN}\n## Prediction intervals and missing inputs\n\nGenerated by "
                 f"`{command}` ({time.time() - start:.0f} s). Coverage and widths of the "
                 f"baselines are over the rows after the first 10% (split conformal is "
                 f"fitted there); ours is over every row with a finite interval (all but the "
                 f"first). Real data: inputs standardised with the first T/50 rows' statistics, "
                 f"a constant-1 column appended, mu the best of {{0, 1e-4, ..., 0.1}} on the "
                 f"first T/50 rows (prequential) or \"auto\"; Air Quality rows with a missing "
                 f"input or target dropped (per output). Synthetic: d = 10, x ~ N(0, I), w "
                 f"replaced by a fresh draw at n/2, noise sd 0.5 whose variance doubles from "
                 f"3n/4. River's Jackknife wraps edgereg.river.DFOPRegressor with the same "
                 f"mu. MORES: the Air Quality outputs observed on more than 2,000 rows, "
                 f"learnt jointly on the rows where all are observed, inputs and targets "
                 f"standardised with the first T/50 rows' statistics; its coverage is over "
                 f"every row with a finite interval. SparseDFOP: the stream of "
                 f"examples/sparse_dfop_synthetic.py (hashed projection, seed 0).\n\n"
                 f"{text}\n{END}\n")
        old = args.output.read_text() if args.output.exists() else ""
        if BEGIN in old and END in old:
            new = old[: old.index(BEGIN)] + block + old[old.index(END) + len(END) + 1 :]
        else:
            new = old.rstrip("\n") + "\n\n" + block
        args.output.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
