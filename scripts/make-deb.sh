#!/usr/bin/env bash
# Builds badge_VERSION_ARCH.deb from the staged files (make deb).
#   scripts/make-deb.sh --check-tools
#   scripts/make-deb.sh STAGE VERSION OUTDIR
# Depends is worked out from the binary itself: dpkg-shlibdeps for the libraries
# it links, and, for the libraries it opens at run time (dlopen, libraqm among them), the package
# that provides each soname the binary names. The caption fonts are added by name: DejaVu, and
# Noto for the other scripts; Noto CJK (~90 MB) is recommended rather than required, since
# badge draws every other caption without it and warns, naming it, when a caption needs it.
set -euo pipefail
cd "$(dirname "$0")/.."

check_tools() {
  local missing=()
  command -v dpkg-deb >/dev/null || missing+=(dpkg)
  command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
  command -v strings >/dev/null || missing+=(binutils)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "badge: make deb needs dpkg-deb, dpkg-shlibdeps and strings; install them with: apt-get install ${missing[*]}" >&2
    exit 1
  fi
}
# xz at DEB_XZ_LEVEL (0-9; Debian's default, 6, unless set): 18 MB in a minute
# of one core at 6, 21 MB in 14 s at 1, which CI uses for the .deb it checks.
# Checked with the tools, which make deb asks before the release build.
level=${DEB_XZ_LEVEL:-6}
case $level in
  [0-9]) ;;
  *) echo "badge: DEB_XZ_LEVEL must be an xz compression level from 0 to 9, not '$level'; unset it for Debian's 6" >&2; exit 64 ;;
esac
if [ "${1:-}" = --check-tools ]; then check_tools; exit 0; fi
stage=${1:?usage: scripts/make-deb.sh STAGE VERSION OUTDIR}
version=${2:?usage: scripts/make-deb.sh STAGE VERSION OUTDIR}
outdir=${3:?usage: scripts/make-deb.sh STAGE VERSION OUTDIR}
check_tools

top=$(sed -n '1s/^badge (\([^)]*\)).*/\1/p' packaging/changelog)
if [ "$top" != "$version" ]; then
  echo "badge: packaging/changelog's newest entry is $top, but the version is $version; add an entry for $version at its top" >&2
  exit 1
fi

arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
ZSH_COMPLETIONS=share/zsh/vendor-completions scripts/install.sh install "$stage" "$root" /usr >/dev/null
gzip -9n "$root/usr/share/man/man1/badge.1"
install -m 0644 packaging/copyright "$root/usr/share/doc/badge/copyright"
gzip -9nc packaging/changelog > "$root/usr/share/doc/badge/changelog.Debian.gz"
chmod 0644 "$root/usr/share/doc/badge/changelog.Debian.gz"

binary=$root/usr/bin/badge
# Libraries the binary links (ELF NEEDED).
mkdir -p "$work/src/debian"
printf 'Source: badge\n\nPackage: badge\nArchitecture: any\n' > "$work/src/debian/control"
linked=$(cd "$work/src" && dpkg-shlibdeps -O "$binary" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
# Libraries it opens at run time: the sonames written in it.
opened=()
while read -r soname; do
  [ -n "$soname" ] || continue
  # awk reads all its input (no early exit): ldconfig must never write into a closed pipe.
  path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64|64bit|AArch64/ && found == "" { found = $NF } END { print found }')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v s="$soname" '$1 == s && found == "" { found = $NF } END { print found }')
  if [ -z "$path" ]; then
    echo "badge: the binary opens $soname at run time, but no installed library provides it; run 'make deps' and try again" >&2
    exit 1
  fi
  real=$(readlink -f "$path")
  package=$(dpkg -S "$real" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') || true
  [ -n "$package" ] || package=$(dpkg -S "$path" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') || true
  if [ -z "$package" ]; then
    echo "badge: no Debian package owns $real (for $soname); install the library from Debian's packages" >&2
    exit 1
  fi
  opened+=("$package")
done < <(strings -a "$binary" | grep -E '^lib[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*\.so\.[0-9]+$' | sort -u)

# One entry a package: a versioned one from dpkg-shlibdeps wins over a bare name.
depends=$( { [ -n "$linked" ] && tr ',' '\n' <<<"$linked"; printf '%s\n' "${opened[@]}" fonts-dejavu-core fonts-noto-core fonts-material-design-icons-iconfont; } \
  | sed 's/^ *//; s/ *$//' | awk 'NF { name = $1; if (!(name in seen)) { seen[name] = $0; order[++n] = name } else if (index($0, "(")) seen[name] = $0 }
                                END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? ", " : ""), seen[order[i]] }')

size=$(du -sk --apparent-size "$root" | cut -f1)
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: badge
Version: $version
Architecture: $arch
Maintainer: The badge developers <badge@example.org>
Installed-Size: $size
Depends: $depends
Recommends: ca-certificates, fonts-noto-cjk
Section: graphics
Priority: optional
Description: turn a promise into a Promise Badge
 badge draws a promise (a resolution, an intention) as one image, the
 Promise Badge, and remembers the day you committed to it. Backends draw it
 procedurally, import a picture, ask a remote image model or run a program
 of your own; the store replaces the one current badge atomically and keeps
 the ones it replaced.
CONTROL

# Reproducible: every file's time is the changelog's (or SOURCE_DATE_EPOCH's).
epoch=${SOURCE_DATE_EPOCH:-$(date -d "$(awk '/^ -- / { sub(/^ -- .*>  /, ""); print; exit }' packaging/changelog)" +%s)}
find "$root" -exec touch -h -d "@$epoch" {} +
mkdir -p "$outdir"
deb="$outdir/badge_${version}_${arch}.deb"
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz -z"$level" --build "$root" "$deb" >/dev/null
echo "$deb ($(du -h "$deb" | cut -f1)): Depends: $depends"
