#!/usr/bin/env bash
# check_public_includes.sh itself: it passes examples/cpp as it is, and fails (naming the
# file and line) on a copy that includes an internal header, quoted or bracketed, or a
# <qtune/...> header that is not public.
# Usage: check_public_includes_selftest.sh CHECK_SCRIPT EXAMPLES_DIR PUBLIC_DIR
set -euo pipefail
check=$1 examples=$2 public_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bash "$check" "$examples" "$public_dir" ||
  { echo "FAIL: $examples includes a non-public header" >&2; exit 1; }
for bad in '#include "runtime/session.h"' '#include <core/tensor.h>' \
           '#include <qtune/internal/core/tensor.h>' '#include <qtune/graph.h>'; do
  rm -rf "$work/src" && cp -r "$examples" "$work/src"
  printf '%s\n' "$bad" >> "$work/src/main.cc"
  if bash "$check" "$work/src" "$public_dir" 2> "$work/err"; then
    echo "FAIL: '$bad' was accepted" >&2
    exit 1
  fi
  grep -q "main.cc:[0-9]*: $bad" "$work/err" ||
    { cat "$work/err" >&2; echo "FAIL: the message does not name main.cc and '$bad'" >&2; exit 1; }
done
echo "PASS: only public headers are accepted"
