"""The study scripts (docs/design/scripts/, docs/design/*.py) and the timing
harnesses (asv_bench/*.py) import without running their study.

Each is loaded as a module (``runpy.run_path`` under another name than
``__main__``), all of them in one fresh process: a syntax error, a name
the package no longer has, or a study that runs at import fails here. What
they measure is not run (minutes to hours each); the guard ablation's text
substitutions, which stop the script when the kernel's text moved, are
checked too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*(ROOT / "docs" / "design").glob("*.py"),
                  *(ROOT / "docs" / "design" / "scripts").glob("*.py"),
                  *(ROOT / "asv_bench").glob("*.py")])

CHECK = """
import runpy, sys
for path in sys.argv[1:]:
    folder = path.rsplit("/", 1)[0]
    sys.path.insert(0, folder)
    sys.argv[1:] = []
    runpy.run_path(path, run_name="design_script_check")
    sys.path.remove(folder)
    print("imported", path)
"""


def test_there_are_study_scripts_and_harnesses():
    names = {p.name for p in SCRIPTS}
    assert {"kernel_params.py", "dfop_reset_study.py", "dfop_guard_ablation.py"} <= names
    assert len(SCRIPTS) >= 15


def test_every_study_script_imports_without_running_its_study():
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-c", CHECK, *map(str, SCRIPTS)]
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("imported ") == len(SCRIPTS)


def test_the_guard_ablations_substitutions_still_match_the_kernel():
    sys.path.insert(0, str(ROOT / "asv_bench"))
    try:
        import dfop_guard_ablation as ablation
    finally:
        sys.path.remove(str(ROOT / "asv_bench"))
    for name in ablation.VARIANTS:
        ablation.variant_source(name)  # AssertionError naming the text that moved


def test_the_kernel_parameter_count_reads_every_kernel(capsys):
    sys.path.insert(0, str(ROOT / "docs" / "design" / "scripts"))
    try:
        import kernel_params
    finally:
        sys.path.remove(str(ROOT / "docs" / "design" / "scripts"))
    # The folder holding the edgereg that is imported: the source tree's root,
    # or site-packages when the tests run against an installed wheel.
    import edgereg

    package_root = Path(edgereg.__file__).resolve().parents[1]
    found = kernel_params.kernels(package_root)
    names = {name for _, name, _ in found}
    assert {"_mores_learn_many", "_fleet_learn_many", "_dfop_learn_one", "cholesky"} <= names
    kernel_params.main([str(package_root)])
    assert "kernels," in capsys.readouterr().out
