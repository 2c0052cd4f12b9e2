"""10,000 sensors' DFOP models on a Dask LocalCluster, one Fleet per worker.

The sensors are split into one partition per worker. Each worker holds a
:class:`edgereg.fleet.Fleet` for its partition as a Dask *actor* (state stays
on the worker between calls; nothing but the chunks and the metrics crosses
the network). The client streams the data in chunks of ``--chunk`` steps: for
every chunk it sends each partition its block (K_p, chunk, d) and gathers the
per-sensor squared prequential errors back, so it always knows every sensor's
running MSE. One chunk is in flight while the client prepares the next.

Each sensor k follows its own slowly drifting linear relation
y = w_k(t) . x + 0.1 noise (x includes a constant-1 bias).

Run::

    python examples/fleet_dask.py                        # 10,000 sensors, 2,000 steps
    python examples/fleet_dask.py --sensors 200 --steps 100 --workers 2   # CI

Needs ``dask[distributed]``; without it the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

D = 10  # 9 sensor channels + bias


class FleetActor:
    """Holds the Fleet of one partition on a Dask worker."""

    def __init__(self, n_models: int, n_features: int, forgetting: float, threads: int) -> None:
        import numba

        from edgereg.fleet import Fleet

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        self.fleet = Fleet(n_models, n_features, forgetting)
        self.busy = 0.0  # seconds spent in learn_many on this worker
        warm = np.zeros((n_models, 1, n_features))
        self.fleet.learn_many(warm, np.zeros((n_models, 1)))  # compile / load from cache
        self.fleet.reset()

    def learn(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Learn a chunk; return each sensor's sum of squared prequential errors."""
        t0 = time.perf_counter()
        yhat = self.fleet.learn_many(X, y)
        self.busy += time.perf_counter() - t0
        return ((y - yhat) ** 2).sum(axis=1)

    def stats(self) -> tuple[float, int]:
        return self.busy, int(self.fleet.n_seen_.sum())


def make_chunk(
    sensors: np.ndarray, t0: int, steps: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Readings of ``sensors`` for steps t0..t0+steps-1 (deterministic per chunk)."""
    rng = np.random.default_rng((seed, t0, int(sensors[0])))
    K = sensors.shape[0]
    X = np.empty((K, steps, D))
    X[:, :, :-1] = rng.standard_normal(size=(K, steps, D - 1))
    X[:, :, -1] = 1.0
    base = np.random.default_rng((seed, 1)).normal(size=(int(sensors[-1]) + 1, D))[sensors]
    t = np.arange(t0, t0 + steps)
    # weights drift: the first two coefficients rotate with a sensor-specific period
    period = 2_000.0 + 10.0 * (sensors % 100)
    phase = 2 * np.pi * t[None, :] / period[:, None]
    y = X @ base[:, :, None]
    y = y[:, :, 0] + np.cos(phase) * X[:, :, 0] + np.sin(phase) * X[:, :, 1]
    y += 0.1 * rng.standard_normal(size=(K, steps))
    return X, y


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sensors", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--chunk", type=int, default=100, help="steps per chunk sent")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--forgetting", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("fleet_dask.py needs dask.distributed: pip install 'dask[distributed]'. "
              "Skipping (nothing to do without it).")
        return 0

    cores = os.cpu_count() or 1
    threads = max(1, cores // args.workers)  # numba threads per worker: no oversubscription
    parts = np.array_split(np.arange(args.sensors), args.workers)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        t_setup = time.perf_counter()
        actors = [
            client.submit(FleetActor, len(p), D, args.forgetting, threads, actor=True,
                          workers=[workers[i % len(workers)]]).result()
            for i, p in enumerate(parts)
        ]
        print(f"{args.sensors:,} sensors on {len(workers)} workers "
              f"({', '.join(str(len(p)) for p in parts)} sensors each, {threads} numba "
              f"thread(s) per worker); actors ready in {time.perf_counter() - t_setup:.1f} s")

        sse = np.zeros(args.sensors)
        t_start = time.perf_counter()
        gen_time = 0.0
        in_flight: list = []  # the previous chunk's futures: workers learn chunk c
        for t0 in range(0, args.steps, args.chunk):  # while the client makes chunk c + 1
            n = min(args.chunk, args.steps - t0)
            g0 = time.perf_counter()
            chunk = [make_chunk(p, t0, n, args.seed) for p in parts]
            gen_time += time.perf_counter() - g0
            for fut, p in in_flight:
                sse[p] += fut.result()
            # async calls: the partitions run concurrently on their workers
            in_flight = [
                (a.learn(X, y), p) for a, p, (X, y) in zip(actors, parts, chunk, strict=True)
            ]
        for fut, p in in_flight:
            sse[p] += fut.result()
        wall = time.perf_counter() - t_start
        busy = [a.stats().result() for a in actors]

    total = args.sensors * args.steps
    learn = max(b for b, _ in busy)
    assert sum(s for _, s in busy) == total
    mse = sse / args.steps
    print(f"{total:,} samples ({args.steps:,} steps x {args.sensors:,} sensors) in "
          f"{wall:.2f} s wall: {total / wall:,.0f} samples/s end to end "
          f"(data generation on the client {gen_time:.2f} s of it)")
    print(f"learning alone (busiest worker) {learn:.2f} s: {total / learn:,.0f} samples/s")
    print(f"prequential MSE per sensor: median {np.median(mse):.4f}, "
          f"90th percentile {np.quantile(mse, 0.9):.4f}, worst {mse.max():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
