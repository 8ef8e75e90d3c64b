#!/usr/bin/env bash
# The installed CMake package and pkg-config file work for a project outside qtune
# (docs/cmake.md): `cmake --install` the build into a fresh prefix and check that exactly
# the public headers (include/qtune/*.h) and the four core headers they use are installed;
# check that examples/cpp includes only public headers (check_public_includes.sh); configure
# and build examples/cpp against the prefix with find_package(qtune), run it on a model and
# check the output names and shapes it prints, then on a checkpoint the installed
# `qtune tune` makes (qtune/checkpoint.h); then move the prefix (qtune.pc must be
# relocatable), compile the same main.cc with plain `c++ $(pkg-config --cflags --libs qtune)`
# and check its output the same way.
# Usage: install_consumer_test.sh BUILD_DIR SOURCE_DIR MODEL EXPECTED_LINE
set -euo pipefail
build_dir=$1 source_dir=$2 model=$3 expected=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
for f in bin/qtune libexec/qtune/qtune-measure include/qtune/qtune.h include/qtune/session.h lib/cmake/qtune/qtuneConfig.cmake \
         lib/cmake/qtune/qtuneConfigVersion.cmake lib/cmake/qtune/qtuneTargets.cmake \
         lib/pkgconfig/qtune.pc; do
  if [[ ! -e "$work/prefix/$f" ]]; then
    echo "FAIL: cmake --install did not install $f" >&2
    exit 1
  fi
done
# The headers: the public ones and core/{status,tensor,dtype,check}.h, nothing else.
expected_headers=$( (cd "$source_dir/include" && find qtune -name '*.h'
                     for h in status tensor dtype check; do echo "qtune/internal/core/$h.h"; done) |
                   sort)
installed_headers=$(cd "$work/prefix/include" && find . -type f | sed 's|^\./||' | sort)
if [[ "$installed_headers" != "$expected_headers" ]]; then
  echo "FAIL: installed headers differ from the public surface:" >&2
  diff <(echo "$expected_headers") <(echo "$installed_headers") >&2 || true
  exit 1
fi
bash "$source_dir/tests/packaging/check_public_includes.sh" "$source_dir/examples/cpp" \
    "$source_dir/include/qtune" ||
  { echo "FAIL: examples/cpp includes an internal header" >&2; exit 1; }
# No header path may point back into the source tree.
if grep -q "$source_dir/src" "$work/prefix/lib/cmake/qtune/qtuneTargets.cmake"; then
  echo "FAIL: qtuneTargets.cmake refers to the source tree $source_dir/src" >&2
  exit 1
fi

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$source_dir/examples/cpp" -B "$work/build" "${generator[@]}" \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; echo "FAIL: configuring the consumer project" >&2; exit 1; }
cmake --build "$work/build" > "$work/build.log" 2>&1 ||
  { tail -50 "$work/build.log" >&2; echo "FAIL: building the consumer project" >&2; exit 1; }

output=$("$work/build/consumer" "$model")
echo "$output"
if [[ "$output" != *"$expected"* ]]; then
  echo "FAIL: expected a line '$expected'" >&2
  exit 1
fi
# A checkpoint from the installed qtune, deployed through qtune::LoadTuned.
calib=$(dirname "$model")/calib_512.npy
"$work/prefix/bin/qtune" tune "$model" --calib "$calib" -o "$work/m.qtc" --candidates fp32,int8 \
    --calib-samples 32 --iters 2 --rounds 1 > "$work/tune.log" 2>&1 ||
  { tail -20 "$work/tune.log" >&2; echo "FAIL: the installed qtune tune" >&2; exit 1; }
output=$("$work/build/consumer" "$model" "$work/m.qtc")
echo "$output"
if [[ "$output" != *"checkpoint "*" weights fingerprinted"* || "$output" != *"$expected"* ]]; then
  echo "FAIL: consumer MODEL CHECKPOINT: expected the checkpoint line and '$expected'" >&2
  exit 1
fi
echo "PASS: installed CMake package builds and runs a consumer"

# pkg-config, from a moved prefix: nothing may point at the install or source location.
mv "$work/prefix" "$work/moved"
command -v pkg-config > /dev/null ||
  { echo "FAIL: pkg-config not found (scripts/install_deps.sh installs it)" >&2; exit 1; }
export PKG_CONFIG_PATH="$work/moved/lib/pkgconfig"
flags=$(pkg-config --cflags --libs qtune) ||
  { echo "FAIL: pkg-config --cflags --libs qtune" >&2; exit 1; }
echo "pkg-config --cflags --libs qtune: $flags"
if [[ "$flags" != *"-I$work/moved/lib/pkgconfig/../../include "* ]] ||
   [[ "$flags" != *"-I$work/moved/lib/pkgconfig/../../include/qtune/internal"* ]] ||
   [[ "$flags" == *"$work/prefix"* || "$flags" == *"$source_dir/src"* ]]; then
  echo "FAIL: qtune.pc does not point at the moved prefix $work/moved" >&2
  exit 1
fi
# $flags is a list of words on purpose.
# shellcheck disable=SC2086
"${CXX:-c++}" -std=c++20 -O1 "$source_dir/examples/cpp/main.cc" \
    -o "$work/consumer_pc" $flags > "$work/pc_build.log" 2>&1 ||
  { tail -50 "$work/pc_build.log" >&2; echo "FAIL: building main.cc with pkg-config flags" >&2; exit 1; }
output=$("$work/consumer_pc" "$model")
echo "$output"
if [[ "$output" != *"$expected"* ]]; then
  echo "FAIL: pkg-config consumer: expected a line '$expected'" >&2
  exit 1
fi
echo "PASS: installed pkg-config file builds and runs a consumer"
