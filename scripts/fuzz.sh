#!/usr/bin/env bash
# Fuzzes badge's image header reader (ImageIntake, the PNG chunk and text
# readers, BadgeMetadata) with libFuzzer and AddressSanitizer.
#   scripts/fuzz.sh [seconds] [extra corpus dir...]
# New inputs go to a scratch directory, never into the repository; a crash or
# a hang exits non-zero and prints the path of the input that caused it.
set -euo pipefail

seconds=${1:-60}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.build/fuzz
mkdir -p "$out/crashes"
swiftc=${SWIFTC:-swiftc}

# Only what the reader needs, so the harness owns `main` and nothing else
# (CLI, gd, libcurl) is linked or instrumented.
sources=(Fuzz/IntakeFuzzer.swift Sources/BadgeKit/ImageIntake.swift Sources/BadgeKit/PNG.swift
         Sources/BadgeKit/BadgeError.swift Sources/BadgeKit/JSONDocument.swift Sources/BadgeKit/BadgeMetadata.swift)
binary=$out/intake-fuzzer
stale=0
[ -x "$binary" ] || stale=1
for s in "${sources[@]}"; do [ "$root/$s" -nt "$binary" ] && stale=1; done
if [ $stale = 1 ]; then
  echo "fuzz: compiling $binary" >&2
  # CZlib: PNG.swift's CRC-32 is zlib's; -package-name: BadgeKit has package-level symbols.
  (cd "$root" && "$swiftc" -sanitize=fuzzer,address -parse-as-library -O -module-name IntakeFuzzer \
     -package-name badge -I Sources/CZlib "${sources[@]}" -o "$binary")
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-fuzz.XXXXXX")
log=$scratch/fuzz.log
echo "fuzz: ${seconds}s; new inputs in $scratch; log $log" >&2
# The first directory receives new inputs; the seeds are only read. A header
# reader that takes a second on one input has a bug, hence -timeout=5.
mkdir -p "$scratch/corpus"
# Swift's own crash backtracer would catch the trap first (and then trip ASan
# while reading memory); libFuzzer's handler is the one that saves the input.
export SWIFT_BACKTRACE=enable=no
set +e
"$binary" -max_total_time="$seconds" -rss_limit_mb=512 -max_len=65536 -timeout=5 -print_final_stats=1 \
  -artifact_prefix="$out/crashes/" "$scratch/corpus" "$root/Fuzz/corpus" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ $status -ne 0 ]; then
  crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  echo "fuzz: FAILED (exit $status); crashing input: ${crash:-see $log}" >&2
  echo "fuzz: reproduce with: $binary ${crash:-<input>}" >&2
  exit 1
fi
grep -E '^#[0-9]+.*cov:' "$log" | tail -1 >&2 || true
echo "fuzz: no crash in ${seconds}s" >&2
