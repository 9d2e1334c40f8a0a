#!/usr/bin/env bash
# The end-to-end suite against a release binary: BadgeCLITests (every test
# that runs the `badge` executable, the studio's walk in Chromium included),
# as `make test` runs it against the debug build. The tests that hold a run
# through the debug-only seams (BADGE_TEST_HOLD) are skipped there, each with
# its reason; every other one runs. Uses the test build that `make test` left
# in .build (swift build --build-tests).
#   scripts/test-release.sh [BINARY]   (default .build/stage/badge: the stripped
#                                       binary that make deb packages)
# With BADGE_TEST_RESULTS=DIR, the results are also written there as JUnit XML
# (DIR/release.xml). Ends with "stage e2e-release: N s" and a line counting the
# tests that ran and were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
binary=${1:-.build/stage/badge}
[ -x "$binary" ] || { echo "test-release: no binary at $binary; run 'make stage' (or make deb) first" >&2; exit 1; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
if [ "$(command -v strings >/dev/null && strings -n 14 "$binary" | grep -c '^badge: held at ' || true)" != 0 ]; then
  echo "test-release: $binary has the debug-only seams: it is a debug build, not the release binary" >&2
  exit 1
fi

started=$(date +%s)
output=$(mktemp)
trap 'rm -f "$output"' EXIT
xunit=()
if [ -n "${BADGE_TEST_RESULTS:-}" ]; then
  mkdir -p "$BADGE_TEST_RESULTS"
  xunit=(--xunit-output "$BADGE_TEST_RESULTS/release.xml")
fi
echo "test-release: BadgeCLITests against $binary"
status=0
BADGE_BIN=$binary "$SWIFT" test --skip-build --filter BadgeCLITests "${xunit[@]}" 2>&1 | tee "$output" || status=$?
if [ "$status" -ne 0 ]; then
  echo "test-release: the end-to-end suite failed against the release binary (status $status); what the failing tests recorded:"
  python3 scripts/check-test-results.py --failures --log "$output"
  exit "$status"
fi
echo "stage e2e-release: $(( $(date +%s) - started )) s"
python3 scripts/check-test-results.py --count-ran --log "$output" --what "the end-to-end suite against the release binary"
