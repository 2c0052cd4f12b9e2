"""Flash, RAM and stack of an exported DFOP on RV32, measured by the build.

    python examples/c/riscv/measure.py [d] [OUT]

Exports DFOP (forgetting 0.01) float32 and float64 for riscv32-unknown-none-elf
as rv32imac (cpu sifive-e31, ABI ilp32: no FPU) and rv32imafc (cpu sifive-e76,
ABI ilp32f: single-precision FPU), tuned for speed (O3) and for size, builds
../cortex-m/main.c (a drifting stream generated on the device) with this
folder's startup.c and virt.ld and picolibc, runs it on qemu's virt machine,
and prints one row each: the exported object's code bytes; the flash (text,
constants, .data) of the kernels and what they pull in (a firmware keeping
only them, minus an empty one), split into the kernels, libgcc's soft-float
and 64-bit integer helpers and picolibc; main.c's whole firmware; the state
struct (RAM); the stack of learn_one (step 500, measured by painting); and
the soft-double helpers the kernels call.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIN = HERE.parent / "cortex-m" / "main.c"
#: name -> (cpu, ABI, gcc flags)
TARGETS = {"rv32imac": ("sifive-e31", "ilp32", ["-march=rv32imac", "-mabi=ilp32"]),
           "rv32imafc": ("sifive-e76", "ilp32f", ["-march=rv32imafc", "-mabi=ilp32f"])}
FLAGS = ["-O2", "-ffunction-sections", "-fdata-sections", "-nostartfiles",
         "--specs=picolibc.specs", "-Wl,--gc-sections"]
PROGRAM = {"main", "_start", "c_start", "trap_handler", "semihost", "semihost_write",
           "semihost_exit", "uniform", "put_uint", "stack_paint", "stack_used", "rng", "model",
           "keep"}


def kind(name: str) -> str:
    if name.startswith(("edgereg_dfop_", "_ZN")):
        return "kernels"
    if re.fullmatch(r"__\w*df\w*|__float(un)?di\w*|__fix\w*", name):  # conversions too
        return "soft-double"
    if re.fullmatch(r"__\w*sf\d?", name):
        return "soft-single"
    if re.fullmatch(r"__\w*(di|si)\d|__clz_tab", name):
        return "int64"
    return "program" if name in PROGRAM else "libc/libm"


#: Only the kernels kept (and the initial state the header's init copies): the
#: flash they pull in is this firmware's minus EMPTY's.
KEEP = """#include "edgereg_dfop.h"
void *volatile keep[3];
static edgereg_dfop_state model;
int main(void) {
    edgereg_dfop_init(&model);
    keep[0] = (void *)edgereg_dfop_learn_one_blocks;
    keep[1] = (void *)edgereg_dfop_learn_many_blocks;
    keep[2] = (void *)edgereg_dfop_predict_one_blocks;
    return 0;
}
"""
EMPTY = "int main(void) { return 0; }\n"


def link(out: Path, key: str, name: str, sources: list[str]) -> Path:
    elf = out / f"{name}.elf"
    subprocess.run(["riscv64-unknown-elf-gcc", *FLAGS, *TARGETS[key][2],
                    f"-DBOARD=\"{key}\"", "-T", str(HERE / "virt.ld"), "-I", str(out),
                    "-Wl,-Map," + str(out / f"{name}.map"), "-o", str(elf),
                    str(HERE / "startup.c"), *sources, "-lm"], check=True)
    return elf


def flash(elf: Path) -> int:
    size = subprocess.run(["riscv64-unknown-elf-size", "-A", str(elf)], capture_output=True,
                          text=True, check=True).stdout
    return sum(int(m.group(2)) for m in re.finditer(r"^(\.text|\.data)\s+(\d+)", size, re.M))


def split(elf: Path) -> dict:
    """Bytes of code, constants and data by kind of symbol."""
    nm = subprocess.run(["riscv64-unknown-elf-nm", "-S", "--size-sort", str(elf)],
                        capture_output=True, text=True, check=True).stdout
    parts = dict.fromkeys(("kernels", "soft-double", "soft-single", "int64", "libc/libm",
                           "program"), 0)
    seen = set()  # aliases (__ltsf2 = __lesf2) counted once
    for line in nm.splitlines():
        cols = line.split()
        if len(cols) == 4 and cols[2] in "tTrRdD" and cols[0] not in seen:
            seen.add(cols[0])
            parts[kind(cols[3])] += int(cols[1], 16)
    return parts


def firmware(out: Path, key: str) -> dict:
    obj = str(out / "edgereg_dfop.o")
    (out / "keep.c").write_text(KEEP)
    (out / "empty.c").write_text(EMPTY)
    elf = link(out, key, "dfop", [str(MAIN), obj])
    kept = link(out, key, "keep", [str(out / "keep.c"), obj])
    empty = link(out, key, "empty", [str(out / "empty.c")])
    run = subprocess.run(["qemu-system-riscv32", "-M", "virt", "-bios", "none", "-nographic",
                          "-monitor", "none", "-serial", "none", "-semihosting-config",
                          "enable=on,target=native", "-kernel", str(elf)],
                         capture_output=True, text=True, timeout=300)
    kept_split, empty_split = split(kept), split(empty)
    parts = {k: kept_split[k] - empty_split[k] for k in kept_split}
    undefined = subprocess.run(["riscv64-unknown-elf-nm", "-u", obj], capture_output=True,
                               text=True, check=True).stdout.split()
    double = [u for u in undefined if kind(u) == "soft-double"]
    return {"flash": flash(elf), "pulled": flash(kept) - flash(empty), **parts,
            "double": double, "exit": run.returncode,
            "output": (run.stdout + run.stderr).strip()}


def main(d: int = 6, out: str = "/tmp/edgereg-rv32") -> None:
    sys.path.insert(0, str(HERE.parents[2]))
    import edgereg
    from edgereg.export import export_batch

    jobs, keys = [], []
    for size in (False, True):
        for key, (cpu, abi, _) in TARGETS.items():
            for dt in ("float32", "float64"):
                jobs.append(dict(model=edgereg.DFOP(d, 0.01, dtype=dt),
                                 target="riscv32-unknown-none-elf", cpu=cpu, abi=abi, size=size,
                                 out=f"{out}/{key}-{dt}-{'size' if size else 'o3'}"))
                keys.append(key)
    for job, key, info in zip(jobs, keys, export_batch(jobs), strict=True):
        r = firmware(Path(job["out"]), key)
        print(f"{Path(job['out']).name}: object {info['code_bytes']} B; kernels and what "
              f"they pull in {r['pulled']} B of flash (kernels {r['kernels']}, soft-double "
              f"{r['soft-double']}, soft-single {r['soft-single']}, int64 {r['int64']}, "
              f"libc/libm {r['libc/libm']}); main.c firmware {r['flash']} B; state "
              f"{info['state_bytes']} B; exit {r['exit']}; {r['output']}; soft-double "
              f"called: {' '.join(r['double'])}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6, *sys.argv[2:3])
