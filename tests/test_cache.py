"""edgereg's compiled-kernel cache: where it lives, and that no damaged file breaks it.

Each case runs edgereg in a fresh subprocess (``python -X faulthandler``, so a
crash inside LLVM would show its trace) with ``NUMBA_CACHE_DIR`` unset, as a
user runs it, and the cache folder pointed at a temporary one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from edgereg import _cache

# The slow tier (pytest -m slow): each case compiles kernels in fresh subprocesses.
pytestmark = pytest.mark.slow

#: A DFOP and a NORMA classifier, each through learn_many and learn_one; the
#: printed predictions are compared with a run from an intact cache.
SCRIPT = """
import numpy as np
from edgereg import DFOP, NORMAClassifier
from edgereg import dfop, norma
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = X @ np.array([1.0, -2.0, 0.5])
m = DFOP(3, 0.01)
p = m.learn_many(X, y)
q = m.learn_one(X[0], y[0])
c = NORMAClassifier(3, budget=8)
r = c.learn_many(X, np.sign(y))
hits = sum(sum(d.stats.cache_hits.values()) for mod in (dfop, norma)
           for d in vars(mod).values() if hasattr(d, "stats"))
misses = sum(sum(d.stats.cache_misses.values()) for mod in (dfop, norma)
             for d in vars(mod).values() if hasattr(d, "stats"))
print(repr(p.tolist()), repr(float(q)), repr(r.tolist()))
print("hits", hits, "misses", misses)
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.pop("EDGEREG_CACHE_DIR", None)
    env.update(extra)
    return env


def _run(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def _key_dir(root: Path) -> Path:
    (sub,) = [p for p in root.iterdir() if p.is_dir()]
    return sub


def _intact(path: Path) -> bool:
    raw = path.read_bytes()
    head = len(_cache.MAGIC) + 32
    return raw[: len(_cache.MAGIC)] == _cache.MAGIC and \
        hashlib.sha256(raw[head:]).digest() == raw[len(_cache.MAGIC):head]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, str]:
    """A cache filled by one run, and that run's predictions."""
    root = tmp_path_factory.mktemp("cache")
    done = _run(_env(EDGEREG_CACHE_DIR=str(root)), root)
    assert done.returncode == 0, done.stderr
    again = _run(_env(EDGEREG_CACHE_DIR=str(root)), root)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == done.stdout.splitlines()[0]
    assert again.stdout.splitlines()[1].endswith("misses 0")  # every kernel from the cache
    return root, done.stdout.splitlines()[0]


def test_default_cache_is_the_user_cache_folder_keyed_by_version_and_cpu(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = _env(HOME=str(home), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    done = _run(env, tmp_path)
    assert done.returncode == 0, done.stderr
    folder = _key_dir(tmp_path / "xdg" / "edgereg")
    import numba

    import edgereg

    assert folder.name.startswith(f"{edgereg.__version__}-numba{numba.__version__}-")
    assert folder.name.endswith(f"-py{sys.version_info.major}{sys.version_info.minor}")
    names = {p.suffix for p in folder.iterdir()}
    assert names == {".nbi", ".nbc"}
    assert all(_intact(p) for p in folder.iterdir())


def test_numba_cache_dir_wins(tmp_path):
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"), EDGEREG_CACHE_DIR=str(tmp_path / "e"))
    done = _run(env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "e").exists()
    assert any(p.suffix == ".nbc" for p in (tmp_path / "numba").rglob("*"))


def test_no_cache_file_is_written_into_the_package(tmp_path):
    package = Path(_cache.__file__).resolve().parent
    before = {p: p.stat().st_mtime_ns for p in package.rglob("*.nb[ic]")}
    done = _run(_env(EDGEREG_CACHE_DIR=str(tmp_path / "c")), tmp_path)
    assert done.returncode == 0, done.stderr
    after = {p: p.stat().st_mtime_ns for p in package.rglob("*.nb[ic]")}
    assert after == before


def _damage(path: Path, how: str) -> None:
    raw = bytearray(path.read_bytes())
    if how == "truncate":
        raw = raw[: len(raw) // 2]
    elif how == "zero":
        raw = bytearray(len(raw))
    else:  # one bit in the middle of the payload (machine code for .nbc)
        raw[len(raw) // 2] ^= 0x04
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("how", ["truncate", "zero", "bitflip"])
@pytest.mark.parametrize("kind", [".nbi", ".nbc"])
def test_damaged_cache_files_are_rebuilt(pristine, tmp_path, kind, how):
    source, expected = pristine
    root = tmp_path / "cache"
    shutil.copytree(source, root)
    folder = _key_dir(root)
    # The entry kernels of both models (learn_many, learn_one) and one callee.
    victims = sorted(p for p in folder.iterdir() if p.suffix == kind and (
        "_learn_many" in p.name or "_learn_one" in p.name or "_symv" in p.name))
    assert len(victims) >= 3
    for path in victims:
        _damage(path, how)
    done = _run(_env(EDGEREG_CACHE_DIR=str(root)), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == expected  # the model works, same numbers
    assert "damaged compiled-kernel cache file" in done.stderr
    assert done.stderr.count("EdgeregCacheWarning") == 1  # said once
    assert all(_intact(p) for p in victims)  # rewritten
    again = _run(_env(EDGEREG_CACHE_DIR=str(root)), tmp_path)
    assert again.returncode == 0 and "EdgeregCacheWarning" not in again.stderr
    assert again.stdout.splitlines()[1].endswith("misses 0")


def test_unwritable_cache_folder_falls_back_with_one_notice(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    # Below a regular file nothing can be created, even by root.
    env = _env(EDGEREG_CACHE_DIR=str(blocker / "cache"), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    done = _run(env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("EdgeregCacheWarning") == 1
    assert "is not writable; compiled kernels are cached in" in done.stderr
    assert any(p.suffix == ".nbc" for p in (tmp_path / "tmp").rglob("*"))


def test_nothing_writable_means_no_cache_and_one_notice(monkeypatch):
    from numba import njit

    monkeypatch.setattr(_cache, "_writable", lambda path: False)
    monkeypatch.setattr(_cache._EdgeregLocator, "_path", None)
    monkeypatch.setattr(_cache, "_warned", set())
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(_cache.numba_config, "CACHE_DIR", "")

    def twice(x):
        return 2 * x

    dispatcher = njit(twice)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _cache.enable_cache(dispatcher)
        _cache.enable_cache(njit(twice))
    notices = [w for w in caught if issubclass(w.category, _cache.EdgeregCacheWarning)]
    assert len(notices) == 1 and "not cached" in str(notices[0].message)
    assert dispatcher(21) == 42


def test_cli_cache_reports_and_clears(pristine, tmp_path):
    root = tmp_path / "cache"
    shutil.copytree(pristine[0], root)
    n_files = sum(1 for _ in root.rglob("*.nb[ic]"))
    env = _env(EDGEREG_CACHE_DIR=str(root))
    cmd = [sys.executable, "-m", "edgereg", "cache"]
    shown = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    assert str(_key_dir(root)) in shown and f"{n_files} cache files" in shown
    cleared = subprocess.run(cmd + ["--clear"], env=env, capture_output=True, text=True,
                             check=True).stdout
    assert f"{n_files} cache files" in cleared
    assert not root.exists()


def test_a_kernel_module_recompiles_when_any_module_it_reaches_changes():
    """numba stamps a cached kernel with its own file; _jit.recompile_with mixes
    in the hash of every kernel module it calls, transitively: Fleet's kernels
    reach the guards and the prior through DFOP's (an edit there must not leave
    stale machine code in the fleet's cache)."""
    from edgereg._kernels import fleet, guards, linalg, pa, prior, selective_block, sparse

    reached = {m.__name__.rsplit(".", 1)[1] for m in fleet._KERNEL_DEPENDENCIES}
    assert {"dfop", "guards", "prior", "linalg", "dtype"} <= reached
    reached = {m.__name__.rsplit(".", 1)[1] for m in sparse._KERNEL_DEPENDENCIES}
    assert {"dfop", "hashing", "guards", "prior", "linalg"} <= reached
    reached = {m.__name__.rsplit(".", 1)[1] for m in selective_block._KERNEL_DEPENDENCIES}
    assert {"selective", "guards", "linalg"} <= reached
    reached = {m.__name__.rsplit(".", 1)[1] for m in pa._KERNEL_DEPENDENCIES}
    assert {"mores", "linalg", "eigen"} <= reached
    assert guards and linalg and prior  # imported: the modules exist


# ------------------------------------------------ caches across kernel modules
# docs/design/caching.md: numba checks a cached function against its own file
# only; edgereg's index adds the sha256 of the kernel modules it reaches.
CALLER = """
{imports}
from . import callee
from .callee import g


@{decorator}
def f(x):
    return 2.0 * g(x)
{tail}"""

CALLEE = """
{imports}


@{decorator}
def g(x):
    return x + {step}
"""

RUN = "from pkg.caller import f; print(f(1.0), sum(f.stats.cache_hits.values()))"


def _two_modules(tmp_path: Path, edgereg_cache: bool) -> tuple[Path, dict[str, str]]:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if edgereg_cache:
        imports, decorator = "from edgereg._jit import kernel, recompile_with", "kernel"
        tail = "\n\nrecompile_with(globals(), callee)\n"
        env = _env(EDGEREG_CACHE_DIR=str(tmp_path / "cache"))
    else:
        imports, decorator, tail = "from numba import njit", "njit(cache=True)", ""
        env = _env(NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    (package / "caller.py").write_text(CALLER.format(imports=imports, decorator=decorator,
                                                     tail=tail))
    (package / "callee.py").write_text(CALLEE.format(imports=imports, decorator=decorator,
                                                     step="1.0"))
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), root])
    return package, env


def _f_of_one(env: dict[str, str], cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _edit_callee(package: Path) -> None:
    path = package / "callee.py"
    path.write_text(path.read_text().replace("x + 1.0", "x + 2.0"))  # same size


def test_numbas_cache_alone_keeps_stale_code_when_a_callee_module_changes(tmp_path):
    """Why recompile_with exists (a tripwire: if numba starts to follow callees'
    files, this fails, and recompile_with and its index stamp can go)."""
    package, env = _two_modules(tmp_path, edgereg_cache=False)
    assert _f_of_one(env, tmp_path) == ["4.0", "0"]
    _edit_callee(package)
    assert _f_of_one(env, tmp_path) == ["4.0", "1"]  # stale: 2 (1 + 2) is 6


def test_a_caller_is_recompiled_when_a_module_it_calls_changes(tmp_path):
    """edgereg's kernels: the caller's cache follows the callee's file (and is
    still loaded from the cache while nothing changes). Fails loudly if numba's
    caching internals that _cache.py extends change."""
    package, env = _two_modules(tmp_path, edgereg_cache=True)
    assert _f_of_one(env, tmp_path) == ["4.0", "0"]
    assert _f_of_one(env, tmp_path) == ["4.0", "1"]
    _edit_callee(package)
    assert _f_of_one(env, tmp_path) == ["6.0", "0"]
    assert _f_of_one(env, tmp_path) == ["6.0", "1"]


def _kernel_imports(path: Path) -> set[str]:
    """The sibling kernel modules a module of edgereg/_kernels imports."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module] if node.module else [a.name for a in node.names])
    return found


def test_every_kernel_module_declares_the_kernel_modules_it_imports():
    """A kernel module that imports another (a callee, an overload, a constant
    its code folds in) has it among its recompile_with dependencies, directly
    or through one of them; and every compiled kernel of such a module carries
    their digest in its cache stamp."""
    import importlib

    from numba.core.registry import CPUDispatcher

    folder = Path(_cache.__file__).resolve().parent / "_kernels"
    checked = 0
    for path in sorted(folder.glob("*.py")):
        imported = _kernel_imports(path)
        if path.name == "__init__.py" or not imported:
            continue
        module = importlib.import_module(f"edgereg._kernels.{path.stem}")
        declared = {m.__name__.rsplit(".", 1)[1] for m in module._KERNEL_DEPENDENCIES}
        assert imported <= declared, f"{path.name}: recompile_with misses {imported - declared}"
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                assert value._cache._cache_file.dependencies, value
                checked += 1
    assert checked > 50


#: Self-tuning banks of every family, float32, each through learn_many first.
#: Their kernels compile without NRT, and numba compiles the kernels they call
#: with the caller's flags when they are not compiled yet; a float32 bank's
#: first learn_many in a fresh process failed so (a view made by a function
#: that numba compiled without NRT) while only a warm cache or an earlier
#: DFOP call hid it.
BANKS_FIRST = """
import numpy as np
import edgereg
rng = np.random.default_rng(0)
X = rng.normal(size=(80, 3)).astype(np.float32)
y = X @ np.float32([1.0, -2.0, 0.5])
out = []
for kw in ({"dtype": "float32"}, {"dtype": "float32", "arithmetic": "float32"},
           {"dtype": "float32", "coverage": 0.9}, {"dtype": "float32", "task": "classification"},
           {"dtype": "float64"}):
    m = edgereg.DFOP(3, forgetting="auto", **kw)
    yy = np.sign(y) if "task" in kw else y
    out += m.learn_many(X, yy).tolist() + [float(m.learn_one(X[0], yy[0]))]
f = edgereg.Fleet(2, 3, forgetting="auto", dtype="float32")
out += f.learn_many(np.stack([X, -X]), np.stack([y, y])).ravel().tolist()
s = edgereg.SparseDFOP(3, 8, forgetting="auto", dtype="float32")
out += s.learn_many(X, y).tolist()
print(repr(out))
"""


def test_banks_compile_in_a_fresh_process_whatever_is_called_first(tmp_path):
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"), EDGEREG_CACHE_DIR=str(tmp_path / "e"))
    result = subprocess.run([sys.executable, "-X", "faulthandler", "-c", BANKS_FIRST],
                            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    here: dict = {}
    exec(BANKS_FIRST.replace("print(repr(out))", ""), here)  # this process: its own order
    assert eval(result.stdout.strip()) == here["out"]
