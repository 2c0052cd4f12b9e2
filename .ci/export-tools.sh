#!/usr/bin/env bash
# The C export stage's toolchains from Debian packages, by name, only those
# missing (idempotent; nothing to do takes a fraction of a second):
# cross gcc for aarch64 and armhf with their libc, qemu-user-static,
# qemu-system-arm, gcc-arm-none-eabi with newlib, riscv64-unknown-elf-gcc (its
# rv32 multilibs) with picolibc and qemu-system-misc (qemu-system-riscv32).
# The three RISC-V packages took 36 s on a machine without them (apt-get
# update, download, install).
#
#   bash .ci/export-tools.sh       (as root; .ci/export.sh calls it)
#
# .ci/run starts it in the background beside the early stages, so that the
# export stage finds the tools installed. apt-get runs under a lock shared
# with .ci/aarch64.sh's install (/var/lock/edgereg-ci-apt.lock): two apt-get
# at once fail on apt's own lock instead of waiting.
set -euo pipefail
SECONDS=0
PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf
          libc6-dev-armhf-cross qemu-user-static qemu-system-arm gcc-arm-none-eabi
          libnewlib-arm-none-eabi gcc gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
          qemu-system-misc)
missing() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
  done
}
mapfile -t MISSING < <(missing)
if [ ${#MISSING[@]} -eq 0 ]; then
  echo "-- [export tools ${SECONDS}s] all installed"
  exit 0
fi
echo "-- [export tools ${SECONDS}s] installing ${MISSING[*]}"
[ "$(id -u)" = 0 ] || { echo "export tools: installing packages needs root"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
exec 9> /var/lock/edgereg-ci-apt.lock
flock 9
mapfile -t MISSING < <(missing)  # what another install left to do
if [ ${#MISSING[@]} -gt 0 ]; then
  apt-get update -q > /dev/null
  apt-get install -y -q --no-install-recommends "${MISSING[@]}" > /dev/null
fi
echo "-- [export tools ${SECONDS}s] installed"
