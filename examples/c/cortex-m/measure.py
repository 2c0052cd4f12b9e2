"""Flash, RAM and stack of an exported DFOP on Cortex-M4F, measured by the build.

    python examples/c/cortex-m/measure.py [d] [OUT] [m4f|m0plus]

Exports DFOP (forgetting 0.01) float32 (``arithmetic="float32"``: float32 only),
float32 of the default arithmetic (float64 scalars) and float64 for
thumbv7em-unknown-none-eabihf (cpu cortex-m4), tuned for speed (O3) and for size, builds main.c
(this folder: a drifting stream generated on the device) with startup.c and
mps2.ld, runs it on qemu's mps2-an386 board, and prints one row each: the
exported object's code bytes, the firmware's flash split into the kernels,
libgcc's soft-double helpers and libm/libc, the state struct (RAM), and the
stack of learn_one, measured by painting (tests/export_support.py's harness
does the same for learn_many).

``m0plus``: the Cortex-M0+ instead (thumbv6m-unknown-none-eabi, no FPU: every
float in libgcc's soft float; microbit.ld, qemu's microbit board), float32 only
and float32 mixed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMON = ["-O2", "-mthumb", "-ffunction-sections", "-fdata-sections", "-nostartfiles",
          "--specs=nosys.specs", "-Wl,--gc-sections"]
#: board -> (triple, cpu, gcc flags, linker script, qemu machine)
BOARDS = {
    "m4f": ("thumbv7em-unknown-none-eabihf", "cortex-m4",
            ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], "mps2.ld",
            "mps2-an386"),
    "m0plus": ("thumbv6m-unknown-none-eabi", "cortex-m0plus",
               ["-mcpu=cortex-m0plus", "-mfloat-abi=soft"], "microbit.ld", "microbit"),
}
FLAGS = [*COMMON, *BOARDS["m4f"][2]]


def firmware(out: Path, board: str = "m4f") -> dict:
    elf = out / "dfop.elf"
    _, _, flags, script, machine = BOARDS[board]
    subprocess.run(["arm-none-eabi-gcc", *COMMON, *flags, "-T", str(HERE / script), "-I",
                    str(out), "-Wl,-Map," + str(out / "dfop.map"), "-o", str(elf),
                    str(HERE / "startup.c"), str(HERE / "main.c"),
                    str(out / "edgereg_dfop.o"), "-lm"], check=True)
    run = subprocess.run(["qemu-system-arm", "-M", machine, "-nographic", "-monitor",
                          "none", "-serial", "none", "-semihosting-config",
                          "enable=on,target=native", "-kernel", str(elf)],
                         capture_output=True, text=True, timeout=300)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "--size-sort", str(elf)],
                        capture_output=True, text=True, check=True).stdout
    split = {"kernels": 0, "soft-double": 0, "soft-single": 0, "libm/libc": 0, "program": 0}
    seen = set()  # an address once: newlib's aliases (__aeabi_memset4, _8) are one body
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[2] not in "tTrR" or parts[0] in seen:
            continue
        seen.add(parts[0])
        size, name = int(parts[1], 16), parts[3]
        # numba's (zeroed) exception descriptors are the exported object's constants
        if name.startswith(("edgereg_dfop_", "_ZN7edgereg", ".const.picklebuf")):
            split["kernels"] += size
        elif re.match(r"__(aeabi_[dl]|adddf|subdf|muldf|divdf|cmpdf|unorddf|extendsf|truncdf|"
                      r"fixdf|floatun|floatdi|aeabi_ul2d|aeabi_l2d|aeabi_d2lz)", name):
            split["soft-double"] += size
        elif re.match(r"__(aeabi_(f|i2f|ui2f|idiv|uidiv|lmul)|addsf|subsf|mulsf|divsf|cmpsf|"
                      r"unordsf|fixsf|fixunssf|floatsisf|floatunsisf|[gl][et]sf|eqsf|nesf|"
                      r"(u?div|u?mod)si|clzsi)", name):
            split["soft-single"] += size
        elif name in ("main", "Reset_Handler", "Fault_Handler", "semihost_write", "uniform",
                      "put_uint", "stack_paint", "stack_used", "vectors", "semihost",
                      "semihost_exit"):
            split["program"] += size
        else:
            split["libm/libc"] += size
    size = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True,
                          text=True, check=True).stdout
    text = sum(int(m.group(2)) for m in re.finditer(r"^(\.text|\.ARM\.exidx)\s+(\d+)", size,
                                                    re.M))
    return {"flash": text, **split, "output": (run.stdout + run.stderr).strip()}


def main(d: int = 6, out: str = "/tmp/edgereg-m4", board: str = "m4f") -> None:
    sys.path.insert(0, str(HERE.parents[2]))
    import edgereg
    from edgereg.export import export_batch

    # float32: the float32-only arithmetic (what `edgereg export --dtype float32` makes);
    # float32-mixed: a float32 model of the default arithmetic (float64 scalars).
    kinds = {"float32": dict(dtype="float32", arithmetic="float32"),
             "float32-mixed": dict(dtype="float32"), "float64": dict(dtype="float64")}
    if board == "m0plus":
        del kinds["float64"]
    triple, cpu = BOARDS[board][:2]
    jobs = [dict(model=edgereg.DFOP(d, 0.01, **kw), target=triple,
                 cpu=cpu, size=size, out=f"{out}/{name}-{'size' if size else 'o3'}")
            for size in (False, True) for name, kw in kinds.items()]
    for job, info in zip(jobs, export_batch(jobs), strict=True):
        row = firmware(Path(job["out"]), board)
        print(f"{Path(job['out']).name}: object {info['code_bytes']} B; firmware flash "
              f"{row['flash']} B = kernels {row['kernels']} + soft-double {row['soft-double']}"
              f" + soft-single {row['soft-single']}"
              f" + libm/libc {row['libm/libc']} + program {row['program']}; state "
              f"{info['state_bytes']} B; {row['output']}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6, *sys.argv[2:4])
