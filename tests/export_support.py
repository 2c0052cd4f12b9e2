"""What the export tests, the CI script and the C benchmark share: a hostile
stream, the JIT's hash of it, a C harness that replays it, and the toolchains."""

from __future__ import annotations

import shutil
import struct
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


def learnt_ranges(family):
    """(block name, first element, count) of every learnt field."""
    return [(f.block, f.offset, int(np.prod(f.shape))) for f in family.fields if f.learnt]


def jit_hash(model, family, X, Y, MU, split: int) -> str:
    """Predictions of learn_one (rows < split), then learn_many with per-step
    forgetting, and the learnt fields after: one FNV-1a hash (the harness's)."""
    X = X.astype(model.dtype)
    preds = [model.learn_one(X[t], Y[t]) for t in range(split)]
    preds += list(model.learn_many(X[split:], Y[split:], forgetting=MU[split:]))
    h = fnv1a(np.asarray(preds, dtype="<f8").tobytes())
    blocks = {b.name: getattr(model, "_" + b.name).reshape(-1) for b in family.blocks}
    for name, first, count in learnt_ranges(family):
        h = fnv1a(blocks[name][first: first + count].tobytes(), h)
    return f"{h:016x}"


def _hex_array(name: str, values: np.ndarray, ctype: str, bits: str) -> str:
    raw = values.reshape(-1).view(bits)
    body = ",".join(f"0x{int(v):x}u" for v in raw)
    return f"static const {ctype} {name}[{raw.size}] = {{{body}}};\n"


def harness_source(prefix: str, family, X, Y, MU, split: int, out: str = "printf") -> str:
    """A C program replaying jit_hash's calls and printing ``HASH <hex>``."""
    dt = np.dtype(family.dtype)
    ubits = "uint64" if dt.itemsize == 8 else "uint32"
    ut = "uint64_t" if dt.itemsize == 8 else "uint32_t"
    n, d = X.shape
    blocks = [b.name for b in family.blocks]
    hashed = "".join(f"    h = fnv(h, (const unsigned char *)(s.{b} + {first}), "
                     f"{count} * sizeof s.{b}[0]);\n"
                     for b, first, count in learnt_ranges(family))
    return f"""#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "{prefix}.h"
{_hex_array("Xbits", X.astype(dt), ut, ubits)}{_hex_array("Ybits", Y, "uint64_t", "uint64")}
{_hex_array("MUbits", MU, "uint64_t", "uint64")}
static {prefix}_state s;
static {prefix}_real X[{n * d}];
static double Y[{n}], MU[{n}], out[{n}];
static uint64_t fnv(uint64_t h, const unsigned char *p, size_t k) {{
    for (size_t i = 0; i < k; i++) {{ h ^= p[i]; h *= 0x100000001b3ull; }}
    return h;
}}
int main(void) {{
    memcpy(X, Xbits, sizeof X); memcpy(Y, Ybits, sizeof Y); memcpy(MU, MUbits, sizeof MU);
    {prefix}_init(&s);
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t bad = 0;
    for (int t = 0; t < {split}; t++) {{
        double yhat;
        bad += {prefix}_learn_one(&s, X + (size_t)t * {d}, Y[t], &yhat);
        h = fnv(h, (const unsigned char *)&yhat, 8);
    }}
    int64_t first = {prefix}_learn_many(&s, X + (size_t){split} * {d}, Y + {split}, {n - split},
                                        MU + {split}, {n - split}, out);
    h = fnv(h, (const unsigned char *)out, {n - split} * 8);
{hashed}    {out}("HASH %08lx%08lx invalid %ld first %ld\\n", (unsigned long)(h >> 32),
           (unsigned long)(h & 0xffffffffu), (long)bad, (long)first);
    (void)sizeof {blocks[0]!r};
    return 0;
}}
""".replace(f"    (void)sizeof {blocks[0]!r};\n", "")


#: name -> (triple, cpu, C compiler, flags, runner prefix). Linux user-mode targets.
LINUX_TARGETS = {
    "x86_64": ("x86_64-unknown-linux-gnu", "", "gcc", [], []),
    "aarch64": ("aarch64-unknown-linux-gnu", "cortex-a53", "aarch64-linux-gnu-gcc", ["-static"],
                ["qemu-aarch64-static"]),
    "armv7hf": ("armv7-unknown-linux-gnueabihf", "cortex-a7", "arm-linux-gnueabihf-gcc",
                ["-static"], ["qemu-arm-static", "-cpu", "cortex-a7"]),
    "armv6hf": ("armv6-unknown-linux-gnueabihf", "arm1176jzf-s", "arm-linux-gnueabihf-gcc",
                ["-static", "-marm", "-march=armv6+fp", "-mfpu=vfp", "-mfloat-abi=hard"],
                ["qemu-arm-static", "-cpu", "arm1176"]),
}


def missing_tools(tools: list[str]) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]


def build_and_run(workdir: Path, exported: dict, source: str, cc: str, flags: list[str],
                  runner: list[str]) -> str:
    (workdir / "harness.c").write_text(source)
    exe = workdir / "harness"
    subprocess.run([cc, "-O2", "-std=c11", "-I", str(workdir), *flags, "-o", str(exe),
                    str(workdir / "harness.c"), exported["object"], "-lm"], check=True,
                   capture_output=True, text=True)
    run = subprocess.run([*runner, str(exe)], check=True, capture_output=True, text=True,
                         timeout=120)
    return run.stdout.strip()


def jit_line(model, family, X, Y, MU, split: int) -> str:
    """The JIT's line as the harness prints it (hash, learn_one's invalid count,
    learn_many's return: -1 under on_invalid="skip")."""
    import math

    Xd = X.astype(model.dtype)
    m = model
    bad = 0
    preds = []
    for t in range(split):
        before = m.n_skipped_
        preds.append(m.learn_one(Xd[t], Y[t]))
        bad += m.n_skipped_ - before
    preds += list(m.learn_many(Xd[split:], Y[split:], forgetting=MU[split:]))
    h = fnv1a(struct.pack(f"<{len(preds)}d", *preds))
    blocks = {b.name: getattr(m, "_" + b.name).reshape(-1) for b in family.blocks}
    for name, first, count in learnt_ranges(family):
        h = fnv1a(blocks[name][first: first + count].tobytes(), h)
    del math
    return f"HASH {h:016x} invalid {bad} first -1"
