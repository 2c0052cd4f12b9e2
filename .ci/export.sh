#!/usr/bin/env bash
# The C export stage of CI: edgereg's kernels exported with `edgereg export`,
# compiled into C harnesses and run on the host, under qemu-user (aarch64,
# armv7hf, armv6hf), on qemu's Cortex-M boards (M4F, M7, M0+) and on its RISC-V
# virt machine (rv32imac, rv32imafc), each compared bit for bit with the JIT
# (tests/test_export.py).
#
#   bash .ci/export.sh            (as root, from the repository root, in the venv)
#
# 1. Toolchains from Debian packages, by name, only those missing (idempotent):
#    cross gcc for aarch64 and armhf with their libc, qemu-user-static,
#    qemu-system-arm, gcc-arm-none-eabi with newlib, riscv64-unknown-elf-gcc
#    (its rv32 multilibs) with picolibc and qemu-system-misc (qemu-system-riscv32):
#    the three RISC-V packages took 36 s here (apt-get update, download, install).
# 2. ONE pytest run of tests/test_export.py with EDGEREG_EXPORT_TESTS=1: one
#    compiling process exports every case, then each harness runs.
# Exit status: non-zero when an install or a test fails. Prints the seconds taken.
set -euo pipefail
SECONDS=0
step() { echo "-- [export ${SECONDS}s] $*"; }

PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf
          libc6-dev-armhf-cross qemu-user-static qemu-system-arm gcc-arm-none-eabi
          libnewlib-arm-none-eabi gcc gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
          qemu-system-misc)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "export stage: installing packages needs root"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q > /dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" > /dev/null
fi

step "exported code against the JIT, every target"
EDGEREG_EXPORT_TESTS=1 python -m pytest -q -p no:cacheprovider -m '' tests/test_export.py -rs
step "done"
