"""Count edgereg's compiled kernels by their number of parameters.

    python docs/design/scripts/kernel_params.py [--over N] [--list] [ROOT]

Reads the source of ``edgereg/`` (``ast``, nothing imported or compiled) and
counts the functions decorated as kernels (``kernel``, ``inline_kernel``,
``parallel_kernel``, ``compiled(...)``, numba's ``njit``/``jit``), with how many take more than
N parameters (default 8, the calling convention's aim: docs/design/
calling_convention.md). ``--list`` prints each of those, most parameters first.
ROOT is the repository (default: the one this script is in).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

#: numba's decorators and edgereg's (``_jit``: ``compiled(...)`` and the names
#: given to its results, ``kernel``, ``inline_kernel``, ``parallel_kernel``...).
DECORATORS = {"compiled", "njit", "jit"}


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def kernels(root: Path) -> list[tuple[str, str, int]]:
    """(file, function, number of parameters) of every kernel under root/edgereg."""
    found = []
    for path in sorted((root / "edgereg").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            names = [_decorator_name(d) for d in node.decorator_list]
            if any(n in DECORATORS or n.endswith("kernel") for n in names):
                a = node.args
                n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                n += (a.vararg is not None) + (a.kwarg is not None)
                found.append((str(path.relative_to(root)), node.name, n))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[3]))
    parser.add_argument("--over", type=int, default=8)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    found = kernels(Path(args.root))
    over = sorted((k for k in found if k[2] > args.over), key=lambda k: (-k[2], k[0], k[1]))
    print(f"{len(found)} kernels, {len(over)} with more than {args.over} parameters")
    if args.list:
        for path, name, n in over:
            print(f"{n:4d}  {path}:{name}")


if __name__ == "__main__":
    main()
