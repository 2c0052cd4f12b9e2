#!/usr/bin/env bash
# The C export stage of CI: edgereg's kernels exported with `edgereg export`,
# compiled into C harnesses and run on the host, under qemu-user (aarch64,
# armv7hf, armv6hf), on qemu's Cortex-M boards (M4F, M7, M0+) and on its RISC-V
# virt machine (rv32imac, rv32imafc), each compared bit for bit with the JIT
# (tests/test_export.py).
#
#   bash .ci/export.sh            (as root, from the repository root, in the venv)
#
# 1. Toolchains from Debian packages, only those missing: .ci/export-tools.sh
#    (the three RISC-V packages took 36 s on a machine without them). .ci/run
#    starts it in the background at the end of its first stage, so that here
#    it finds them installed.
# 2. ONE pytest run of tests/test_export*.py with EDGEREG_EXPORT_TESTS=1. Its
#    time is the exports' compiling (numba and LLVM, in export worker
#    processes): 525 of the 551 s of a run with the exports one batch after
#    the other, on this shared 2-core machine; the C compilers and qemu took
#    15 s, the JIT's lines 0.5 s. So the exports run in batches that compile
#    no kernel twice (numba level 3 for the host, 0 for the other targets;
#    DFOP's and the bank's models apart from the others; float64 apart from
#    float32), two worker processes at a time, the heaviest first, and each
#    harness is built and run as soon as its batch is written
#    (tests/export_support.py, run_cases). Every test file's cases go into
#    those batches together (session_rows: DFOP under a drift alarm or a
#    projection compiles DFOP's kernels with DFOP's cases): 344 s for the
#    stage alone on this machine, against 416-446 s with one file's exports
#    after another's (as two xdist workers, or in series).
# 3. examples/c/sizes.py for DFOP (d = 6, float32 only) on the M4F and the M0+:
#    flash and stack checked against the README's table (--readme), and equal
#    to the JIT (its exit status); about 15 s.
# Exit status: non-zero when an install or a test fails. Prints the seconds taken.
set -euo pipefail
SECONDS=0
step() { echo "-- [export ${SECONDS}s] $*"; }

step "toolchains (.ci/export-tools.sh)"
bash "$(dirname "$0")/export-tools.sh"

step "exported code against the JIT, every target"
EDGEREG_EXPORT_TESTS=1 python -m pytest -q -p no:cacheprovider -m '' tests/test_export*.py -rs
step "flash, state and stack of DFOP (d = 6, float32) on the M4F and the M0+ (examples/c/sizes.py)"
python examples/c/sizes.py --targets cortex-m4f,cortex-m0plus --models "DFOP (forgetting 0.01)" \
    --readme README.md
step "done"
