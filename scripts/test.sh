#!/usr/bin/env bash
# `make test`: installs what the tests use (beside the build), builds, runs every test target,
# and builds and checks the consumer package against a tagged clone
# (check-consumer.sh). The consumer's build runs beside the suite with the
# lowest CPU weight (scripts/beside.sh), on the CPU the suite leaves idle (its
# tests wait on servers, terminals and programs of their own, and its last test
# uses one core); where that cannot be done, after it. The check follows the
# suite. Prints each stage's time as it ends ("stage build: 212 s").
#   scripts/test.sh
# With BADGE_TEST_RESULTS=DIR, the suite's results are also written there as
# JUnit XML (swift test --xunit-output), for .ci/run to count per test target.
# With BADGE_CONSUMER_BUILD=shared, the consumer package is built after the
# suite in this repository's .build, reusing the dependencies the suite's build
# compiled (check-consumer.sh --shared: for a fresh clone tested once, as CI
# does); by default (own) it keeps a build of its own, which a second run only
# updates. With BADGE_CONSUMER_BUILD=later it is not checked here: .ci/run
# checks it (--shared) after the end-to-end suite against the release binary,
# beside the package check, which leaves the CPU idle while it waits on apt.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
consumer_build_mode=${BADGE_CONSUMER_BUILD:-own}
case $consumer_build_mode in
  own|shared|later) ;;
  *) echo "test: BADGE_CONSUMER_BUILD is \"$consumer_build_mode\"; use own (the default), shared or later" >&2; exit 64 ;;
esac

stage() {
  local name=$1 started
  shift
  started=$(date +%s)
  "$@"
  echo "stage $name: $(( $(date +%s) - started )) s"
}

deps() {
  scripts/install-deps.sh --with-tests
  python3 -c "import openapi_schema_validator" 2>/dev/null || python3 -m pip install -q openapi-schema-validator \
    || python3 -m pip install -q --break-system-packages openapi-schema-validator
  # The store's fault tests mount a FUSE file system written with fusepy (Tests/Data/faultfs).
  python3 -c "import fuse" 2>/dev/null || python3 -m pip install -q fusepy \
    || python3 -m pip install -q --break-system-packages fusepy
  # The studio's browser test drives Debian's Chromium with Playwright (nothing downloaded).
  python3 -c "import playwright" 2>/dev/null || python3 -m pip install -q playwright \
    || python3 -m pip install -q --break-system-packages playwright
  # ... and checks each of its views with axe-core, which this package bundles.
  python3 -c "import axe_playwright_python" 2>/dev/null || python3 -m pip install -q axe-playwright-python \
    || python3 -m pip install -q --break-system-packages axe-playwright-python
}

# When a test fails, what every failing test recorded is printed again at the
# end, where it is found without searching the whole log.
suite() {
  local output status=0
  output=$(mktemp)
  if [ -n "${BADGE_TEST_RESULTS:-}" ]; then
    mkdir -p "$BADGE_TEST_RESULTS"
    "$SWIFT" test --skip-build --xunit-output "$BADGE_TEST_RESULTS/results.xml" 2>&1 | tee "$output" || status=$?
  else
    "$SWIFT" test --skip-build 2>&1 | tee "$output" || status=$?
  fi
  if [ "$status" -ne 0 ]; then
    echo "test: the suite failed (status $status); what the failing tests recorded:"
    python3 scripts/check-test-results.py --failures --log "$output"
  fi
  rm -f "$output"
  return "$status"
}

# The consumer's build, in a session of its own so that all of it can be stopped.
consumer_log=$(mktemp)
consumer_build=
deps_job=
deps_log=
stop_consumer_build() {
  [ -n "$consumer_build" ] && kill -- -"$consumer_build" 2>/dev/null
  # An install still running beside a build that failed is waited for: it holds dpkg's lock.
  [ -n "$deps_job" ] && wait "$deps_job" 2>/dev/null
  rm -f "$consumer_log" ${deps_log:+"$deps_log"}
}
trap stop_consumer_build EXIT

consumer() {
  local status=0
  if [ "$consumer_build_mode" = shared ]; then
    scripts/check-consumer.sh --shared
    return
  fi
  if [ -z "$consumer_build" ]; then
    scripts/check-consumer.sh
    return
  fi
  scripts/beside.sh --full "$consumer_build"
  wait "$consumer_build" || status=$?
  consumer_build=
  if [ "$status" -ne 0 ]; then
    cat "$consumer_log"
    echo "test: the consumer package's build failed (status $status)" >&2
    return "$status"
  fi
  grep '^check-consumer:' "$consumer_log" || true
  scripts/check-consumer.sh --built
}

# What the build needs comes first. What only the tests use (Chromium, tesseract,
# Playwright, ...) is installed beside the build, which does not need it: on a new
# machine its downloads and unpacking then take no time of their own.
scripts/install-deps.sh
deps_log=$(mktemp)
stage deps deps >"$deps_log" 2>&1 &
deps_job=$!
# Every suite runs on threads of its own (Tests/Support/ThreadsOfTheirOwn.swift).
scripts/check-suites.py
# The lazily opened libraries' sonames are those of the libraries built against.
scripts/sonames.py --check
stage build "$SWIFT" build --build-tests
deps_status=0
wait "$deps_job" || deps_status=$?
deps_job=
cat "$deps_log"
rm -f "$deps_log"
[ "$deps_status" -eq 0 ] || { echo "test: installing what the tests use failed (status $deps_status)" >&2; exit "$deps_status"; }
if [ "$consumer_build_mode" = own ] && scripts/beside.sh --check; then
  scripts/beside.sh scripts/check-consumer.sh --build-only >"$consumer_log" 2>&1 &
  consumer_build=$!
fi
stage suite suite
if [ "$consumer_build_mode" = later ]; then
  echo "test: the consumer package is checked later (BADGE_CONSUMER_BUILD=later)"
else
  stage consumer consumer
fi
