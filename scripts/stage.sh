#!/usr/bin/env bash
# Puts together what `make install` and `make deb` copy, from the release binary:
#   STAGE/badge             the binary, stripped
#   STAGE/badge.1           the man page (swift-argument-parser's generate-manual)
#   STAGE/completions/      badge.bash, _badge (zsh), badge.fish
#   STAGE/config.example.json
# The man page's date is the last commit's (or SOURCE_DATE_EPOCH's), so the same
# sources give the same files.
#   scripts/stage.sh BINARY STAGE
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:?usage: scripts/stage.sh BINARY STAGE}
stage=${2:?usage: scripts/stage.sh BINARY STAGE}
[ -x "$binary" ] || { echo "badge: no binary at $binary; run 'make build' first" >&2; exit 1; }
command -v strip >/dev/null || { echo "badge: 'strip' is missing; install it with: apt-get install binutils" >&2; exit 1; }

rm -rf "$stage"
mkdir -p "$stage/completions"
strip --strip-all -o "$stage/badge" "$binary"
for shell in bash zsh fish; do
  "$stage/badge" --generate-completion-script "$shell" > "$stage/completions/$shell"
done
mv "$stage/completions/bash" "$stage/completions/badge.bash"
mv "$stage/completions/zsh" "$stage/completions/_badge"
mv "$stage/completions/fish" "$stage/completions/badge.fish"
cp config.example.json "$stage/config.example.json"

# generate-manual is an executable of swift-argument-parser (the package badge already
# depends on), built once into a scratch folder of its own; a debug build, since it
# runs once a package (20 s to build here, against 50 s in release).
parser=.build/checkouts/swift-argument-parser
[ -d "$parser" ] || swift package resolve
tools=.build/tools
if [ ! -x "$tools/debug/generate-manual" ]; then
  swift build --package-path "$parser" --scratch-path "$tools" --product generate-manual >&2
fi
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  day=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)
else
  day=$(git log -1 --format=%cd --date=format:%F 2>/dev/null || date -u +%F)
fi
"$tools/debug/generate-manual" "$stage/badge" --date "$day" --output-directory "$stage" >&2
[ -s "$stage/badge.1" ] || { echo "badge: generate-manual wrote no badge.1" >&2; exit 1; }
echo "staged in $stage: $(du -sh "$stage/badge" | cut -f1) binary, man page, completions" >&2
