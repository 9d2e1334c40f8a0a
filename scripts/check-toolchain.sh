#!/usr/bin/env bash
# Whether the Swift toolchain on the PATH still miscompiles the reproducer in
# scripts/toolchain/ (docs/DEVELOPING.md, "A miscompile in the release build"):
# builds it at -Onone and at -O and -Osize, and runs each. It says what it saw
# and exits 0 either way, since badge's code no longer has the shape that the
# optimiser breaks; once it says the toolchain builds it right, the section in
# DEVELOPING.md can say which toolchain fixed it. CI prints it every run.
#   scripts/check-toolchain.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
source=scripts/toolchain/release-availability.swift
scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-toolchain.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
version=$("$SWIFT" --version 2>&1 | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -1)
results=()
for level in -Onone -O -Osize; do
  if ! "${SWIFT}c" "$level" "$source" -o "$scratch/r$level" 2>"$scratch/log"; then
    cat "$scratch/log" >&2
    echo "check-toolchain: the reproducer does not build at $level with Swift ${version:-?}" >&2
    exit 1
  fi
  results+=("$level: $("$scratch/r$level")")
done
summary=$(printf '%s, ' "${results[@]}"); summary=${summary%, }
if [ "${results[*]}" = "-Onone: true -O: true -Osize: true" ]; then
  echo "check-toolchain: Swift ${version:-?} builds the reproducer right ($summary): the miscompile in docs/DEVELOPING.md is fixed in it"
else
  echo "check-toolchain: Swift ${version:-?} still miscompiles the reproducer ($summary; right is true): docs/DEVELOPING.md, \"A miscompile in the release build\""
fi
