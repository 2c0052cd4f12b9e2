"""``edgereg.export``: a model's kernels as a C object file for a device.

``export(model_or_class, target=..., cpu=..., dtype=..., features=d, out=DIR)``
writes ``<name>.o`` (the kernels, compiled by LLVM for the target), ``<name>.h``
(the state layout, ``init``, ``learn_one``, ``learn_many``, ``predict_one``,
their statuses, the hyper-parameters) and ``README-<name>.md``. The route and
its checks are docs/design/export.md. Supported: DFOP and RLS (regression and
classification, fixed or per-step forgetting, and ``forgetting="auto"``'s
bank), PARegressor (PA-I, PA-II, one output or several), SOMOR, MORES, NORMA
(regression, classification, novelty), SparseDFOP (dense rows and sparse
rows of indices and values), SelectiveSampler (its round in two calls:
assess, then commit the label) and DriftAlarm over DFOP, RLS or the bank.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._errors import ExportError as ExportError

__all__ = ["ExportError", "export", "export_batch", "export_state", "PINNED"]

#: The numba and llvmlite versions the exporter is tested with. The route uses
#: numba internals (a compiled function's IR and calling convention): another
#: version could emit wrong code silently, so it is refused.
PINNED = {"numba": "0.68.1", "llvmlite": "0.50."}


def check_versions() -> None:
    import llvmlite
    import numba

    found = {"numba": numba.__version__, "llvmlite": llvmlite.__version__}
    bad = [f"{k} {found[k]} (the exporter is tested with {k} "
           f"{v + '*' if v.endswith('.') else v})"
           for k, v in PINNED.items()
           if not (found[k].startswith(v) if v.endswith(".") else found[k] == v)]
    if bad:
        raise ExportError("edgereg export refuses to run with " + " and ".join(bad)
                          + ": install numba==0.68.1 llvmlite==0.50.* in the environment "
                            "that exports (the device needs neither)")


def _model(model_or_class: Any, features: int | None, dtype: str | None,
           params: dict) -> Any:
    from .._base import OnlineModel, model_class

    if isinstance(model_or_class, OnlineModel):
        model = model_or_class
        if features is not None and features != model.n_features:
            raise ValueError(f"features={features} but the model has {model.n_features}")
        if dtype is not None and str(model.dtype) != str(dtype):
            raise ValueError(f"dtype={dtype} but the model is {model.dtype}")
        return model
    cls = model_class(model_or_class) if isinstance(model_or_class, str) else model_or_class
    if features is None:
        raise ValueError("features (the input dimension d) is required to export a class")
    if cls.__name__ == "DriftAlarm":
        raise ExportError("DriftAlarm wraps a model: export an instance "
                          "(edgereg.export(DriftAlarm(DFOP(d, mu)), ...)) or a saved alarm's file")
    if str(dtype) == "float32" and "arithmetic" not in params:
        if getattr(cls, "_arith32", None) is None:
            # No float32-only arithmetic: a float32 class export would run its float64
            # scalars in software on a single-precision FPU, where --dtype float32
            # promises float32 only. An instance is exported as it is, on purpose.
            raise ExportError(
                f"{cls.__name__} has no float32-only arithmetic (docs/design/export.md, "
                "'Not yet'): a float32 export of the class would keep float64 scalars, "
                "soft double on a single-precision FPU. Export float64, or a float32 "
                f"instance ({cls.__name__}(..., dtype='float32')), which exports as it is "
                "(float32 arrays, float64 scalars)")
        # A float32 export computes in float32 only: the arithmetic="float32" of
        # DFOP, RLS, PARegressor, SOMOR, MORES and NORMA (an instance is exported as it is).
        params = {**params, "arithmetic": "float32"}
    return cls(features, dtype=dtype or "float64", **params)


def export(model_or_class: Any, target: str | None = None, cpu: str = "", abi: str = "",
           dtype: str | None = None, features: int | None = None, out: str = ".",
           name: str | None = None, size: bool = False, shared: bool = False,
           **params: Any) -> dict:
    """Write a model's kernels as a C object file, header and README.

    Parameters
    ----------
    model_or_class : model, class or class name
        A model (its parameters and dtype are exported; its learnt state is
        not: see :func:`export_state`), or a class with ``features`` and
        ``params`` (its constructor's keyword arguments).
    target : str
        LLVM target triple, e.g. ``thumbv7em-unknown-none-eabihf``; default
        the host.
    cpu : str
        LLVM CPU name (``cortex-m4``, ``arm1176jzf-s``, ``sifive-e76``); default
        generic.
    abi : str
        The calling convention where a target has several: RISC-V ``ilp32``
        (soft float, LLVM's default on rv32) or ``ilp32f`` (float arguments in
        the FPU's registers). It is written in the object's ELF flags and must
        match the C compiler's ``-mabi``: the linker refuses a mix.
    size : bool
        Optimise for size (no unrolling, no vectorisation).
    shared : bool
        Also link a shared library with the host C compiler (for
        ``edgereg.native``).

    Returns
    -------
    dict
        Paths written and the measured facts: undefined symbols, code bytes,
        state bytes.

    Raises
    ------
    ExportError
        Wrong numba/llvmlite version, unknown target, unsupported model, or
        an object that fails the symbol allow-list (Python, NRT, allocation,
        exception or global-state symbols).
    """
    return export_batch([dict(model=_model(model_or_class, features, dtype, params),
                              target=target, cpu=cpu, abi=abi, out=out, name=name, size=size,
                              shared=shared)])[0]


def export_batch(jobs: list[dict], errors: str = "raise",
                 numba_opt: int | None = None) -> list[dict]:
    """Several exports in one compiling process (each model's shims compiled once,
    then built for each of its targets). ``jobs``: dicts of :func:`export`'s
    keyword arguments, with ``model`` a model instance. ``errors="return"``:
    a job that fails gives ``{"error": message}`` instead of raising.
    ``numba_opt``: numba's optimisation level for the IR. Default: 3 for the
    host (the JIT's own IR: at d = 50 the IR of level 0 ran at 0.58x the
    JIT, level 3's at 1.17x, asv_bench/export_vs_jit.py), 0 for any other
    target (IR not tuned to the host's vector width)."""
    if numba_opt is None:
        host = [j.get("target") is None for j in jobs]
        out: list = [None] * len(jobs)
        for level, pick in ((3, True), (0, False)):
            chosen = [i for i, h in enumerate(host) if h == pick]
            if chosen:
                done = export_batch([jobs[i] for i in chosen], errors, level)
                for i, r in zip(chosen, done, strict=True):
                    out[i] = r
        return out
    check_versions()
    from .families import family_of

    for job in jobs:
        family_of(job["model"])  # an unsupported model is refused before compiling
    specs = []
    with tempfile.TemporaryDirectory(prefix="edgereg-export-") as tmp:
        for i, job in enumerate(jobs):
            model = job["model"]
            state = Path(tmp) / f"model{i}.npz"
            model.save(state)
            out_dir = Path(job.get("out", "."))
            out_dir.mkdir(parents=True, exist_ok=True)
            specs.append({"state": str(state), "target": job.get("target"),
                          "cpu": job.get("cpu", ""), "abi": job.get("abi", ""),
                          "out": str(out_dir),
                          "name": job.get("name"), "size": job.get("size", False),
                          "shared": job.get("shared", False),
                          "model_name": type(model).__name__})
        env = dict(os.environ)
        # IR not tuned to the host CPU; compiled kernels cached apart from the JIT's.
        env.update(NUMBA_OPT=str(numba_opt), NUMBA_CACHE_DIR=str(Path(tmp) / "numba-cache"))
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[2])] + [env.get("PYTHONPATH", "")])
        spec_file = Path(tmp) / "jobs.json"
        spec_file.write_text(json.dumps(specs))
        proc = subprocess.run([sys.executable, "-W", "ignore", "-m", "edgereg.export._worker",
                               str(spec_file)], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            message = proc.stderr.strip().splitlines()
            raise ExportError("export failed:\n" + "\n".join(message[-12:]))
        results = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = [r["error"] for r in results if "error" in r]
    if failed and errors == "raise":
        raise ExportError("\n".join(failed))
    return results


def export_state(model: Any, path: str, format: str = "bin", name: str | None = None) -> None:
    """Write a model's state as the exported header's struct: a blob ("bin", which
    ``edgereg.load`` reads back) or a C source file ("c") defining the struct."""
    from .families import family_of
    from .header import blob_header, image, layout

    family = family_of(model)
    data = image(family, family.current)
    head = blob_header(family, type(model).__name__, model.get_params() | {
        "dtype": str(model.dtype)})
    prefix = name or f"edgereg_{family.prefix}"
    if format == "bin":
        Path(path).write_bytes(head + data)
    elif format == "c":
        from .header import _c_bytes

        Path(path).write_text(
            f"/* {type(model).__name__} state for {prefix}.h ({layout(family)[1]} bytes): "
            f"memcpy it onto a {prefix}_state. */\n#include <stdint.h>\n"
            f"const unsigned char {prefix}_saved_state[{len(data)}] "
            f"__attribute__((aligned(8))) = {{\n    {_c_bytes(data)}\n}};\n")
    else:
        raise ValueError(f"format must be 'bin' or 'c', got {format!r}")
