#!/usr/bin/env bash
# Fuzzes badge's readers of outside input with libFuzzer and AddressSanitizer:
#   intake  the image header reader (ImageIntake, the PNG chunk and text
#           readers, BadgeMetadata), seeds in Fuzz/corpus
#   json    the JSON parser (configs, manifests, plugin results), seeds in
#           Fuzz/corpus-json, with a per-input time limit that a parser
#           slower than linear in a long line exceeds
#   deflate badge's DEFLATE encoder against zlib's inflate (Fuzz/DeflateFuzzer.c):
#           random and badge-like rows, compared byte for byte, seeds in
#           Fuzz/corpus-deflate (badge-sized rows, the 256 KB block split)
#   scripts/fuzz.sh [seconds] [extra corpus dir...]   (seconds per target;
#   FUZZ_TARGETS="intake json deflate" chooses which run; extra dirs go to intake)
#   scripts/fuzz.sh --build-only   (compiles the chosen targets, runs none)
# New inputs go to a scratch directory, never into the repository; a crash, a
# hang or a difference exits non-zero and prints the path of the input that caused it.
set -euo pipefail

build_only=false
if [ "${1:-}" = --build-only ]; then
  build_only=true
  shift
fi
seconds=${1:-60}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.build/fuzz
mkdir -p "$out/crashes"
swiftc=${SWIFTC:-swiftc}
cc=${CC:-clang}
targets=${FUZZ_TARGETS:-intake json deflate}

# Only what each reader needs, so the harness owns `main` and nothing else
# (CLI, gd, libcurl) is linked or instrumented.
intake_sources=(Fuzz/IntakeFuzzer.swift Sources/BadgeKit/ImageIntake.swift Sources/BadgeKit/PNG.swift
                Sources/BadgeKit/RegularFile.swift Sources/BadgeKit/BadgeError.swift Sources/BadgeKit/JSONDocument.swift
                Sources/BadgeKit/BadgeMetadata.swift Fuzz/SHA256StandIn.swift)
json_sources=(Fuzz/JSONFuzzer.swift Sources/BadgeKit/JSONDocument.swift Sources/BadgeKit/BadgeError.swift)

deflate_sources=(Fuzz/DeflateFuzzer.c Sources/CDeflate/badge_deflate.c)

# stale NAME SOURCES...: whether .build/fuzz/NAME-fuzzer is missing or older than a source.
stale() {
  local binary=$out/$1-fuzzer
  shift
  [ -x "$binary" ] || return 0
  for s in "$@" "scripts/fuzz.sh"; do [ "$root/$s" -nt "$binary" ] && return 0; done
  return 1
}

# build NAME MODULE SOURCES...: compiles a Swift harness when a source is newer.
build() {
  local name=$1 module=$2
  shift 2
  if stale "$name" "$@"; then
    echo "fuzz: compiling $out/$name-fuzzer" >&2
    # -I Sources/CLibdeflate: PNG's CRC-32 is libdeflate's, through the
    # CLibdeflate system module;
    # -package-name: BadgeKit has package-level symbols. lld links the
    # sanitizers' runtime without gold's hundreds of "cannot export" warnings.
    (cd "$root" && "$swiftc" -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -module-name "$module" -package-name badge \
       -I Sources/CLibdeflate "$@" -o "$out/$name-fuzzer")
  fi
}

# build_c NAME SOURCES...: compiles a C harness, linked with zlib, when a source is newer.
build_c() {
  local name=$1
  shift
  if stale "$name" "$@" Sources/CDeflate/include/badge_deflate.h; then
    echo "fuzz: compiling $out/$name-fuzzer" >&2
    (cd "$root" && "$cc" -fsanitize=fuzzer,address -fuse-ld=lld -O1 -g -I Sources/CDeflate/include "$@" -lz -o "$out/$name-fuzzer")
  fi
}

# run NAME SEEDS LIBFUZZER-OPTIONS... -- EXTRA-CORPORA...   (SEEDS "-": none)
run() {
  $build_only && return 0
  local name=$1 seeds=$2
  shift 2
  local options=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  local binary=$out/$name-fuzzer
  local scratch log status crash
  [ "$seeds" = - ] && seeds=
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-fuzz-$name.XXXXXX")
  log=$scratch/fuzz.log
  echo "fuzz $name: ${seconds}s; new inputs in $scratch; log $log" >&2
  # The first directory receives new inputs; the seeds are only read.
  mkdir -p "$scratch/corpus"
  # Swift's own crash backtracer would catch the trap first (and then trip ASan
  # while reading memory); libFuzzer's handler is the one that saves the input.
  export SWIFT_BACKTRACE=enable=no
  set +e
  "$binary" -max_total_time="$seconds" -rss_limit_mb=512 -print_final_stats=1 "${options[@]}" \
    -artifact_prefix="$out/crashes/$name-" "$scratch/corpus" ${seeds:+"$seeds"} "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  if [ $status -ne 0 ]; then
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "fuzz $name: FAILED (exit $status); input: ${crash:-see $log}" >&2
    echo "fuzz $name: reproduce with: $binary ${crash:-<input>}" >&2
    exit 1
  fi
  echo "fuzz $name: no crash or hang in ${seconds}s" >&2
}

for target in $targets; do
  case $target in
    intake)
      build intake IntakeFuzzer "${intake_sources[@]}"
      # A header reader that takes a second on one input has a bug, hence -timeout=5.
      run intake "$root/Fuzz/corpus" -max_len=65536 -timeout=5 -- "$@" ;;
    json)
      build json JSONFuzzer "${json_sources[@]}"
      # Inputs up to 1 MiB, each parsed in about a second of CPU under ASan when
      # the parser is linear (the 360 KB seed: 0.9 s); a quadratic one needs
      # minutes for a 1 MiB line (36 s for 320 KB without ASan). The limit is of
      # wall time, so -timeout=10 leaves room for a machine busy with other work.
      run json "$root/Fuzz/corpus-json" -max_len=1048576 -timeout=10 -rss_limit_mb=1024 -- ;;
    deflate)
      build_c deflate "${deflate_sources[@]}"
      # The harness builds its rows from the input; up to 512 KB of rows an input.
      run deflate "$root/Fuzz/corpus-deflate" -max_len=300000 -timeout=10 -rss_limit_mb=1024 -- ;;
    *) echo "fuzz: unknown target $target (intake, json, deflate)" >&2; exit 64 ;;
  esac
done
