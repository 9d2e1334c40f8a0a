#!/usr/bin/env bash
# Differential fuzzing of badge's deflate against zlib's inflate
# (Fuzz/DeflateFuzzer.c), with libFuzzer and AddressSanitizer.
#   scripts/fuzz-deflate.sh [seconds]
# New inputs go to a scratch directory, never into the repository; a
# difference or a crash exits non-zero and prints the input that caused it.
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.build/fuzz
mkdir -p "$out/crashes"
cc=${CC:-clang}

sources=(Fuzz/DeflateFuzzer.c Sources/CDeflate/badge_deflate.c Sources/CDeflate/badge_adler32.c
         Sources/CDeflate/include/badge_deflate.h)
binary=$out/deflate-fuzzer
stale=0
[ -x "$binary" ] || stale=1
for s in "${sources[@]}"; do [ "$root/$s" -nt "$binary" ] && stale=1; done
if [ $stale = 1 ]; then
  echo "fuzz: compiling $binary" >&2
  (cd "$root" && "$cc" -fsanitize=fuzzer,address -O1 -g -I Sources/CDeflate/include \
     Fuzz/DeflateFuzzer.c Sources/CDeflate/badge_deflate.c Sources/CDeflate/badge_adler32.c -lz -o "$binary")
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-fuzz-deflate.XXXXXX")
log=$scratch/fuzz.log
mkdir -p "$scratch/corpus"
echo "fuzz: deflate for ${seconds}s; new inputs in $scratch; log $log" >&2
set +e
"$binary" -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=300000 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$out/crashes/" "$scratch/corpus" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ $status -ne 0 ]; then
  crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  echo "fuzz: FAILED (exit $status); input: ${crash:-see $log}" >&2
  echo "fuzz: reproduce with: $binary ${crash:-<input>}" >&2
  exit 1
fi
grep -E '^#[0-9]+.*cov:' "$log" | tail -1 >&2 || true
echo "fuzz: deflate: no difference in ${seconds}s" >&2
