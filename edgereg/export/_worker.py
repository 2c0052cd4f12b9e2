"""The export itself, run in a process of its own (``NUMBA_OPT=0``: see ``llvm``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

_IR_CACHE: dict = {}


def main(spec: dict) -> dict:
    import edgereg

    from . import llvm
    from .bounds import derived_work, integer_bounds
    from .families import family_of
    from .header import blob_header, image, layout, write_header, write_readme
    from .symbols import check

    model = edgereg.load(spec["state"])
    family = family_of(model)
    prefix = spec["name"] or f"edgereg_{family.prefix}"
    key = (type(model).__name__, json.dumps(model.get_params(), sort_keys=True, default=str),
           prefix)
    triple = llvm.normalise_triple(spec["target"] or llvm.host_triple())
    cpu, features = spec["cpu"], ""
    if spec["target"] is None and not cpu:  # the host: its CPU, as the JIT compiles for
        cpu, features = llvm.host_cpu()
    try:
        llvm.target_machine(triple, cpu, features, spec["size"], spec.get("abi", ""))
    except RuntimeError as exc:
        raise SystemExit(f"unknown target {triple!r}: {exc}") from None
    problem = llvm.abi_problem(triple, cpu, features, spec.get("abi", ""))
    if problem:
        raise SystemExit(problem)
    functions = {f"{k}_blocks": v for k, v in family.functions.items()}
    if key not in _IR_CACHE:  # one model's shims, compiled once for all its targets
        _IR_CACHE[key] = llvm.shim_ir(functions, prefix)
    modules, names = _IR_CACHE[key]
    obj, text = llvm.build(modules, names, triple, cpu, features, spec["size"],
                           spec.get("abi", ""))
    left = llvm.leftovers(text)
    if left:
        raise SystemExit(f"host-specific values survived optimisation: {left}")
    facts = check(obj, names)
    out = Path(spec["out"])
    params = model.get_params() | {"dtype": str(model.dtype)}
    args = ", ".join(f"{k}={v!r}" for k, v in params.items())
    info = dict(facts, triple=triple, cpu=cpu, abi=spec.get("abi", ""),
                state_bytes=layout(family)[1], description=f"{spec['model_name']}({args})",
                version=f"edgereg {edgereg.__version__}, numba {_v('numba')}, "
                        f"llvmlite {_v('llvmlite')}")
    paths = {"object": out / f"{prefix}.o", "header": out / f"{prefix}.h",
             "readme": out / f"README-{prefix}.md", "layout": out / f"{prefix}.json"}
    paths["object"].write_bytes(obj)
    head = blob_header(family, spec["model_name"], params)
    paths["header"].write_text(write_header(family, prefix, info, head))
    paths["readme"].write_text(write_readme(family, prefix, info))
    offsets, total = layout(family)
    bounds = integer_bounds(model)
    paths["layout"].write_text(json.dumps({
        "prefix": prefix, "model": spec["model_name"], "params": model.get_params(),
        "d": family.d, "dtype": str(family.dtype), "io": str(family.io), "task": family.task,
        "n_outputs": family.n_outputs, "forgetting": family.forgetting,
        "struct_bytes": total, "triple": triple,
        "blocks": [[b.name, str(b.dtype), b.size, at]
                   for b, (_, at) in zip(family.blocks, offsets, strict=True)],
        "fields": [[f.name, f.block, f.offset, list(f.shape), str(f.dtype), f.learnt]
                   for f in family.fields],
        # Element strides of the fields that are not contiguous (a bank's members').
        "field_strides": {f.name: list(f.strides) for f in family.fields if f.strides},
        # [first element, count] of each learnt field's runs in its block.
        "field_runs": {f.name: [list(r) for r in f.runs()] for f in family.fields if f.learnt},
        # [field, flat index, low, high]: what the model's own load accepts of its
        # integers, which the C code uses as indices and loop bounds (edgereg.native).
        "integer_bounds": bounds,
        # [field, flat index, low, byte ranges, their bytes per value]: work the
        # model's own load derives from a learnt integer (a bank's members' factors
        # follow its window), for edgereg.native's load.
        "derived_work": derived_work(model, bounds),
        "init": image(family, {b.name: b.initial for b in family.blocks}).hex(),
        "blob_header": head.hex(),
    }, indent=1))
    if spec["shared"]:
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise SystemExit("shared=True needs a host C compiler (cc)")
        paths["shared"] = out / f"lib{prefix}.so"
        subprocess.run([cc, "-shared", "-o", str(paths["shared"]), str(paths["object"]),
                        "-lm"], check=True)
    info.update({k: str(v) for k, v in paths.items()})
    info["prefix"] = prefix
    return info


def _v(name: str) -> str:
    return __import__(name).__version__


if __name__ == "__main__":
    results = []
    for job in json.loads(Path(sys.argv[1]).read_text()):
        try:
            results.append(main(job))
        except Exception as exc:  # one job's failure must not lose the others
            from ._errors import ExportError

            if not isinstance(exc, ExportError):
                raise
            results.append({"error": str(exc)})
        except SystemExit as exc:
            results.append({"error": str(exc)})
    print(json.dumps(results))
