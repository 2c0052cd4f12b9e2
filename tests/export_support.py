"""What the export tests, the CI script and the C benchmark share: a hostile
stream, the JIT's hash of it, a C harness that replays it, and the toolchains."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np

FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a(data: bytes, h: int = FNV_OFFSET) -> int:
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def stream(d: int, n: int, task: str = "regression", seed: int = 0):
    """Rows with drift, a NaN target, an inf input, a huge target, and per-step
    forgetting factors (some above 2 / d: wide prior refreshes) for the second half."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    Y = X @ w + 0.1 * rng.normal(size=n)
    Y[n // 2:] = X[n // 2:] @ (-w) + 0.1 * rng.normal(size=n - n // 2)
    if task == "classification":
        Y = (Y > 0).astype(np.float64)
        Y[n // 5] = 2.0  # an unknown label: invalid
    Y[7] = np.nan
    X[11, 2] = np.inf
    Y[n // 3] = 1e300 if task == "regression" else Y[n // 3]
    X[n // 4, 1] = np.nan
    MU = rng.choice([0.0, 0.01, 0.05, 0.3, 0.6], size=n)
    return X, Y, MU


def targets(family, X, Y):
    """The stream's targets as the family takes them: Y (n,), or (n, m) for m
    outputs (column k > 0 another linear target, the hostile rows kept)."""
    m = family.n_outputs
    if not m:
        return Y
    d = X.shape[1]
    cols = [Y] + [(k + 1) * Y - 0.5 * np.nan_to_num(X[:, k % d], posinf=0.0)
                  for k in range(1, m)]
    return np.ascontiguousarray(np.column_stack(cols))


def learnt_ranges(family):
    """(block name, first element, count) of every learnt field."""
    return [(f.block, at, n) for f in family.fields if f.learnt for at, n in f.runs()]


def _hex_array(name: str, values: np.ndarray, ctype: str, bits: str) -> str:
    raw = values.reshape(-1).view(bits)
    body = ",".join(f"0x{int(v):x}u" for v in raw)
    return f"static const {ctype} {name}[{raw.size}] = {{{body}}};\n"


#: The harnesses' C helpers: FNV-1a over bytes, and an integer or a text into a line.
C_HELPERS = r"""static uint64_t fnv(uint64_t h, const unsigned char *p, size_t k) {
    for (size_t i = 0; i < k; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
    return h;
}
static char *put_int(char *p, int64_t v) {
    char tmp[24]; int k = 0; uint64_t u = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
    if (v < 0) *p++ = '-';
    do { tmp[k++] = (char)('0' + u % 10u); u /= 10u; } while (u);
    while (k) *p++ = tmp[--k];
    return p;
}
static char *put_text(char *p, const char *t) { while (*t) *p++ = *t++; return p; }
static char *put_hex(char *p, uint64_t h) {
    for (int k = 60; k >= 0; k -= 4) *p++ = "0123456789abcdef"[(h >> k) & 15u];
    return p;
}
"""


def hash_learnt(family) -> str:
    """C lines folding every learnt field of the state ``s`` into the hash ``h``."""
    return "".join(f"    h = fnv(h, (const unsigned char *)(s.{b} + {first}), "
                   f"{count} * sizeof s.{b}[0]);\n"
                   for b, first, count in learnt_ranges(family))


def assert_equal_to_jit(row) -> None:
    """A harness's first line is the JIT's (``HASH <hex> invalid <k> first -1``), with
    rows refused on the way (the stream's NaN/inf rows under on_invalid="skip")."""
    line = row["c"].splitlines()[0]
    assert line == row["jit"]
    assert re.fullmatch(r"HASH [0-9a-f]{16} invalid [1-9]\d* first -1", line)


def harness_source(prefix: str, family, X, Y, MU, split: int, bare: bool = False,
                   extra: str = "") -> str:
    """A C program replaying jit_line's calls and printing its line (``HASH <hex>
    invalid <k> first <r>``); ``bare``: through semihosting, with the stack use of
    the first learn_one and of learn_many (``startup.c``'s painting). ``extra``: C
    statements run after learn_many, before the state is hashed (they may hash
    more into ``h``; jit_line's ``after`` gives the JIT's bytes)."""
    dt = np.dtype(family.dtype)
    ubits = "uint64" if dt.itemsize == 8 else "uint32"
    ut = "uint64_t" if dt.itemsize == 8 else "uint32_t"
    n, d = X.shape
    Y = targets(family, X, Y)
    io = np.dtype(family.io)  # y, yhat, Y, mu, out: double, or float (float32 arithmetic)
    ybits, yt = ("uint64", "uint64_t") if io.itemsize == 8 else ("uint32", "uint32_t")
    with np.errstate(over="ignore"):  # 1e300 is inf in float
        Y, MU = Y.astype(io), MU.astype(io)
    m = max(family.n_outputs, 1)  # values per target and per prediction
    y_arg = f"Y + (size_t)t * {m}" if family.n_outputs else "Y[t]"
    mu_args = f"MU + {split}, {n - split}" if family.forgetting else "NULL, 0"
    # No forgetting: factors given anyway are refused (-3) with nothing learnt (the
    # hash after it is the JIT's); a wrong status spoils the first line.
    refuse = "" if family.forgetting else (
        f"if ({prefix}_learn_many(&s, X + (size_t){split} * {d}, Y + {split * m}, {n - split}, "
        f"MU + {split}, {n - split}, out) != {prefix.upper()}_BAD_LENGTH) "
        "REPORT(\"n_mu not refused\\n\");\n    ")
    hashed = hash_learnt(family)
    if bare == "linux":  # a static Linux program with no C library start-up (armv6)
        head = "void linux_write(const char *);\n#define REPORT(t) linux_write(t)\n"
        paint = used1 = paint2 = used2 = ""
    elif bare:
        head = ("void semihost_write(const char *);\nvoid stack_paint(void);\n"
                "unsigned stack_used(void);\n#define REPORT(t) semihost_write(t)\n")
        paint, used1 = "stack_paint();", "if (t == 0) st1 = stack_used();"
        paint2, used2 = "stack_paint();", "st2 = stack_used();"
    else:
        head = "#include <stdio.h>\n#define REPORT(t) fputs(t, stdout)\n"
        paint = used1 = paint2 = used2 = ""
    return f"""#include <stdint.h>
#include <string.h>
#include "{prefix}.h"
{head}{_hex_array("Xbits", X.astype(dt), ut, ubits)}{_hex_array("Ybits", Y, yt, ybits)}
{_hex_array("MUbits", MU, yt, ybits)}
static {prefix}_state s;
static {prefix}_real X[{n * d}];
static {prefix}_yreal Y[{n * m}], MU[{n}], out[{n * m}];
{C_HELPERS}int main(void) {{
    char line[160], *p = line;
    unsigned st1 = 0, st2 = 0;
    memcpy(X, Xbits, sizeof X); memcpy(Y, Ybits, sizeof Y); memcpy(MU, MUbits, sizeof MU);
    {prefix}_init(&s);
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t bad = 0;
    for (int t = 0; t < {split}; t++) {{
        {prefix}_yreal yhat[{m}];
        {paint}
        bad += {prefix}_learn_one(&s, X + (size_t)t * {d}, {y_arg}, yhat);
        {used1}
        h = fnv(h, (const unsigned char *)yhat, {m} * sizeof yhat[0]);
    }}
    {refuse}{paint2}
    int64_t first = {prefix}_learn_many(&s, X + (size_t){split} * {d}, Y + {split * m},
                                        {n - split}, {mu_args}, out);
    {used2}
    h = fnv(h, (const unsigned char *)out, {(n - split) * m} * sizeof out[0]);
{extra}{hashed}    p = put_text(p, "HASH "); p = put_hex(p, h);
    p = put_text(p, " invalid "); p = put_int(p, bad);
    p = put_text(p, " first "); p = put_int(p, first);
    *p++ = '\\n'; *p = 0;
    REPORT(line);
    if (st1 | st2) {{
        p = line; p = put_text(p, "STACK learn_one "); p = put_int(p, st1);
        p = put_text(p, " learn_many "); p = put_int(p, st2); *p++ = '\\n'; *p = 0;
        REPORT(line);
    }}
    return 0;
}}
"""


#: name -> (triple, cpu, C compiler, flags, runner prefix). Linux user-mode targets.
LINUX_TARGETS = {
    "x86_64": (None, "", "gcc", [], []),  # the host: its CPU, numba's own IR
    "aarch64": ("aarch64-unknown-linux-gnu", "cortex-a53", "aarch64-linux-gnu-gcc", ["-static"],
                ["qemu-aarch64-static"]),
    "armv7hf": ("armv7-unknown-linux-gnueabihf", "cortex-a7", "arm-linux-gnueabihf-gcc",
                ["-static"], ["qemu-arm-static", "-cpu", "cortex-a7"]),
    # Debian's armhf C library is ARMv7 Thumb-2 code (SIGILL on an ARM1176):
    # the harness links newlib's ARM-mode hard-float multilib instead, with a
    # start-up of its own (LINUX_START) calling Linux directly.
    "armv6hf": ("armv6-unknown-linux-gnueabihf", "arm1176jzf-s", "arm-none-eabi-gcc",
                ["-static", "-marm", "-march=armv6kz+fp", "-mfpu=vfp", "-mfloat-abi=hard",
                 "-nostartfiles", "--specs=nosys.specs", "-x", "c", "linux_start.c", "-x",
                 "none"],
                ["qemu-arm-static", "-cpu", "arm1176"]),
}

#: _start, write and exit for a static ARM Linux program without a C library start-up.
LINUX_START = r"""
#include <stddef.h>
int main(void);
static long sys(long n, long a, long b, long c) {
    register long r0 __asm__("r0") = a, r1 __asm__("r1") = b, r2 __asm__("r2") = c;
    register long r7 __asm__("r7") = n;
    __asm__ volatile("svc 0" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r7) : "memory");
    return r0;
}
void linux_write(const char *t) { size_t k = 0; while (t[k]) k++; sys(4, 1, (long)t, (long)k); }
void _start(void) { sys(1, main(), 0, 0); for (;;) {} }
"""


def missing_tools(tools: list[str]) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]


def build_and_run(workdir: Path, exported: dict, source: str, cc: str, flags: list[str],
                  runner: list[str]) -> str:
    (workdir / "harness.c").write_text(source)
    if "linux_start.c" in flags:
        (workdir / "linux_start.c").write_text(LINUX_START)
        flags = [str(workdir / f) if f == "linux_start.c" else f for f in flags]
    exe = workdir / "harness"
    subprocess.run([cc, "-O2", "-std=c11", "-I", str(workdir), *flags, "-o", str(exe),
                    str(workdir / "harness.c"), exported["object"], "-lm"], check=True,
                   capture_output=True, text=True)
    run = subprocess.run([*runner, str(exe)], check=True, capture_output=True, text=True,
                         timeout=120)
    return run.stdout.strip()


def jit_line(model, family, X, Y, MU, split: int, after=None) -> str:
    """The JIT's line as the harness prints it (hash, learn_one's invalid count,
    learn_many's return: -1 under on_invalid="skip"). ``after(model)``: the bytes
    the harness's ``extra`` hashes, from the JIT (after learn_many)."""
    Xd = X.astype(model.dtype)
    Y = targets(family, X, Y)
    m = model
    bad = 0
    preds = []
    novelty = family.task == "novelty"  # no target: learn_one(x), learn_many(X)
    for t in range(split):
        before = m.n_skipped_
        yt = () if novelty else (Y[t],)
        preds.append(np.copy(m.learn_one(Xd[t], *yt)).reshape(-1))
        bad += m.n_skipped_ - before
    more = ({"forgetting": MU[split:]} if family.forgetting else {})
    Yt = () if novelty else (Y[split:],)
    preds.append(np.asarray(m.learn_many(Xd[split:], *Yt, **more)).reshape(-1))
    h = fnv1a(np.concatenate(preds).astype(np.dtype(family.io).newbyteorder("<")).tobytes())
    if after is not None:
        h = fnv1a(after(m), h)
    blocks = {name: a.reshape(-1) for name, a in family.current.items()}
    for name, first, count in learnt_ranges(family):
        h = fnv1a(blocks[name][first: first + count].tobytes(), h)
    return f"HASH {h:016x} invalid {bad} first -1"

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "c"

#: name -> (triple, cpu, C compiler, flags, qemu machine). Bare-metal targets.
BARE_TARGETS = {
    "cortex-m4f": ("thumbv7em-unknown-none-eabihf", "cortex-m4", "arm-none-eabi-gcc",
                   ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                   "mps2-an386"),
    "cortex-m7": ("thumbv7em-unknown-none-eabihf", "cortex-m7", "arm-none-eabi-gcc",
                  ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
                  "mps2-an500"),
    # No FPU: float32 and float64 both in libgcc's soft float. 16 KB of RAM.
    "cortex-m0plus": ("thumbv6m-unknown-none-eabi", "cortex-m0plus", "arm-none-eabi-gcc",
                      ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"], "microbit"),
    # qemu's RISC-V `virt` machine, picolibc. sifive-e31 is rv32imac (no FPU,
    # soft-float ABI ilp32); sifive-e76 is rv32imafc (single-precision FPU,
    # floats passed in FPU registers: ilp32f). -march/-mabi must match the
    # object's ELF flags or the link fails.
    "riscv32-imac": ("riscv32-unknown-none-elf", "sifive-e31", "riscv64-unknown-elf-gcc",
                 ["-march=rv32imac", "-mabi=ilp32"], "virt"),
    "riscv32-imafc": ("riscv32-unknown-none-elf", "sifive-e76", "riscv64-unknown-elf-gcc",
                  ["-march=rv32imafc", "-mabi=ilp32f"], "virt"),
}

#: The ABI passed to ``edgereg export`` (``abi=``) where a target has several.
TARGET_ABI = {"riscv32-imac": "ilp32", "riscv32-imafc": "ilp32f"}

#: machine -> (examples folder, linker script, C library specs, qemu).
_BOARDS = {
    "mps2-an386": ("cortex-m", "mps2.ld", "nosys.specs", "qemu-system-arm"),
    "mps2-an500": ("cortex-m", "mps2.ld", "nosys.specs", "qemu-system-arm"),
    "microbit": ("cortex-m", "microbit.ld", "nosys.specs", "qemu-system-arm"),
    "virt": ("riscv", "virt.ld", "picolibc.specs", "qemu-system-riscv32"),
}


def tools_of(key: str) -> list[str]:
    if key in LINUX_TARGETS:
        _, _, cc, _, runner = LINUX_TARGETS[key]
        return [cc, *runner[:1]]
    return [BARE_TARGETS[key][2], _BOARDS[BARE_TARGETS[key][4]][3]]


def missing_for(key: str) -> list[str]:
    """The tools (and C library) a target's run needs that this machine lacks."""
    missing = missing_tools(tools_of(key))
    if not missing and key in BARE_TARGETS and _BOARDS[BARE_TARGETS[key][4]][2] != "nosys.specs":
        cc, specs = BARE_TARGETS[key][2], _BOARDS[BARE_TARGETS[key][4]][2]
        found = subprocess.run([cc, f"-print-file-name={specs}"], capture_output=True,
                               text=True).stdout.strip()
        if not Path(found).is_absolute():  # gcc echoes a name it cannot find
            missing.append(f"{specs} (picolibc)")
    return missing


#: An input section of a GNU ld map: its name (alone on a line when long), then
#: its address, size and the file (or ``archive(member)``) it came from.
_MAP_SECTION = re.compile(r"^ (\.[\w.$]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S.*)$", re.M)


def flash_split(map_text: str, exported_object: str, undefined: list[str]) -> dict:
    """Bytes of flash (code, read-only data and .data's initial image) in a linked
    firmware by where they came from, read from the linker's map: ``kernels`` (the
    exported object), ``libgcc`` (soft float, 64-bit division...) and ``libc/libm``
    (memset, sqrtf...) for the archive members the object needs (its ``undefined``
    symbols, and what those members need in turn), ``program`` for the rest (the
    harness, its data, the start-up code and the members only they need)."""
    head, _, rest = map_text.partition("Discarded input sections")
    # "archive(member)" then, indented, "file (symbol)": the member was linked for it.
    pulled = re.findall(r"^(\S+\.a\([^)]+\))\s*\n\s+(\S+) \(([^)]+)\)", head, re.M)
    name = Path(exported_object).name
    model = set()
    changed = True
    while changed:  # members the object needs, directly or through other such members
        changed = False
        for member, by, symbol in pulled:
            if member not in model and (by.endswith(name) or by in model or symbol in undefined):
                model.add(member)
                changed = True
    text = re.sub(r"^ (\.[\w.$]+)\n\s+(0x)", r" \1 \2",
                  rest.split("Linker script and memory map", 1)[-1], flags=re.M)
    split = {"kernels": 0, "libgcc": 0, "libc/libm": 0, "program": 0}
    for section, size, origin in _MAP_SECTION.findall(text):
        if not section.startswith((".text", ".rodata", ".data", ".srodata", ".sdata")):
            continue
        origin = origin.strip()
        if origin.endswith(name):
            split["kernels"] += int(size, 16)
        elif origin in model:
            split["libgcc" if "libgcc.a(" in origin else "libc/libm"] += int(size, 16)
        else:
            split["program"] += int(size, 16)
    return split


def build_and_run_bare(workdir: Path, exported: dict, source: str, key: str) -> tuple[str, dict]:
    """Firmware for a qemu board (MPS2, micro:bit, RISC-V virt): the harness, the
    board's startup.c and linker script; its output and the firmware's flash by
    origin (``flash_split``)."""
    _, _, cc, flags, machine = BARE_TARGETS[key]
    folder, script, specs, qemu = _BOARDS[machine]
    (workdir / "harness.c").write_text(source)
    elf = workdir / "harness.elf"
    here = EXAMPLES / folder
    subprocess.run([cc, "-O2", "-std=c11", "-I", str(workdir), *flags, "-ffunction-sections",
                    "-fdata-sections", "-nostartfiles", f"--specs={specs}",
                    "-Wl,--gc-sections", "-Wl,-Map," + str(workdir / "harness.map"),
                    "-T", str(here / script), "-o", str(elf),
                    str(here / "startup.c"), str(workdir / "harness.c"), exported["object"],
                    "-lm"], check=True, capture_output=True, text=True)
    bios = ["-bios", "none"] if machine == "virt" else []  # start at 0x80000000, no OpenSBI
    run = subprocess.run([qemu, "-M", machine, *bios, "-nographic", "-monitor", "none",
                          "-serial", "none", "-semihosting-config", "enable=on,target=native",
                          "-kernel", str(elf)], capture_output=True, text=True, timeout=300)
    text = (run.stdout + run.stderr).strip()  # qemu writes semihosting output to stderr
    if run.returncode != 0:
        raise RuntimeError(f"qemu exit {run.returncode}: {text}")
    return text, flash_split((workdir / "harness.map").read_text(), exported["object"],
                             exported["undefined"])


#: The kernels' modules whose models share compiled kernels, and the weight of
#: one model's export in them (measured: a DFOP or bank model took about three
#: times a PA, SOMOR or NORMA model, 37 s against 12 s at level 3).
_KERNEL_GROUPS = {"edgereg.dfop": ("dfop", 3), "edgereg.bank": ("dfop", 3),
                  # DFOP's kernels under a projection or an alarm (the drift over the
                  # bank, the bank's too); the selective's are its own, heavier than PA's.
                  "edgereg.sparse_dfop": ("dfop", 3), "edgereg.drift": ("dfop", 3),
                  "edgereg.selective": ("other", 2)}


def run_cases(cases: list[tuple], workdir: Path, reuse: bool = False,
              extra: list[dict] | None = None, jobs_at_once: int = 2,
              shared: set | tuple = ()) -> list[dict]:
    """Export every (model, target key) case, run each harness, and return one
    row per case with the C line and the JIT's line.
    A case is (label, model factory, target key, d, n, task[, size]): ``size`` exports
    for size (``edgereg export --size``) instead of speed; task ``EXPORT_ONLY``
    exports with no harness and no JIT line (a test drives the object itself:
    ``on_invalid="raise"``, which the hostile stream's harness cannot replay). A case that fails
    to build or run has its error as its C line. ``reuse``: keep the objects of
    an earlier run in ``workdir`` (development). ``extra``: more export jobs for
    the host, their results returned first as rows. ``shared``: the (label, key)
    cases whose export also links a shared library (the host's C compiler); their
    rows give its path as ``shared``.

    The exports are compiling processes (``export_batch``) run ``jobs_at_once``
    at a time, the heaviest first: numba's level 3 for the host, level 0 for the
    other targets, each split by kernel group (DFOP's and the bank's models, the
    others) and dtype, so that no two compile the same kernel (a model's shims
    are compiled once for all its targets in its batch). Each
    harness is built and run (gcc, qemu) as soon as its batch is written,
    ``jobs_at_once`` at a time, while this thread writes the harnesses and
    computes the JIT's lines (numba, and the families' parsing of the kernels'
    source, stay in this thread)."""
    import json
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from edgereg.export import export_batch
    from edgereg.export.families import family_of

    jobs, meta = [], []
    for label, factory, key, d, n, task, *size in cases:
        model = factory()
        triple, cpu = (LINUX_TARGETS.get(key) or BARE_TARGETS[key])[:2]
        out = workdir / f"{label}-{key}"
        out.mkdir(parents=True, exist_ok=True)
        jobs.append(dict(model=model, target=triple, cpu=cpu, abi=TARGET_ABI.get(key, ""),
                         out=str(out), shared=(label, key) in shared, size=bool(size and size[0])))
        meta.append((label, factory, key, d, n, task, out))
    todo = [i for i, m in enumerate(meta) if not (reuse and (m[-1] / "info.json").exists())]
    extra = extra or []
    if any(job.get("target") is not None for job in extra):
        raise ValueError("the extra export jobs are for the host")
    # Batches that share no compiled kernel (a batch compiles its own, from no
    # cache): per numba level, kernel group and dtype.
    batches: dict[tuple, list] = {}
    weight: dict[tuple, float] = {}
    for i in todo:
        model = jobs[i]["model"]
        group, w = _KERNEL_GROUPS.get(type(model).__module__, ("other", 1))
        batch = (3 if jobs[i]["target"] is None else 0, group, str(model.dtype))
        batches.setdefault(batch, []).append(i)
        weight[batch] = weight.get(batch, 0) + 0.1 * w  # a target's build
        if meta[i][0] not in {meta[j][0] for j in batches[batch][:-1]}:
            weight[batch] += w  # the model's shims
    host = None  # the extra jobs' batch: the first one's model's
    if extra:
        model = extra[0]["model"]
        host = (3, _KERNEL_GROUPS.get(type(model).__module__, ("other", 1))[0],
                str(model.dtype))
        batches.setdefault(host, [])
        weight[host] = weight.get(host, 0) + 3 * len(extra)
    # The heaviest first: the two slots end at about the same time.
    order = sorted(batches, key=lambda b: -weight[b])

    def export(batch):
        chosen, more = batches[batch], extra if batch == host else []
        done = export_batch(more + [jobs[i] for i in chosen], numba_opt=batch[0])
        for i, info in zip(chosen, done[len(more):], strict=True):
            (meta[i][-1] / "info.json").write_text(json.dumps(info))
        return done[: len(more)], chosen

    def build(i, prefix, family, X, Y, MU, split):
        label, factory, key, d, n, task, out = meta[i]
        if task == EXPORT_ONLY:
            return ""
        info = json.loads((out / "info.json").read_text())
        try:
            if key in LINUX_TARGETS:
                _, _, cc, flags, runner = LINUX_TARGETS[key]
                src = harness_source(prefix, family, X, Y, MU, split,
                                     bare="linux" if "linux_start.c" in flags else False)
                c_line = build_and_run(out, info, src, cc, flags, runner)
            else:
                src = harness_source(prefix, family, X, Y, MU, split, bare=True)
                c_line, flash = build_and_run_bare(out, info, src, key)
                (out / "flash.json").write_text(json.dumps(flash))
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired,
                RuntimeError) as exc:
            c_line = f"ERROR {exc} {getattr(exc, 'stderr', '')}"[:2000]
        (out / "line.txt").write_text(c_line)
        return c_line

    rows: list[dict] = [{} for _ in meta]
    inputs = []
    extra_rows: list = []
    built = {i: None for i in range(len(meta)) if i not in todo}  # objects reused

    def submit_built():
        for i in [i for i, f in built.items() if f is None]:
            prefix = json.loads((meta[i][-1] / "info.json").read_text())["prefix"]
            built[i] = building.submit(build, i, prefix, *inputs[i])

    with ThreadPoolExecutor(jobs_at_once) as exporting, \
            ThreadPoolExecutor(jobs_at_once) as building:
        exports = [exporting.submit(export, b) for b in order]
        # The JIT's lines while the exports compile (the family read-only after).
        for i, (label, factory, key, d, n, task, _) in enumerate(meta):
            model = factory()
            family = family_of(model)
            X, Y, MU = stream(d, n, task)
            split = n // 2
            inputs.append((family, X, Y, MU, split))
            rows[i] = {"label": label, "target": key,
                       "jit": None if task == EXPORT_ONLY else jit_line(model, family, X, Y,
                                                                        MU, split)}
        submit_built()
        for future in as_completed(exports):
            more, chosen = future.result()
            extra_rows += more
            built.update({i: None for i in chosen})
            submit_built()
        for i, future in built.items():
            info = json.loads((meta[i][-1] / "info.json").read_text())
            rows[i].update(c=future.result(), out=str(meta[i][-1]), undefined=info["undefined"],
                           code_bytes=info["code_bytes"], state_bytes=info["state_bytes"],
                           shared=info.get("shared"),
                           flash=json.loads((meta[i][-1] / "flash.json").read_text())
                           if (meta[i][-1] / "flash.json").exists() else None)
    return extra_rows + rows


#: run_cases' task of a case that is exported only (no harness, no JIT line).
EXPORT_ONLY = "export-only"

#: The session's export rows (``session_rows``), computed once.
_SESSION: dict = {}


def session_rows(session, tmp_path_factory) -> dict:
    """``run_cases`` once for every export test module of the pytest session: each
    module that defines ``export_cases(items)`` (its items of the session -> its
    cases and the (label, key) pairs also linked as shared libraries) has its
    cases exported in the same batches as the others', so that two modules' models
    on the same kernels (DFOP under a drift alarm or a projection, and DFOP) compile
    them once, and the two export slots stay busy from the first case to the last
    (.ci/export.sh runs every module in one pytest). Rows by (label, target key);
    a row's ``out`` is its folder (``info.json``: the export's paths and facts)."""
    if "rows" not in _SESSION:
        modules: list = []
        for item in session.items:
            module = getattr(item, "module", None)
            if hasattr(module, "export_cases") and module not in modules:
                modules.append(module)
        cases: list = []
        shared: set = set()
        for module in modules:
            more, links = module.export_cases([i for i in session.items
                                               if getattr(i, "module", None) is module])
            taken = {(c[0], c[2]) for c in cases}
            clash = [(c[0], c[2]) for c in more if (c[0], c[2]) in taken]
            if clash:
                raise ValueError(f"{module.__name__}: export cases named twice: {clash}")
            cases += more
            shared |= set(links)
        rows = run_cases(cases, tmp_path_factory.mktemp("export"), shared=shared)
        _SESSION["rows"] = {(r["label"], r["target"]): r for r in rows}
    return _SESSION["rows"]
