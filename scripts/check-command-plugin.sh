#!/usr/bin/env bash
# Checks the SwiftPM command plugin the way another package uses it: a fresh
# package that depends on this one by path runs `swift package badge generate`
# and must end up with a PNG. Not part of `make test`: it builds badge from
# scratch in the consumer (minutes on 2 cores).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Consumer/Sources/Consumer" "$work/Consumer/docs"
cat > "$work/Consumer/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(path: "$repo")],
    targets: [.target(name: "Consumer")]
)
SWIFT
echo 'public let answer = 42' > "$work/Consumer/Sources/Consumer/Consumer.swift"
cd "$work/Consumer"
BADGE_STORE="$work/store" swift package --allow-writing-to-package-directory \
  badge generate --output docs/badge.png --size 128 --seed 1 "Ship Consumer 1.0"
test -s docs/badge.png
head -c 8 docs/badge.png | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'
echo "command plugin: ok ($(wc -c < docs/badge.png) bytes in docs/badge.png)"
