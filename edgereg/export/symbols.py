"""The symbol allow-list: what an exported object may need from the C side.

Checked on the object file itself (a small ELF reader: no binutils needed),
after LLVM's code generation, which adds library calls of its own (memset,
the ARM EABI helpers). A Python, NRT, allocation, exception or thread-local
symbol, or anything in ``.data``/``.bss`` (global state), fails the export:
this is the proof that the exported code allocates nothing, owns no state
and is reentrant.
"""

from __future__ import annotations

import re
import struct

#: Allowed undefined symbols: memory primitives, exact libm functions, and the
#: compiler runtime's integer and (soft-)float helpers.
ALLOWED = [
    r"memset", r"memcpy", r"memmove",
    r"sqrtf?", r"ceilf?", r"floorf?", r"fabsf?", r"truncf?",
    # The auto bank's fixed-share weights: the target's libm, where the JIT calls
    # the one numba's process links (tests/test_export.py compares the bits).
    r"expf?",
    # SparseDFOP's hashed projection (the ziggurat's tail draws take log), and
    # SelectiveSampler's query threshold t^-kappa (pow), its and DriftAlarm's switch
    # tests' e-values (log, log1p): the target's libm, as for the bank's exp
    # (docs/design/export.md).
    r"logf?", r"log1pf?", r"powf?",
    r"__aeabi_mem(set|clr|cpy|move)[48]?",
    r"__aeabi_[ul]?(div|idiv|uidiv|ldivmod|uldivmod|idivmod|uidivmod|lmul|llsl|llsr|lasr|lcmp|ulcmp)",
    r"__aeabi_[dfl]\w*", r"__aeabi_u?[il]2[df]", r"__aeabi_(f2d|d2f)",
    r"__(mul|div|mod|udiv|umod|ashl|ashr|lshr)[sdt]i3",
    r"__(add|sub|mul|div|neg|extend|trunc|fix|fixuns|float|floatun|eq|ne|lt|le|gt|ge|un|unord"
    r"|cmp)\w*[sdt]f\d?",
    r"__fix(uns)?[sdt]f[sdt]i",
]
#: Never allowed, even if a pattern above would match (clearer messages).
FORBIDDEN = [r"Py\w*", r"_Py\w*", r"NRT_\w*", r"malloc", r"calloc", r"realloc", r"free",
             r"__cxa\w*", r"_Unwind\w*", r"__tls\w*", r"numba\w*", r"\w*Numba\w*"]


def elf_symbols(data: bytes) -> tuple[list[str], list[str], dict[str, int]]:
    """(undefined symbols, defined global symbols, section sizes) of an ELF object."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF object file")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x2E)
    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        if is64:
            name, kind, _, _, off, size, link, _, _, entsize = struct.unpack_from(
                end + "IIQQQQIIQQ", data, base)
        else:
            name, kind, _, _, off, size, link, _, _, entsize = struct.unpack_from(
                end + "IIIIIIIIII", data, base)
        sections.append((name, kind, off, size, link, entsize))
    strtab_off = sections[shstrndx][2]

    def cstr(offset: int) -> str:
        return data[offset: data.index(b"\0", offset)].decode()

    sizes: dict[str, int] = {}
    for name, _kind, _, size, _, _ in sections:
        label = cstr(strtab_off + name)
        if label:
            sizes[label] = sizes.get(label, 0) + size
    undefined, defined = [], []
    for _name, kind, off, size, link, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        names_off = sections[link][2]
        for j in range(size // entsize):
            base = off + j * entsize
            if is64:
                st_name, info, _, shndx = struct.unpack_from(end + "IBBH", data, base)
            else:
                st_name, _, _, info, _, shndx = struct.unpack_from(end + "IIIBBH", data, base)
            bind, stype = info >> 4, info & 0xF
            label = cstr(names_off + st_name)
            if not label or stype in (3, 4):  # section, file
                continue
            if shndx == 0:
                undefined.append(label)
            elif bind in (1, 2):  # global, weak
                defined.append(label)
    return sorted(set(undefined)), sorted(set(defined)), sizes


def check(data: bytes, exported: list[str]) -> dict:
    """Raise ``ExportError`` unless the object passes the allow-list; return its facts."""
    from ._errors import ExportError

    undefined, defined, sizes = elf_symbols(data)
    problems = []
    for sym in undefined:
        if any(re.fullmatch(p, sym) for p in FORBIDDEN) or not any(
                re.fullmatch(p, sym) for p in ALLOWED):
            problems.append(f"undefined symbol {sym!r} is not on the allow-list")
    for sym in defined:
        if sym not in exported:
            problems.append(f"defined global symbol {sym!r} is not an exported function")
    for section, size in sizes.items():
        if size and re.match(r"\.(data|bss|tdata|tbss)\b", section):
            problems.append(f"section {section} holds {size} bytes (global state)")
    if problems:
        raise ExportError("the exported object fails the symbol allow-list:\n  "
                          + "\n  ".join(problems))
    text = sum(v for k, v in sizes.items() if k.startswith((".text", ".rodata")))
    return {"undefined": undefined, "defined": defined, "code_bytes": text,
            "sections": {k: v for k, v in sizes.items()
                         if k.startswith((".text", ".rodata", ".data", ".bss")) and v}}
