#!/usr/bin/env bash
# Installs the .deb into a minimal Debian 12 the way a user's machine would, and uses it
# (make check-package). debootstrap makes the system (--variant=minbase) in a scratch
# folder; apt resolves the package's Depends from Debian, so a missing runtime
# dependency fails here as it would for a user. The system's tarball is cached under
# ${XDG_CACHE_HOME:-~/.cache}/badge/ and reused when it is there.
# The steps that install the package are the Containerfile's runtime stage, in the
# same order (Tests/BadgeCLITests/PackagingTests.swift checks that they agree).
#   scripts/check-package.sh path/to/badge_VERSION_ARCH.deb
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:?usage: scripts/check-package.sh badge_VERSION_ARCH.deb}
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# The runtime stage: the package and its dependencies installed with apt, and apt's lists dropped.
runtime_steps=(
  "apt-get update"
  "apt-get install -y --no-install-recommends ca-certificates /tmp/badge.deb"
  "rm -rf /var/lib/apt/lists/* /tmp/badge.deb"
)

[ -f "$deb" ] || { echo "badge: no package at $deb; run 'make deb' first" >&2; exit 1; }
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
cleanup() {
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
cp "$deb" "$root/tmp/badge.deb"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
for step in "${runtime_steps[@]}"; do
  echo "check-package: RUN $step" >&2
  in_root sh -ec "$step" >"$scratch/step.log" 2>&1 || { tail -n 30 "$scratch/step.log" >&2; echo "badge: '$step' failed in the fresh Debian $suite" >&2; exit 1; }
done

# Used as a person would: a badge, the badge shown, verified, and the card's back.
version=$(dpkg-deb --field "$deb" Version)
if ! in_root sh -ec '
  test "$(badge --version)" = "$1"
  export BADGE_STORE=/tmp/store
  badge generate --backend procedural --seed 1 "A pair of dumbbells"
  badge show
  badge verify
  badge card back --output /tmp/back.png
  test "$(od -An -tx1 -N8 /tmp/back.png | tr -d " ")" = 89504e470d0a1a0a
  man -w badge >/dev/null 2>&1 || test -f /usr/share/man/man1/badge.1.gz
' check "$version" 2>&1 | sed 's/^/  | /'; then
  echo "badge: the installed package failed its smoke test in a fresh Debian $suite" >&2
  exit 1
fi
echo "check-package: ok: $(basename "$deb") installs with apt in a minimal Debian $suite, and generate, show, verify and card back work ($((SECONDS - started)) s)"
