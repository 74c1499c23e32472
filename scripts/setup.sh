#!/usr/bin/env bash
# Installs every Debian package the project needs, and the Python packages of
# python/requirements.txt into .venv. Idempotent: when all are present it
# changes nothing and asks no registry.
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
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The Python bridge to frameworks: a virtual environment in the repository
# (git-ignored) with the pinned versions of python/requirements.txt. A stamp
# holds the requirements it was made from, so a second run asks no registry.
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
requirements="$root/python/requirements.txt"
stamp="$venv/ipu-requirements.txt"
if [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  echo "setup: $venv has python/requirements.txt"
else
  echo "setup: installing python/requirements.txt into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet -r "$requirements"
  cp "$requirements" "$stamp"
fi
