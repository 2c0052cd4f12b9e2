"""The export itself, run in a process of its own (``NUMBA_OPT=0``: see ``llvm``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def main(spec: dict) -> dict:
    import edgereg

    from . import llvm
    from .families import family_of
    from .header import blob_header, layout, write_header, write_readme
    from .symbols import check

    model = edgereg.load(spec["state"])
    family = family_of(model)
    prefix = spec["name"] or f"edgereg_{family.prefix}"
    triple = spec["target"] or llvm.host_triple()
    try:
        llvm.target_machine(triple, spec["cpu"], "", spec["size"])
    except RuntimeError as exc:
        raise SystemExit(f"unknown target {triple!r}: {exc}") from None
    functions = {f"{k}_blocks": v for k, v in family.functions.items()}
    modules, names = llvm.shim_ir(functions, prefix)
    obj, text = llvm.build(modules, names, triple, spec["cpu"], "", spec["size"])
    left = llvm.leftovers(text)
    if left:
        raise SystemExit(f"host-specific values survived optimisation: {left}")
    facts = check(obj, names)
    out = Path(spec["out"])
    params = model.get_params() | {"dtype": str(model.dtype)}
    args = ", ".join(f"{k}={v!r}" for k, v in params.items())
    info = dict(facts, triple=triple, cpu=spec["cpu"], state_bytes=layout(family)[1],
                description=f"{spec['model_name']}({args})",
                version=f"edgereg {edgereg.__version__}, numba {_v('numba')}, "
                        f"llvmlite {_v('llvmlite')}")
    paths = {"object": out / f"{prefix}.o", "header": out / f"{prefix}.h",
             "readme": out / f"README-{prefix}.md"}
    paths["object"].write_bytes(obj)
    head = blob_header(family, spec["model_name"], params)
    paths["header"].write_text(write_header(family, prefix, info, head))
    paths["readme"].write_text(write_readme(family, prefix, info))
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
    print(json.dumps(main(json.loads(sys.argv[1]))))
