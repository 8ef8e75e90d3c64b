#!/usr/bin/env bash
# Installs the Debian 12 packages qtune needs to build and test. Fast when they are all
# present already (no apt-get call at all). Run as root or with sudo available.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build make pkg-config clang-format
  libdnnl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  libssl-dev libarchive-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "qtune: installing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
