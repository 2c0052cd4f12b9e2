"""One naming scheme for the index constants of the kernels' small arrays.

An index into ``hyper`` is HYPER_<NAME>, into ``codes`` CODE_<NAME>, into a cache
CACHE_<NAME>, into a counts array COUNT_<NAME>; another array's indices are
<ARRAY>_<NAME>; the sizes are N_HYPER, N_CODES, N_CACHE, N_COUNTS, N_<ARRAY>S. They
are public: the exported C header and the Python layer share them
(docs/design/calling_convention.md, "Index names").
"""

# rename_indices: leave this file (it spells the old names on purpose)

from __future__ import annotations

import ast
import re
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "edgereg" / "_kernels"

#: The arrays that have index constants, by prefix (calling_convention.md, "Index names").
PREFIXES = {"HYPER", "CODE", "CACHE", "COUNT", "LEARNT", "INTERVAL", "IHYPER", "SCREEN",
            "GLOBAL", "SCALAR", "YSTAT"}
#: The old style: a one-letter prefix (_H_ETA, _C_SKIP) or a private size (_N_HYPER).
OLD_STYLE = re.compile(r"^_([A-Z]|N)_[A-Z0-9]")


def _int_constants(tree: ast.Module) -> dict[str, int]:
    """Module-level names bound to int literals: ``A = 1``, ``A, B = 0, 1``,
    ``A, B = range(2)`` (line numbers as values)."""
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(n, ast.Name) for n in names):
            continue
        if isinstance(value, ast.Tuple):
            ints = all(isinstance(v, ast.Constant) and type(v.value) is int for v in value.elts)
        elif isinstance(value, ast.Call):
            ints = isinstance(value.func, ast.Name) and value.func.id == "range"
        else:
            ints = isinstance(value, ast.Constant) and type(value.value) is int
        if ints:
            out.update({n.id: node.lineno for n in names})
    return out


def _subscript_names(tree: ast.Module) -> set[str]:
    """Names used as an index: ``a[NAME]``, or ``a[NAME : NAME + 4]`` (a few entries
    from NAME on). A bound between two parts of a block (``N[RECORD : RECORD + N_COUNTS]``,
    ``N[:RECORD]``) is a size, not an index."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        index = node.slice
        if isinstance(index, ast.Name):
            out.add(index.id)
        elif (isinstance(index, ast.Slice) and isinstance(index.lower, ast.Name)
              and isinstance(index.upper, ast.BinOp) and isinstance(index.upper.left, ast.Name)
              and index.upper.left.id == index.lower.id
              and isinstance(index.upper.right, ast.Constant)):
            out.add(index.lower.id)
    return out


def naming_faults(kernels: Path = KERNELS) -> list[str]:
    modules = {p: ast.parse(p.read_text()) for p in sorted(kernels.glob("*.py"))}
    used = set().union(*(_subscript_names(t) for t in modules.values()))
    faults = []
    for path, tree in modules.items():
        for name, line in _int_constants(tree).items():
            where = f"{path.name}:{line}: {name}"
            if OLD_STYLE.match(name):
                faults.append(f"{where} (old style: <ARRAY>_<NAME> or N_<ARRAY>, public)")
            elif name in used and not name.startswith("N_"):
                prefix = name.split("_")[0]
                if name.startswith("_") or prefix not in PREFIXES:
                    faults.append(f"{where} is an index: name it <ARRAY>_<NAME> with ARRAY "
                                  f"one of {sorted(PREFIXES)} (or add the array's prefix)")
    return faults


def test_index_constants_follow_one_scheme():
    faults = naming_faults()
    assert not faults, "\n".join(faults)


def test_the_rule_sees_an_old_name(tmp_path):
    (tmp_path / "k.py").write_text("MU, P0 = 0, 1\n_C_SKIP = 2\nOK = 0\n"
                                   "def f(hyper, codes):\n    return hyper[MU] + codes[_C_SKIP]\n")
    faults = naming_faults(tmp_path)
    assert [f.split(":")[0] + ":" + f.split(": ")[1].split(" ")[0] for f in faults] == [
        "k.py:MU", "k.py:_C_SKIP"]
