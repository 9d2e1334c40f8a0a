#!/usr/bin/env bash
# Installs the .deb into a minimal Debian 12 the way a user's machine would, and uses it
# (make check-package). debootstrap makes the system (--variant=minbase) in a scratch
# folder; apt resolves the package's Depends from Debian, so a missing runtime
# dependency fails here as it would for a user. The system's tarball is cached under
# ${XDG_CACHE_HOME:-~/.cache}/badge/ and reused when it is there.
# The steps that install the package are the Containerfile's runtime stage, in the
# same order (Tests/BadgeCLITests/PackagingTests.swift checks that they agree).
# Then badge is used as a person would, so that every library it opens only when it
# needs one is loaded and used: libcurl (a generate from an image model, a fake one
# this script runs outside the chroot on 127.0.0.1), libraqm (a caption in Chinese),
# libgd (an imported JPEG) and chafa (the candidates of --choose drawn on a terminal).
#   scripts/check-package.sh path/to/badge_VERSION_ARCH.deb
# Only fetching the minimal Debian into the cache, for a check to come (CI does it
# while badge builds):
#   scripts/check-package.sh --fetch-only
# Self-test: the same check of a copy of the package whose Depends leaves PACKAGE
# out must fail, naming the library that PACKAGE provides:
#   scripts/check-package.sh --expect-missing PACKAGE path/to/badge_VERSION_ARCH.deb
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/check-package.sh [--expect-missing PACKAGE] badge_VERSION_ARCH.deb | --fetch-only"
if [ "${1:-}" = --expect-missing ]; then
  left_out=${2:?$usage}
  deb=${3:?$usage}
  [ -f "$deb" ] || { echo "badge: no package at $deb; run 'make deb' first" >&2; exit 1; }
  # The library the left-out package provides, as badge names it when it cannot load it.
  soname=$(dpkg -L "$left_out" 2>/dev/null | sed -n 's|.*/\(lib[^/]*\.so\.[0-9][0-9]*\)$|\1|p' | head -1)
  [ -n "$soname" ] || { echo "badge: $left_out is not an installed package that provides a library (dpkg -L $left_out)" >&2; exit 1; }
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-check-package-self-test.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  dpkg-deb -R "$deb" "$scratch/root"
  depends=$(sed -n 's/^Depends: //p' "$scratch/root/DEBIAN/control")
  without=$(tr ',' '\n' <<<"$depends" | sed 's/^ *//' | awk -v p="$left_out" '$1 != p' | paste -sd, - | sed 's/,/, /g')
  [ "$without" != "$depends" ] || { echo "badge: $(basename "$deb")'s Depends has no $left_out: $depends" >&2; exit 1; }
  sed -i "s/^Depends: .*/Depends: $without/" "$scratch/root/DEBIAN/control"
  # Uncompressed: xz takes a minute over the binary, and apt reads either.
  dpkg-deb --root-owner-group -Znone --build "$scratch/root" "$scratch/without-$left_out.deb" >/dev/null
  echo "check-package: self-test: a copy of $(basename "$deb") without $left_out in its Depends must fail the check, naming $soname" >&2
  started=$SECONDS
  if "$0" "$scratch/without-$left_out.deb" >"$scratch/check.log" 2>&1; then
    sed 's/^/  | /' "$scratch/check.log" >&2
    echo "badge: self-test failed: the check passed a package whose Depends leaves out $left_out" >&2
    exit 1
  fi
  if ! grep -q "cannot load $soname" "$scratch/check.log"; then
    sed 's/^/  | /' "$scratch/check.log" >&2
    echo "badge: self-test failed: the check failed, but not because $soname could not be loaded" >&2
    exit 1
  fi
  echo "check-package: self-test ok: without $left_out the check fails ($((SECONDS - started)) s):" >&2
  grep -m1 "cannot load $soname" "$scratch/check.log" | sed 's/^ *| */  /' >&2
  exit 0
fi
fetch_only=false
if [ "${1:-}" = --fetch-only ]; then
  fetch_only=true
  deb=
else
  deb=${1:?$usage}
fi
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# The runtime stage: the package and its dependencies installed with apt, and apt's lists dropped.
runtime_steps=(
  "apt-get update"
  "apt-get install -y --no-install-recommends ca-certificates /tmp/badge.deb"
  "rm -rf /var/lib/apt/lists/* /tmp/badge.deb"
)

$fetch_only || [ -f "$deb" ] || { echo "badge: no package at $deb; run 'make deb' first" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  echo "badge: make check-package runs debootstrap and chroot, which need root; run it as root (sudo make check-package)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  echo "badge: installing debootstrap" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

started=$SECONDS
cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/badge
arch=$(dpkg --print-architecture)
tarball=$cache_dir/debootstrap-$suite-minbase-$arch.tgz
scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-check-package.XXXXXX")
root=$scratch/root
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  for m in "$root/dev/pts" "$root/proc"; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
  rm -rf --one-file-system "$scratch"
}
trap cleanup EXIT

if [ ! -s "$tarball" ]; then
  echo "check-package: fetching a minimal Debian $suite (cached at $tarball)" >&2
  mkdir -p "$cache_dir"
  debootstrap --variant=minbase --arch="$arch" --make-tarball="$tarball.part" "$suite" "$scratch/tarball" "$mirror" >"$scratch/debootstrap.log" 2>&1 \
    || { tail -n 20 "$scratch/debootstrap.log" >&2; rm -f "$tarball.part"; echo "badge: debootstrap could not fetch Debian $suite from $mirror" >&2; exit 1; }
  mv "$tarball.part" "$tarball"
fi
if $fetch_only; then
  echo "check-package: a minimal Debian $suite is cached at $tarball ($((SECONDS - started)) s)" >&2
  exit 0
fi
echo "check-package: a minimal Debian $suite in $root" >&2
if ! debootstrap --variant=minbase --arch="$arch" --unpack-tarball="$tarball" "$suite" "$root" "$mirror" >"$scratch/debootstrap.log" 2>&1; then
  tail -n 20 "$scratch/debootstrap.log" >&2
  echo "badge: debootstrap failed; if the cached $tarball is damaged, remove it and run again" >&2
  exit 1
fi

# What debian:bookworm-slim has: the release, its updates and its security updates.
cat > "$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} $suite-security main
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
# Terminals of its own for script(1), the --choose check's terminal.
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
ln -sf pts/ptmx "$root/dev/ptmx"
cp "$deb" "$root/tmp/badge.deb"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
for step in "${runtime_steps[@]}"; do
  echo "check-package: RUN $step" >&2
  in_root sh -ec "$step" >"$scratch/step.log" 2>&1 || { tail -n 30 "$scratch/step.log" >&2; echo "badge: '$step' failed in the fresh Debian $suite" >&2; exit 1; }
done

# The image model for the http generate: outside the chroot, on 127.0.0.1.
requests=$scratch/requests.log
: > "$requests"
coproc server { exec python3 scripts/check-package-server.py "$requests"; }
server_pid=$server_PID
read -r -t 30 port <&"${server[0]}" || { echo "badge: the fake image model did not start (scripts/check-package-server.py)" >&2; exit 1; }
cp Tests/Data/exif/gps-rotated.jpg "$root/tmp/photo.jpg"

# Used as a person would: a badge, the badge shown, verified, and the card's back; a
# badge from an image model over HTTP; one captioned in Chinese, which without the
# recommended fonts-noto-cjk is drawn without its caption and says what to install,
# and one in Hindi, shaped with the Noto fonts the package depends on; one imported
# from a JPEG; and one chosen among two candidates that chafa draws on a terminal
# (script(1) gives it one; TERM=dumb, so that no query of the terminal takes the key
# 1 that picks the first). LD_DEBUG=libs shows each library being loaded: `loaded
# LIB` fails unless the last command loaded it. chafa is linked, loaded at start;
# its drawing is what shows it works.
version=$(dpkg-deb --field "$deb" Version)
if ! in_root sh -ec '
  loaded() { grep -q "calling init: .*/$1" /tmp/ld.* || { echo "badge did not load $1"; exit 1; }; rm -f /tmp/ld.*; }
  test "$(badge --version)" = "$1"
  export BADGE_STORE=/tmp/store LD_DEBUG_OUTPUT=/tmp/ld
  badge generate --backend procedural --seed 1 "A pair of dumbbells"
  badge show
  badge verify
  badge card back --output /tmp/back.png
  test "$(od -An -tx1 -N8 /tmp/back.png | tr -d " ")" = 89504e470d0a1a0a
  man -w badge >/dev/null 2>&1 || test -f /usr/share/man/man1/badge.1.gz
  printf "{\"backends\": {\"model\": {\"type\": \"http\", \"api\": \"openai\", \"url\": \"http://127.0.0.1:%s/v1\", \"model\": \"gpt-image-1\", \"retries\": 0}}}\n" "$2" > /tmp/config.json
  LD_DEBUG=libs badge generate --config /tmp/config.json --backend model --size 256 "Drink more water"
  loaded libcurl.so.4
  badge show --json | grep -q "\"backend\" *: *\"model\""
  LD_DEBUG=libs badge generate --backend procedural --seed 2 --size 256 "每天学习中文" 2>/tmp/zh.log
  loaded libraqm.so.0
  grep -q "install fonts for it: apt-get install fonts-noto-core fonts-noto-cjk" /tmp/zh.log || { cat /tmp/zh.log; exit 1; }
  LD_DEBUG=libs badge generate --backend procedural --seed 2 --size 256 "रोज़ योग करो"
  loaded libraqm.so.0
  badge show --json | grep -q "\"caption-drawn\" *: *\"रोज़ योग करो\""
  LD_DEBUG=libs badge import /tmp/photo.jpg "Walk every day"
  loaded libgd.so.3
  badge show --json | grep -q "\"backend\" *: *\"import\""
  before=$(badge show --json | grep -o "\"id\" *: *\"[0-9a-f]*\"")
  printf 1 | TERM=dumb timeout 120 script -qec "badge generate --choose 2 --seed 3 --size 256 \"Read 20 books\"" /tmp/choose.log > /dev/null
  test "$(badge show --json | grep -o "\"id\" *: *\"[0-9a-f]*\"")" != "$before"
  drawn=$(grep -o "[▁▂▃▄▅▆▇█▀▔▕▏▎▍▌▋▊▉▐▖▗▘▙▚▛▜▝▞▟]" /tmp/choose.log | wc -l)
  test "$drawn" -ge 100 || { echo "the candidates were not drawn by chafa ($drawn block characters)"; exit 1; }
' check "$version" "$port" 2>&1 | sed 's/^/  | /'; then
  echo "badge: the installed package failed its smoke test in a fresh Debian $suite" >&2
  exit 1
fi
if ! grep -q '"path": "/v1/images/generations", "prompt": "Drink more water"' "$requests"; then
  sed 's/^/  | /' "$requests" >&2
  echo "badge: the fake image model never received badge's request" >&2
  exit 1
fi
echo "check-package: ok: $(basename "$deb") installs with apt in a minimal Debian $suite; generate (procedural, over HTTP with libcurl, captions in Chinese and Hindi with libraqm), import (libgd), --choose on a terminal (chafa), show, verify and card back work ($((SECONDS - started)) s)"
