"""A sensor loop that predicts, learns late labels, checkpoints and survives kill -9.

The loop an edge device runs for months:

1. read a sensor (here simulated: a linear relation that drifts slowly; the
   reading of step t is a deterministic function of (seed, t) so that a
   resumed run sees exactly the data an uninterrupted run would);
2. predict the quantity of interest at once with ``model.predict_one``;
3. the measurement (label) of step t arrives ``delay`` steps later: the input
   waits in a small fixed ring of pending inputs, and is learnt with
   ``model.learn_one`` when its label arrives;
4. every ``--checkpoint-every`` steps the state is checkpointed: the model
   with ``model.save`` (atomic: temp file, fsync, rename) and the loop state
   (step, pending ring, running error) beside it, then a ``LATEST`` pointer is
   replaced atomically. A kill at any instant leaves LATEST naming a complete
   checkpoint, and the next start resumes from it and says from which step;
5. memory stays flat: the model and the ring are fixed-size; the resident set
   size is read from ``/proc/self/statm`` at start and end.

Run::

    python examples/sensor_loop.py --steps 20000 --checkpoint-every 1000 --state /tmp/loop
    python examples/sensor_loop.py --steps 20000 --state /tmp/loop --crash-at 12345  # killed
    python examples/sensor_loop.py --steps 20000 --state /tmp/loop   # resumes from 12000

A resumed run ends bit-for-bit in the same state as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from edgereg import DFOP

N_INPUTS = 3  # raw sensor channels; a constant-1 bias is appended


# ------------------------------------------------------------------ the sensor
def read_sensor(step: int, seed: int = 0) -> tuple[np.ndarray, float]:
    """Reading of step ``step``: (x with a bias entry, the true value measured later).

    y = w_t . x + 0.1 noise with w_t rotating slowly (period 20,000 steps) and
    a step change of the offset at step 30,000: gradual and abrupt drift.
    Deterministic in (seed, step), so a restarted loop reads the same data.
    """
    rng = np.random.default_rng((seed, step))
    x = np.empty(N_INPUTS + 1)
    x[:N_INPUTS] = rng.normal(size=N_INPUTS)
    x[N_INPUTS] = 1.0
    phase = 2.0 * math.pi * step / 20_000.0
    offset = 0.5 if step < 30_000 else -1.0
    y = (
        math.cos(phase) * x[0] + math.sin(phase) * x[1] + 0.5 * x[2] + offset
        + 0.1 * rng.normal()
    )
    return x, float(y)


# ------------------------------------------------------------------- memory
def rss_bytes() -> tuple[int, str]:
    """Resident set size now (Linux ``/proc/self/statm``); else the peak from getrusage."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE"), "rss"
    except (OSError, ValueError, IndexError, AttributeError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # kilobytes on Linux, bytes on macOS
        return (peak if sys.platform == "darwin" else peak * 1024), "peak rss"


# -------------------------------------------------------------- checkpoints
def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".edgereg-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _atomic_savez(path: Path, **arrays: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".edgereg-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_checkpoint(
    state_dir: Path, step: int, model: DFOP, ring_x: np.ndarray, ring_y: np.ndarray,
    sums: np.ndarray,
) -> None:
    """Write checkpoint ``step`` (model + loop state), then point LATEST at it.

    The model and the loop state are two files, each written atomically; the
    LATEST pointer is replaced only after both are on disk, so a kill between
    any two operations leaves LATEST naming a complete pair. The previous
    generation is deleted afterwards.
    """
    model.save(state_dir / f"model-{step}.npz")
    _atomic_savez(state_dir / f"loop-{step}.npz", step=np.int64(step), ring_x=ring_x,
                  ring_y=ring_y, sums=sums)
    latest = state_dir / "LATEST"
    previous = latest.read_text().strip() if latest.exists() else None
    _atomic_write_text(latest, f"{step}\n")
    if previous is not None and previous != str(step):
        for name in (f"model-{previous}.npz", f"loop-{previous}.npz"):
            (state_dir / name).unlink(missing_ok=True)


def load_checkpoint(state_dir: Path) -> tuple[int, DFOP, dict[str, np.ndarray]] | None:
    """The last complete checkpoint (step, model, loop arrays), or None."""
    latest = state_dir / "LATEST"
    if not latest.exists():
        return None
    step = int(latest.read_text().strip())
    model = DFOP.load(state_dir / f"model-{step}.npz")
    with np.load(state_dir / f"loop-{step}.npz", allow_pickle=False) as npz:
        loop = {k: npz[k] for k in npz.files}
    return step, model, loop


# ---------------------------------------------------------------------- loop
def run_loop(
    *,
    steps: int,
    checkpoint_every: int,
    state_dir: Path,
    delay: int = 3,
    forgetting: float = 0.002,
    dtype: str = "float64",
    seed: int = 0,
    crash_at: int | None = None,
    log: Callable[[str], None] = print,
) -> DFOP:
    """Run (or resume) the loop until ``steps`` steps are done; return the model."""
    state_dir.mkdir(parents=True, exist_ok=True)
    d = N_INPUTS + 1
    R = delay + 1  # ring slots: inputs waiting for their label
    resumed = load_checkpoint(state_dir)
    if resumed is None:
        start = 0
        model = DFOP(d, forgetting, dtype=dtype)
        ring_x = np.zeros((R, d))
        ring_y = np.zeros(R)  # the prediction made for each pending input
        sums = np.zeros(2)  # [sum of squared errors, number of scored predictions]
        log(f"fresh start (no checkpoint in {state_dir})")
    else:
        start, model, loop = resumed
        ring_x, ring_y, sums = loop["ring_x"], loop["ring_y"], loop["sums"]
        log(f"resumed from checkpoint at step {start} ({state_dir})")
    rss0, kind = rss_bytes()
    log(f"{kind} at start: {rss0 / 2**20:.1f} MiB; model state {model.nbytes()} bytes")
    rss_warm = -1
    t0 = time.perf_counter()
    for t in range(start, steps):
        if crash_at is not None and t == crash_at:
            log(f"crashing at step {t} (SIGKILL, no cleanup)")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        x, _ = read_sensor(t, seed)
        slot = t % R
        ring_x[slot] = x
        ring_y[slot] = model.predict_one(x)  # act on this prediction now
        if t >= delay:  # the measurement of step t - delay arrives
            late = t - delay
            _, y_true = read_sensor(late, seed)
            err = y_true - ring_y[late % R]
            sums[0] += err * err
            sums[1] += 1.0
            model.learn_one(ring_x[late % R], y_true)
        if (t + 1) % checkpoint_every == 0:
            save_checkpoint(state_dir, t + 1, model, ring_x, ring_y, sums)
            if rss_warm < 0:  # kernels and the npz writer are loaded by now
                rss_warm, _ = rss_bytes()
    elapsed = time.perf_counter() - t0
    rss1, kind = rss_bytes()
    done = steps - start
    log(f"{done} steps in {elapsed:.2f} s ({done / max(elapsed, 1e-9):,.0f} steps/s), "
        f"prequential MSE {sums[0] / max(sums[1], 1.0):.4f} over {int(sums[1])} labels")
    rss_warm = rss1 if rss_warm < 0 else rss_warm
    log(f"{kind} after the first checkpoint: {rss_warm / 2**20:.1f} MiB, "
        f"at end: {rss1 / 2**20:.1f} MiB (growth {(rss1 - rss_warm) / 2**20:+.2f} MiB)")
    if steps % checkpoint_every:
        save_checkpoint(state_dir, steps, model, ring_x, ring_y, sums)
    log(f"final coef {np.array2string(model.coef_, precision=4)}")
    return model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--checkpoint-every", type=int, default=1_000)
    parser.add_argument("--state", type=Path, default=Path("sensor_loop_state"),
                        help="checkpoint directory (created if absent)")
    parser.add_argument("--delay", type=int, default=3, help="label delay in steps")
    parser.add_argument("--forgetting", type=float, default=0.002)
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--crash-at", type=int, default=None,
                        help="SIGKILL this process at this step (to demonstrate resuming)")
    args = parser.parse_args(argv)
    run_loop(steps=args.steps, checkpoint_every=args.checkpoint_every, state_dir=args.state,
             delay=args.delay, forgetting=args.forgetting, dtype=args.dtype,
             crash_at=args.crash_at)


if __name__ == "__main__":
    main()
