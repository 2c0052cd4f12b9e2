"""Flash, state RAM and stack of every exported model on microcontrollers, measured by the build.

    python examples/c/sizes.py [OUT] [--targets cortex-m4f,cortex-m0plus,...] [--models a,b]

Exports each model (d = 6, ``--dtype float32``: the float32-only arithmetic)
for each bare-metal target, links it into the export tests' harness (the
hostile stream of ``tests/export_support.py``: NaN/inf rows, a refused label,
learn_one then learn_many) with the board's start-up code and linker script,
runs it on qemu and prints one markdown row per (model, target):

- flash: what the model costs in the firmware, read from the linker's map:
  the exported object's code and constants, plus what they pull in from
  libgcc (soft float, 64-bit arithmetic) and the C library (memset, sqrtf);
  the harness and the start-up code are left out;
- state: the state struct (RAM), the caller's one allocation;
- stack: the deepest stack of the first learn_one and of learn_many,
  measured by painting the stack (``examples/c/stack_paint.h``);
- whether the run equals the JIT bit for bit (the hash of every prediction
  and of the learnt state).

Each model is built twice: for speed (numba and LLVM at O3, the default of
``edgereg export``) and for size (``--size``). The run
needs the toolchains ``.ci/export-tools.sh`` installs and takes a few minutes
(each model's kernels compile once for all targets).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def models() -> dict:
    """label -> factory: every exported family, in its float32-only arithmetic where
    it has one (SparseDFOP apart: its rows are of D features, not d)."""
    import edgereg

    f32 = dict(dtype="float32", arithmetic="float32", on_invalid="skip")
    return {
        "DFOP (forgetting 0.01)": lambda: edgereg.DFOP(6, 0.01, **f32),
        "DFOP classification": lambda: edgereg.DFOP(6, 0.05, task="classification",
                                                    keep_prior=False, **f32),
        'DFOP forgetting="auto"': lambda: edgereg.DFOP(6, "auto", **f32),
        "PARegressor (PA-II)": lambda: edgereg.PARegressor(6, variant="II", C=0.5, **f32),
        "SOMOR (m = 2)": lambda: edgereg.SOMOR(6, 2, **f32),
        "MORES (m = 3)": lambda: edgereg.MORES(6, 3, decay=0.95, **f32),
        "NORMARegressor (budget 48)": lambda: edgereg.NORMARegressor(6, 48, gamma=0.5, **f32),
        "NORMAClassifier (budget 48)": lambda: edgereg.NORMAClassifier(6, 48, **f32),
        "NORMANovelty (budget 48)": lambda: edgereg.NORMANovelty(6, 48, **f32),
        # No float32-only arithmetic (their tests' e-values are float64 with libm):
        # float32 arrays, float64 scalars, soft double on these boards.
        "SelectiveSampler (float32; float64 scalars)": lambda: edgereg.SelectiveSampler(
            6, dtype="float32", on_invalid="skip"),
        "DriftAlarm over DFOP (float32; float64 scalars)": lambda: edgereg.DriftAlarm(
            edgereg.DFOP(6, 0.01, dtype="float32", on_invalid="skip")),
    }


TARGETS = ("cortex-m4f", "cortex-m0plus", "riscv32-imac", "riscv32-imafc")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", nargs="?", default=None)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--models", default="", help="labels (comma-separated; default all)")
    parser.add_argument("--readme", default=None,
                        help="also check the README's size table (flash --size / learn_one "
                             "stack --size of each model measured): exit 1 on a difference")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    import export_support as S

    from edgereg.export.families import family_of

    chosen = models()
    if args.models:
        unknown = set(args.models.split(",")) - set(chosen)
        if unknown:
            parser.error(f"unknown models {sorted(unknown)}; known: {list(chosen)}")
        chosen = {k: v for k, v in chosen.items() if k in args.models.split(",")}
    targets = args.targets.split(",")
    missing = {t: S.missing_for(t) for t in targets if S.missing_for(t)}
    if missing:
        print(f"toolchains missing (bash .ci/export-tools.sh installs them): {missing}")
        return 1
    labels = {f"m{i}": label for i, label in enumerate(chosen)}
    # Each model twice: built for speed (O3, the default) and for size (--size).
    cases = [(f"{key}{'-size' if size else ''}", chosen[label], target, 6,
              150 if target == "cortex-m0plus" else 300,  # the M0+ board has 16 KB of RAM
              family_of(chosen[label]()).task, size)
             for target in targets for key, label in labels.items() for size in (False, True)]
    out = Path(args.out or tempfile.mkdtemp(prefix="edgereg-sizes-"))
    rows = {(row["label"], row["target"]): row for row in S.run_cases(cases, out)}

    def measured(row):
        c = row["c"].splitlines()
        stack = next((line.split() for line in c if line.startswith("STACK")), None)
        f = row["flash"] or {}
        total = f.get("kernels", 0) + f.get("libgcc", 0) + f.get("libc/libm", 0)
        flash = (f"{total:,} = {f.get('kernels', 0):,} + {f.get('libgcc', 0):,} + "
                 f"{f.get('libc/libm', 0):,}")
        return flash, f"{stack[2]} / {stack[4]}" if stack else "?", bool(c) and c[0] == row["jit"]

    print("| model | target | flash O3: kernels + libgcc + libc/libm (B) | flash `--size` (B) "
          "| state (B) | stack learn_one / learn_many, O3; `--size` (B) | = JIT |")
    print("|---|---|---:|---:|---:|---:|---|")
    failed = False
    stated = readme_cells(Path(args.readme)) if args.readme else {}
    for target in targets:
        for key, label in labels.items():
            fast, small = rows[key, target], rows[f"{key}-size", target]
            (f3, s3, e3), (fs, ss, es) = measured(fast), measured(small)
            equal = "equal" if e3 and es else "DIFFERENT"
            failed |= not (e3 and es)
            print(f"| {label} | {target} | {f3} | {fs} | {fast['state_bytes']:,} | "
                  f"{s3}; {ss} | {equal} |")
            if args.readme:
                cell = f"{fs.split(' = ')[0]} / {ss.split(' / ')[0]}".replace(",", "")
                if stated.get((label, target)) != cell:
                    print(f"  {args.readme} states {stated.get((label, target))} for "
                          f"{label} on {target}; measured {cell}")
                    failed = True
    return 1 if failed else 0  # a build that failed or differs from the JIT (or the README)


#: The README's names of the models and of their columns, as this script's.
_README_LABELS = {"`forgetting=\"auto\"`": 'forgetting="auto"', "(2 outputs)": "(m = 2)",
                  "(3 outputs)": "(m = 3)",
                  "(float32 arrays, float64 scalars)": "(float32; float64 scalars)"}


def readme_cells(path: Path) -> dict[tuple[str, str], str]:
    """{(model, target): "flash / stack"} of the README's table of sizes (the one
    whose header starts "| model (d = 6, float32)"), thousands' commas removed."""
    cells, inside = {}, False
    for line in path.read_text().splitlines():
        if line.startswith("| model (d = 6, float32)"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        if inside and not line.startswith("|---"):
            label, _state, *sizes = (c.strip() for c in line.strip("|").split("|"))
            for old, new in _README_LABELS.items():
                label = label.replace(old, new)
            for target, size in zip(TARGETS, sizes, strict=True):
                cells[label, target] = size.replace(",", "")
    return cells


if __name__ == "__main__":
    sys.exit(main())
