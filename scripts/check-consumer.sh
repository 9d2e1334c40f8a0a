#!/usr/bin/env bash
# Builds Examples/consumer, a package that depends on badge by version, the
# way any other package would: against a tagged clone of this repository's
# HEAD (committed work only), through a file:// git URL. Then its own
# `solid-badge` makes a badge with its `solid` backend, and its tests run
# badge's conformance suite on that backend.
#   scripts/check-consumer.sh [--build-only | --built | --shared]
# --build-only stops after the build; --built checks what an earlier
# --build-only made (make test builds beside its suite, then checks).
# The package is built in .build/consumer/build, where the dependencies' builds
# are kept, so that a second run recompiles only what changed. With --shared it
# is built in this repository's own .build instead, where the suite's build has
# compiled the same dependencies at the same paths: only badge's modules and the
# package's own are compiled (a minute and a half, not ten), but the next
# `swift build` here compiles badge's modules again. For a fresh clone built
# once, as in CI; it must not run while another SwiftPM uses .build.
set -euo pipefail
mode=${1:-all}
case $mode in
  all|--build-only|--built|--shared) ;;
  *) echo "usage: scripts/check-consumer.sh [--build-only | --built | --shared]" >&2; exit 64 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/.build/consumer
scratch=$work/build
[ "$mode" = --shared ] && scratch=$root/.build
# The tag is badge's version (BadgeMetadata.version, as `make version` prints it).
tag=${BADGE_CONSUMER_TAG:-$(sed -n 's/^ *public static let version = "\([^"]*\)"$/\1/p' "$root/Sources/BadgeKit/BadgeMetadata.swift")}
[ -n "$tag" ] || { echo "check-consumer: no version in Sources/BadgeKit/BadgeMetadata.swift" >&2; exit 1; }
mkdir -p "$work"
export BADGE_GIT_URL="file://$work/badge.git"

if [ "$mode" != --built ]; then
  # A fresh tagged clone of HEAD, always at the same path (SwiftPM caches by URL).
  rm -rf "$work/badge.git" "$work/package"
  git clone --quiet --no-hardlinks "$root" "$work/badge.git"
  git -C "$work/badge.git" tag -f "$tag" >/dev/null
  # The consumer is copied so that its Package.resolved stays out of the repository.
  cp -R "$root/Examples/consumer" "$work/package"
  cd "$work/package"
  started=$(date +%s)
  swift build --scratch-path "$scratch" --build-tests
  echo "check-consumer: built in $(( $(date +%s) - started )) s" >&2
elif [ ! -d "$work/package" ]; then
  echo "check-consumer: nothing built in $work; run scripts/check-consumer.sh --build-only first" >&2
  exit 1
fi
[ "$mode" = --build-only ] && exit 0
cd "$work/package"

sandbox=$(mktemp -d "${TMPDIR:-/tmp}/badge-consumer.XXXXXX")
trap 'rm -rf "$sandbox"' EXIT
printf '{"backends": {"blue": {"type": "solid", "color": "#2E86DE"}}}\n' > "$sandbox/config.json"
binary=$(swift build --scratch-path "$scratch" --show-bin-path)/solid-badge
BADGE_STORE=$sandbox/store HOME=$sandbox TMPDIR=$sandbox "$binary" generate --config "$sandbox/config.json" \
  --backend blue --size 256 "Be kind"
shown=$(BADGE_STORE=$sandbox/store HOME=$sandbox "$binary" show --json)
if ! grep -q '"solid"' <<<"$shown"; then
  echo "check-consumer: the current badge was not made by the solid backend" >&2
  exit 1
fi
swift test --scratch-path "$scratch" --skip-build
echo "check-consumer: solid-badge made a badge and passed the conformance suite against badge $tag" >&2
