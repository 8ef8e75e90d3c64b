#!/usr/bin/env bash
# Self-test of check_build_deps.sh: a copy of the install script without ocl-icd-opencl-dev
# must fail and name that package, as the fresh-machine `make demo` failure did.
# Usage: check_build_deps_selftest.sh CHECK_SCRIPT BUILD_DIR INSTALL_SCRIPT
set -euo pipefail
CHECK=$1
BUILD_DIR=$2
INSTALL_SCRIPT=$3
if ! grep -q 'OpenCL_LIBRARY:FILEPATH=/' "$BUILD_DIR/CMakeCache.txt"; then
  echo "selftest: this build resolved no OpenCL library; nothing to check against"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/\bocl-icd-opencl-dev\b//' "$INSTALL_SCRIPT" > "$tmp/install_deps.sh"
if grep -q 'ocl-icd-opencl-dev' "$tmp/install_deps.sh"; then
  echo "selftest: could not remove ocl-icd-opencl-dev from the copy" >&2
  exit 1
fi
set +e
out=$(bash "$CHECK" "$BUILD_DIR" "$tmp/install_deps.sh" 2>&1)
rc=$?
set -e
echo "$out"
if [ $rc -ne 1 ]; then
  echo "selftest: expected exit 1 without ocl-icd-opencl-dev, got $rc" >&2
  exit 1
fi
if ! grep -q "package 'ocl-icd-opencl-dev'" <<<"$out"; then
  echo "selftest: the failure does not name ocl-icd-opencl-dev" >&2
  exit 1
fi
echo "selftest: a missing ocl-icd-opencl-dev is caught and named"
