#!/usr/bin/env bash
# Installs the Debian 12 packages qtune needs to build and test. Fast when they are all
# present already (no apt-get call at all). Run as root or with sudo available.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build make pkg-config clang-format
  libdnnl-dev ocl-icd-opencl-dev opencl-headers
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  libssl-dev libarchive-dev
  libjpeg62-turbo-dev libpng-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata
  redis-server libhiredis-dev
  # python3-wheel and python3-venv: pip install --no-build-isolation in a venv made with
  # --system-site-packages, see docs/python.md; setuptools 66 takes bdist_wheel from wheel.
  pybind11-dev python3-dev python3-numpy python3-pytest python3-setuptools python3-wheel python3-pip python3-venv
  chromium
)
# Node.js runs ONNX Runtime (the peer qtune is checked and measured against).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "qtune: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime's Node.js package, pinned by tools/ort/package-lock.json.
# --ignore-scripts skips its install script, which tries to download GPU parts.
ORT_DIR="$(cd "$(dirname "$0")/.." && pwd)/tools/ort"
if [ ! -f "$ORT_DIR/node_modules/onnxruntime-node/package.json" ]; then
  echo "qtune: installing onnxruntime-node into tools/ort"
  (cd "$ORT_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

# Models too big for the repository (the PP-OCRv4 recognizer), SHA-256 pinned.
bash "$(dirname "$0")/fetch_models.sh"
