"""``edgereg.native`` cold start in fresh processes, trees side by side.

    python asv_bench/native_cold_start.py LIBRARY [--runs N] [--pyc DIR] [--bare] [ROOT ...]

Each run is a fresh ``python`` with numpy imported before the clock starts;
it times ``import edgereg.native``, ``NativeModel(LIBRARY)`` (the ctypes load
of an exported host library, ``shared=True``) and the first ``learn_one``,
each with ``time.perf_counter``, and reports whether numba or scipy was
imported. ``ROOT`` is a folder holding an ``edgereg`` package (put first on
``PYTHONPATH``; default: the current one); with several roots the runs
alternate between them so that each sees the same machine load, and the
medians (with min and max) are printed side by side in ms.

``--pyc DIR`` lets the runs read and write bytecode under ``DIR``
(``PYTHONPYCACHEPREFIX``; a first run per tree writes it) as an installed
wheel does, where ``PYTHONDONTWRITEBYTECODE`` would otherwise have every
edgereg module compiled from source at each start. ``--bare`` starts python
with ``-S`` and numpy's folder on the path: no ``.pth`` file runs (a
development install's import finder imports pathlib and more before the
clock starts), as on a device with a plain wheel install.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
x = np.ones(int(sys.argv[2]))
t0 = time.perf_counter()
import edgereg.native
t1 = time.perf_counter()
m = edgereg.native.NativeModel(sys.argv[1])
t2 = time.perf_counter()
m.learn_one(x, 1.0)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "learn_one": t3 - t2, "total": t3 - t0,
                  "numba": "numba" in sys.modules, "scipy": "scipy" in sys.modules,
                  "file": edgereg.native.__file__}))
"""

PHASES = ("import", "load", "learn_one", "total")


def run(library: str, root: str | None, d: int, pyc: str | None, bare: bool) -> dict:
    env = dict(os.environ)
    path = [os.path.abspath(root) if root is not None else None, env.get("PYTHONPATH")]
    if bare:
        import numpy

        path.append(os.path.dirname(os.path.dirname(numpy.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, path))
    if pyc is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.abspath(pyc)
    flags = ["-S"] if bare else []
    out = subprocess.run([sys.executable, *flags, "-c", CHILD, library, str(d)], env=env,
                         cwd=os.path.dirname(library),  # not the caller's folder: sys.path[0]
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=os.path.abspath)
    parser.add_argument("roots", nargs="*")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pyc", help="bytecode folder (PYTHONPYCACHEPREFIX)")
    parser.add_argument("--bare", action="store_true", help="python -S: no .pth file runs")
    args = parser.parse_intermixed_args(argv)
    layout = os.path.join(os.path.dirname(args.library),
                          os.path.basename(args.library).removeprefix("lib").split(".")[0]
                          + ".json")
    with open(layout) as f:
        d = int(json.load(f)["d"])
    roots = args.roots or [None]
    rows: dict = {r: [] for r in roots}
    for r in roots:  # warm the disk cache (and write the .pyc files)
        run(args.library, r, d, args.pyc, args.bare)
    for _ in range(args.runs):
        for r in roots:
            rows[r].append(run(args.library, r, d, args.pyc, args.bare))
    mode = (f"bytecode under {args.pyc}" if args.pyc else
            "PYTHONDONTWRITEBYTECODE=" + os.environ.get("PYTHONDONTWRITEBYTECODE", ""))
    print(f"{args.runs} fresh processes per tree, alternating; {mode}"
          f"{'; python -S' if args.bare else ''}; ms: median (min-max)")
    for r in roots:
        got = rows[r]
        print(f"{r or 'PYTHONPATH as is'}  ({got[0]['file']})")
        for phase in PHASES:
            ms = [g[phase] * 1e3 for g in got]
            print(f"  {phase:<10} {statistics.median(ms):7.2f}  ({min(ms):.2f}-{max(ms):.2f})")
        print(f"  numba imported: {any(g['numba'] for g in got)}, "
              f"scipy imported: {any(g['scipy'] for g in got)}")


if __name__ == "__main__":
    main()
