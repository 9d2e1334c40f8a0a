#!/usr/bin/env bash
# `make sanitize`: the suites that exercise badge's own threads, locks and raw
# memory, built and run under ThreadSanitizer, then under AddressSanitizer
# (docs/DEVELOPING.md, "Sanitizers", says which and why). Each sanitizer has a
# scratch path of its own (.build-tsan, .build-asan), so neither rebuilds
# .build. Prints each stage's time as it ends ("stage tsan-build: 397 s").
#   scripts/sanitize.sh [thread|address]...   (default: both, in that order)
# Every report a sanitizer writes, from the test process or a sanitized program it
# starts, goes to a file under the scratch path (log_path); any report fails
# the run and is printed at its end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
SWIFT=${SWIFT:-swift}
CC=${CC:-clang}

# ThreadSanitizer: BadgeKitTests whole (BlockingExecutor with BackgroundValue
# and SerialLane, WorkerThreads, the pipeline and the batch runner on them), BadgeServerTests (the render gate and cache, the studio),
# and the Canvas suites that encode in bands on WorkerThreads into huge-page
# scratch. Not the suites that draw large badges: in a debug build under TSan
# every pixel's blend looks up generic metadata, and a 1024 px drawing takes
# minutes.
tsan_filter='^(BadgeKitTests|BadgeServerTests)\.|^CanvasTests\.(BandCheckTests|EffectsTests)/'
# AddressSanitizer: those targets whole, CanvasTests' decoders (libgd and
# libjpeg through the functions resolved by dlsym) and PixelMemory, FastScratch
# and the deflate buffers among them, and the card's frames.
asan_filter='^(BadgeKitTests|BadgeServerTests|CanvasTests|BadgeCardTests)\.'

stage() {
  local name=$1 started
  shift
  started=$(date +%s)
  "$@"
  echo "stage $name: $(( $(date +%s) - started )) s"
}

build() {
  "$SWIFT" build --build-tests --sanitize="$1" --scratch-path "$2"
}

# The contended path of Synchronization.Mutex, made visible to TSan
# (scripts/sanitizers/tsan-mutex.c says how and why).
tsan_mutex() {
  "$CC" -shared -fPIC -O1 -Wall -Werror -o "$1" scripts/sanitizers/tsan-mutex.c -ldl
}

# suite SANITIZER SCRATCH FILTER: runs the chosen suites; fails on a failed test
# or on any report in SCRATCH/sanitizer-reports.
suite() {
  local sanitizer=$1 scratch=$2 filter=$3 reports status=0
  reports=$scratch/sanitizer-reports
  rm -rf "$reports"
  mkdir -p "$reports"
  # Swift's crash backtracer would take a sanitizer's trap before the report is written.
  SWIFT_BACKTRACE=enable=no "$SWIFT" test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" \
    --filter "$filter" || status=$?
  if compgen -G "$reports/report.*" >/dev/null; then
    echo "sanitize: $sanitizer reported (logs in $reports):"
    cat "$reports"/report.*
    [ "$status" -ne 0 ] || status=1
  fi
  [ "$status" -eq 0 ] || echo "sanitize: the $sanitizer suite failed (status $status)"
  return "$status"
}

thread() {
  stage tsan-build build thread .build-tsan
  stage tsan-mutex tsan_mutex .build-tsan/tsan-mutex.so
  # The library comes first in every process of the run, and in the programs
  # the tests start (a no-op where TSan is not linked in).
  (
    export LD_PRELOAD=$root/.build-tsan/tsan-mutex.so
    export TSAN_OPTIONS="log_path=$root/.build-tsan/sanitizer-reports/report ${TSAN_OPTIONS:-}"
    stage tsan-suite suite thread .build-tsan "$tsan_filter"
  )
}

address() {
  stage asan-build build address .build-asan
  # Leaks are not checked: LeakSanitizer cannot follow a reference that Swift
  # keeps in an enum payload's spare bits (Data's storage, for one), so it
  # reports live values, static lets among them, as leaked.
  (
    export ASAN_OPTIONS="log_path=$root/.build-asan/sanitizer-reports/report detect_leaks=0 ${ASAN_OPTIONS:-}"
    stage asan-suite suite address .build-asan "$asan_filter"
  )
}

started=$(date +%s)
sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(thread address)
for sanitizer in "${sanitizers[@]}"; do
  case $sanitizer in
    thread) thread ;;
    address) address ;;
    *) echo "sanitize: unknown sanitizer $sanitizer (thread, address)" >&2; exit 64 ;;
  esac
done
echo "stage sanitize: $(( $(date +%s) - started )) s"
