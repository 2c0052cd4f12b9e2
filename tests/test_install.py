"""The install sequence of the README's Quickstart leaves no ghost package.

In a new virtual environment: ``pip install <clone>`` (a regular install),
``edgereg demo`` from outside the clone (numba compiles and caches its kernels),
``pip uninstall -y edgereg``: no edgereg file may remain in site-packages.
numba's default cache used to leave ``edgereg/__pycache__/*.nbi`` there; the
folder then shadowed a later editable install for every process started
outside the clone (``cannot import name 'DFOP' from 'edgereg' (unknown
location)``). Then ``pip install -e <clone>`` and the import from outside.

Slow (two pip installs, about a minute): marked ``install``; skipped when pip
cannot reach a package index.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NETWORK_ERRORS = ("Could not find a version", "No matching distribution",
                  "Failed to establish a new connection", "Temporary failure in name resolution")

# The slow tier (pytest -m slow): two pip installs, about a minute.
pytestmark = [pytest.mark.install, pytest.mark.slow]


def _copy_of_the_clone(dest: Path) -> Path:
    """The repository's source files (no build or cache leftovers of this checkout)."""
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "asv_bench",
                                    ".pytest_cache", "*.nbi", "*.nbc")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def _pip(python: Path, *args: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        if any(message in done.stderr for message in NETWORK_ERRORS):
            pytest.skip(f"pip cannot install here: {done.stderr.strip().splitlines()[-1]}")
        raise AssertionError(f"pip install {' '.join(args)} failed:\n{done.stderr}")


def test_regular_install_uninstall_then_editable_leaves_no_ghost(tmp_path):
    clone = _copy_of_the_clone(tmp_path / "edgereg")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # As a user: no numba cache variable, a home of its own (the user cache
    # folder is under it).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "EDGEREG_", "PYTHON", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path / "home")
    env.pop("XDG_CACHE_HOME", None)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    assert purelib != Path(sysconfig.get_paths()["purelib"])

    _pip(python, ".", cwd=clone, env=env)
    # The README's main job (shortened): numba compiles and caches its kernels.
    run = subprocess.run([str(venv / "bin" / "edgereg"), "demo", "--n", "2000", "--no-plot"],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr

    done = subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "edgereg"], env=env,
                          capture_output=True, text=True, check=True)
    left = sorted(str(p.relative_to(purelib)) for p in purelib.glob("edgereg*"))
    assert left == [], f"left in site-packages after uninstall: {left}\n{done.stdout}"
    assert (tmp_path / "home" / ".cache" / "edgereg").is_dir()  # the kernels went here

    _pip(python, "-e", ".", cwd=clone, env=env)
    imported = subprocess.run(
        [str(python), "-c", "import edgereg; from edgereg import DFOP; print(edgereg.__file__)"],
        cwd=elsewhere, env=env, capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    assert Path(imported.stdout.strip()).resolve().is_relative_to(clone.resolve())
