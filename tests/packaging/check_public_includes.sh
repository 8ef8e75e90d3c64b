#!/usr/bin/env bash
# Programs built against the installed qtune may include only its public headers
# (include/qtune/*.h, docs/cmake.md "The C++ API") and the standard library: every
# `#include` in the C/C++ sources under SOURCE_DIR must be <qtune/NAME.h> with NAME.h in
# PUBLIC_DIR, or a standard header (<vector>, <cstdio>, ...). Prints each offending line
# (file:line: text) and exits 1; exits 0 when all are public.
# Usage: check_public_includes.sh SOURCE_DIR PUBLIC_DIR
set -euo pipefail
source_dir=$1 public_dir=$2
status=0
found=0
while IFS= read -r -d '' file; do
  found=1
  line_no=0
  while IFS= read -r line; do
    line_no=$((line_no + 1))
    [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*(.*)$ ]] || continue
    target=${BASH_REMATCH[1]}
    target=${target%%//*}
    target=${target%"${target##*[![:space:]]}"}
    if [[ "$target" =~ ^\<qtune/([a-z_]+\.h)\>$ ]]; then
      [[ -f "$public_dir/${BASH_REMATCH[1]}" ]] && continue
    elif [[ "$target" =~ ^\<[a-z_]+\>$ ]]; then
      continue  # a standard C++ header
    fi
    echo "$file:$line_no: $line: not a public qtune header (include <qtune/qtune.h> or one" \
         "of $public_dir/*.h)" >&2
    status=1
  done < "$file"
done < <(find "$source_dir" -type f \( -name '*.cc' -o -name '*.cpp' -o -name '*.h' \) -print0)
if [[ $found == 0 ]]; then
  echo "FAIL: no C++ sources under $source_dir" >&2
  exit 1
fi
exit $status
