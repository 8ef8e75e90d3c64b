#!/usr/bin/env bash
# Checks that every file CMake resolved outside the repository (libraries, headers, package
# config files, tools) belongs to a Debian package that scripts/install_deps.sh installs,
# directly or as a dependency (Depends/Pre-Depends, never Recommends: apt runs with
# --no-install-recommends). Catches "it built here because this machine happened to have
# package X" (libdnnl-dev's config needs OpenCL, which it only recommends).
#
# Usage: check_build_deps.sh BUILD_DIR INSTALL_SCRIPT
#   BUILD_DIR       a configured build folder (reads CMakeCache.txt, and build.ninja or
#                   CMakeFiles/Makefile.cmake when present).
#   INSTALL_SCRIPT  the script whose PACKAGES=( ... ) / PACKAGES+=( ... ) lists are checked.
# Offline and fast: reads only dpkg's database. Exit 0: all covered; 1: some file's package
# is not covered (each is named); 2: usage error or no dpkg here.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR INSTALL_SCRIPT" >&2
  exit 2
fi
BUILD_DIR=$1
INSTALL_SCRIPT=$2
CACHE="$BUILD_DIR/CMakeCache.txt"
for f in "$CACHE" "$INSTALL_SCRIPT"; do
  if [ ! -f "$f" ]; then
    echo "check_build_deps: $f not found" >&2
    exit 2
  fi
done
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "check_build_deps: dpkg-query not found; this check needs a Debian system" >&2
  exit 2
fi

# 1. The packages the script installs: words inside PACKAGES=( ... ) and PACKAGES+=( ... ).
listed=$(sed -n '/^[[:space:]]*PACKAGES+\?=(/,/)/p' "$INSTALL_SCRIPT" |
  sed -e 's/#.*//' -e 's/PACKAGES+\?=(//' -e 's/)//' | tr -s ' \t' '\n\n' | sed '/^$/d' |
  sort -u)
if [ -z "$listed" ]; then
  echo "check_build_deps: no PACKAGES=( ... ) list in $INSTALL_SCRIPT" >&2
  exit 2
fi

# 2. Their closure over Depends and Pre-Depends, through installed packages only (a package
#    that owns a resolved file is installed). Alternatives (a | b) and virtual packages
#    (Provides) count every installed choice.
closure=$(dpkg-query -W -f='${db:Status-Status}\t${Package}\t${Provides}\t${Pre-Depends}, ${Depends}\n' |
  awk -F'\t' -v roots="$(echo "$listed" | tr '\n' ' ')" '
    function names(field, out,   n, parts, i, w) {
      gsub(/\([^)]*\)/, "", field); gsub(/\|/, ",", field)
      n = split(field, parts, ",")
      for (i = 1; i <= n; i++) {
        w = parts[i]; gsub(/[ \t]/, "", w); sub(/:.*/, "", w)
        if (w != "") out[w] = 1
      }
    }
    $1 == "installed" {
      pkg = $2; installed[pkg] = 1; deps[pkg] = $4
      delete prov; names($3, prov)
      for (v in prov) providers[v] = providers[v] " " pkg
    }
    END {
      n = split(roots, stack, " "); top = n
      while (top > 0) {
        p = stack[top--]
        if (p in seen) continue
        seen[p] = 1
        if (p in providers) {
          m = split(providers[p], ps, " ")
          for (i = 1; i <= m; i++) if (!(ps[i] in seen)) stack[++top] = ps[i]
        }
        if (!(p in installed)) continue
        delete d; names(deps[p], d)
        for (q in d) if (!(q in seen)) stack[++top] = q
      }
      for (p in seen) print p
    }')

# 3. The paths CMake resolved: PATH/FILEPATH cache entries, the absolute paths in the
#    generated build (linked libraries, the config files CMake read) and the system headers
#    compiled objects included.
paths=$(
  grep -E '^[^#/][^:]*:(PATH|FILEPATH)=' "$CACHE" | sed 's/^[^=]*=//' | tr ';' '\n'
  for gen in "$BUILD_DIR/build.ninja" "$BUILD_DIR/CMakeFiles/Makefile.cmake"; do
    if [ -f "$gen" ]; then grep -o '/usr/[^ ;:"$()]*' "$gen" || true; fi
  done
  # The system headers the objects built so far included (ninja's dependency log).
  if [ -f "$BUILD_DIR/build.ninja" ] && command -v ninja >/dev/null 2>&1; then
    ninja -C "$BUILD_DIR" -t deps 2>/dev/null | sed -n 's|^ *\(/usr/[^ ]*\)$|\1|p' || true
  fi
)
paths=$(echo "$paths" | grep -E '^/(usr|lib|bin|sbin|etc|opt)/' | sort -u)

# A folder shared by many packages (/usr/include) says nothing about which one was meant;
# the libraries and config files found in it do.
generic_dir() {
  case "$1" in
    /usr/include | /usr/lib | /usr/lib/x86_64-linux-gnu | /usr/lib/*-linux-gnu | \
      /usr/share | /usr/share/cmake | /usr/lib/cmake | /usr/lib/*-linux-gnu/cmake | \
      /usr/local | /usr/local/* | /usr/bin | /usr) return 0 ;;
  esac
  return 1
}

# Paths to look up: each as written, resolved through symlinks, and without /usr (merged
# /usr: dpkg may record /lib/...). One dpkg-query call for all: it reads its file lists once.
lookups=$(while IFS= read -r path; do
  [ -n "$path" ] && [ -e "$path" ] || continue
  if [ -d "$path" ] && generic_dir "$path"; then continue; fi
  case "$path" in /usr/local/*) continue ;; esac
  real=$(readlink -f "$path" 2>/dev/null || echo "$path")
  printf '%s\t%s\t%s\n' "$path" "$real" "${path#/usr}"
done <<<"$paths")
# "pkg:arch, pkg2: /path" lines (a folder may list several packages).
owners=$(echo "$lookups" | cut -f1-3 | tr '\t' '\n' | sort -u | xargs -r -d '\n' dpkg-query -S 2>/dev/null || true)

result=$(awk -F'\t' -v closure="$(echo "$closure" | tr '\n' ' ')" \
  -v owners="$owners" -v script="$INSTALL_SCRIPT" '
  BEGIN {
    n = split(closure, c, " "); for (i = 1; i <= n; i++) in_closure[c[i]] = 1
    n = split(owners, lines, "\n")
    for (i = 1; i <= n; i++) {
      k = index(lines[i], ": /"); if (k == 0) continue
      path = substr(lines[i], k + 2); pkgs = substr(lines[i], 1, k - 1)
      gsub(/:[a-z0-9]+/, "", pkgs); gsub(/ /, "", pkgs)
      owner[path] = pkgs
    }
  }
  NF >= 1 {
    pkgs = ""
    for (j = 1; j <= 3 && pkgs == ""; j++) if ($j in owner) pkgs = owner[$j]
    if (pkgs == "") {
      print "check_build_deps: " $1 " belongs to no Debian package (installed by hand?)"
      failures++; next
    }
    checked++
    m = split(pkgs, ps, ","); ok = 0
    for (j = 1; j <= m; j++) if (ps[j] in in_closure) ok = 1
    if (!ok) {
      print "check_build_deps: " $1 " comes from package \x27" ps[1] "\x27, which " script \
        " neither installs nor pulls in as a dependency: add it to PACKAGES"
      failures++
    }
  }
  END { print "checked=" checked + 0; print "failures=" failures + 0 }' <<<"$lookups")
echo "$result" | grep -v -e '^checked=' -e '^failures=' || true
checked=$(echo "$result" | sed -n 's/^checked=//p')
failures=$(echo "$result" | sed -n 's/^failures=//p')

if [ $failures -gt 0 ]; then
  echo "check_build_deps: $failures resolved path(s) not covered by $INSTALL_SCRIPT"
  exit 1
fi
echo "check_build_deps: $checked resolved paths, all from packages $INSTALL_SCRIPT installs"
