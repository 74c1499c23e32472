#!/usr/bin/env bash
# Installs every Debian package the project needs. Idempotent: when all are
# present it changes nothing and asks no registry.
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  liblld-22-dev zlib1g-dev libzstd-dev
  libfuzzer-22-dev libclang-rt-22-dev
  capnproto libcapnp-dev libspdlog-dev libgtest-dev libgmock-dev chromium
  libopenblas-dev cmake ninja-build ccache python3 make
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
