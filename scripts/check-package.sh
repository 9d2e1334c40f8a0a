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
# Last, badge serve runs there as a person starts it (a free port on 127.0.0.1, the
# token it makes for the run), asked from outside the chroot with curl: /healthz,
# /api/backends (each backend available or saying why not, procedural available), one
# /v1/badge.png (a PNG of the size asked); then SIGTERM, which it must exit 0 on.
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
# debootstrap makes the system; curl asks the badge serve in it.
tools=()
command -v debootstrap >/dev/null || tools+=(debootstrap)
command -v curl >/dev/null || tools+=(curl)
if [ ${#tools[@]} -gt 0 ]; then
  echo "badge: installing ${tools[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${tools[@]}" >/dev/null
fi

started=$SECONDS
cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/badge
arch=$(dpkg --print-architecture)
tarball=$cache_dir/debootstrap-$suite-minbase-$arch.tgz
scratch=$(mktemp -d "${TMPDIR:-/tmp}/badge-check-package.XXXXXX")
root=$scratch/root
server_pid=
serve_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  if [ -n "$serve_pid" ]; then kill -KILL "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
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

# chroot and env each exec what they run: a command started with & is $!, badge serve's pid.
in_root_command=(chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
in_root() { "${in_root_command[@]}" "$@"; }
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

# badge serve as a person starts it: on a free port of 127.0.0.1 (--listen
# 127.0.0.1:0), over the store the smoke test filled, with the token it makes for the
# run. The chroot has neither curl nor python3 and shares this machine's network, so
# the requests come from outside it, as a browser's on the same machine would. Its
# output goes through a FIFO: the first line is the URL it listens on (read as soon
# as it is printed), and the output ends when it exits. Every wait is bounded;
# on a failure, what the server printed and logged is shown.
serve_started=${EPOCHREALTIME//[!0-9]/}
echo "check-package: badge serve: /healthz, /api/backends, /v1/badge.png, then SIGTERM" >&2
mkfifo "$scratch/serve.out"
"${in_root_command[@]}" badge serve --store /tmp/store --listen 127.0.0.1:0 >"$scratch/serve.out" 2>"$scratch/serve.err" &
serve_pid=$!
exec {serve_out}<"$scratch/serve.out"
serve_said=()
serve_failed() {
  { [ ${#serve_said[@]} -eq 0 ] || printf '%s\n' "${serve_said[@]}"; cat "$scratch/serve.err"; } | sed 's/^/  | /' >&2
  echo "badge: $1" >&2
  exit 1
}
# A line of its output within the seconds given: 0 when one came, 1 when the output
# ended (the server exited), more when the time ran out.
serve_line() {
  local status=0
  IFS= read -r -t "$1" line <&"$serve_out" || status=$?
  [ "$status" -ne 0 ] || serve_said+=("$line")
  return "$status"
}
status=0
serve_line 30 || status=$?
if [ "$status" -eq 1 ]; then
  status=0
  wait "$serve_pid" || status=$?
  serve_pid=
  serve_failed "badge serve exited (status $status) without saying where it listens"
fi
[ "$status" -eq 0 ] || serve_failed "badge serve did not say where it listens within 30 s"
[[ $line =~ ^The\ studio\ is\ at\ (http://127\.0\.0\.1:[0-9]+)/#token=([0-9a-f]+)$ ]] \
  || serve_failed "badge serve's first line is not 'The studio is at http://127.0.0.1:PORT/#token=TOKEN'"
base=${BASH_REMATCH[1]} token=${BASH_REMATCH[2]}
# GET base+PATH into a file, within 30 s: prints "STATUS CONTENT-TYPE".
serve_get() {
  local path=$1 out=$2
  shift 2
  curl -sS --max-time 30 -o "$out" -w '%{http_code} %{content_type}' "$@" "$base$path" 2>>"$scratch/curl.err" || echo "no answer: $(tail -n 1 "$scratch/curl.err")"
}

answer=$(serve_get /healthz "$scratch/healthz.json")
[ "$answer" = "200 application/json; charset=utf-8" ] && [ "$(cat "$scratch/healthz.json")" = '{"status":"ok"}' ] \
  || serve_failed "GET /healthz: $answer: $(head -c 300 "$scratch/healthz.json" 2>/dev/null)"

# The studio's API takes the run's token in X-Badge-Token, as the page sends it.
# Each backend is available, or says why not; procedural, which needs nothing, is.
answer=$(serve_get /api/backends "$scratch/backends.json" -H "X-Badge-Token: $token")
[ "$answer" = "200 application/json; charset=utf-8" ] \
  || serve_failed "GET /api/backends: $answer: $(head -c 300 "$scratch/backends.json" 2>/dev/null)"
if ! backends=$(python3 - "$scratch/backends.json" 2>&1 <<'CHECK'
import json, sys
try:
    backends = json.load(open(sys.argv[1], encoding="utf-8"))
except ValueError as error:
    sys.exit(f"not JSON ({error})")
if not isinstance(backends, list) or not all(isinstance(b, dict) for b in backends):
    sys.exit("not a list of backends")
shown, wrong = [], []
for backend in backends:
    name, available, reason = backend.get("name"), backend.get("available"), backend.get("reason")
    if available is True:
        shown.append(f"{name} available")
    elif available is False and isinstance(reason, str) and reason.strip():
        shown.append(f"{name} unavailable ({reason})")
    else:
        wrong.append(f"{name}: \"available\": {json.dumps(available)}, \"reason\": {json.dumps(reason)}")
if not any(b.get("name") == "procedural" and b.get("available") is True for b in backends):
    wrong.append("procedural is not listed as available")
if wrong:
    sys.exit("; ".join(wrong))
print(", ".join(shown))
CHECK
); then
  serve_said+=("GET /api/backends: $(head -c 2000 "$scratch/backends.json")")
  serve_failed "/api/backends does not list each backend as available or with a reason why not: $backends"
fi

# One badge by URL: a PNG (its signature) of the size asked (its IHDR's width and height).
answer=$(serve_get "/v1/badge.png?promise=Ship+what+you+test&style=medal&seed=7&size=192" "$scratch/badge.png")
[ "$answer" = "200 image/png" ] || serve_failed "GET /v1/badge.png: $answer: $(head -c 300 "$scratch/badge.png" 2>/dev/null)"
head=$(od -An -tx1 -N24 "$scratch/badge.png" | tr -d ' \n')
[ "$head" = "89504e470d0a1a0a0000000d49484452$(printf %08x%08x 192 192)" ] \
  || serve_failed "GET /v1/badge.png did not answer a 192×192 PNG: its first 24 bytes are $head"

# SIGTERM: it stops (its output ends) within 30 s, says so, and exits 0.
kill -TERM "$serve_pid"
deadline=$((SECONDS + 30))
status=0
while [ "$SECONDS" -lt "$deadline" ]; do
  status=0
  serve_line $((deadline - SECONDS)) || status=$?
  [ "$status" -eq 0 ] || break
done
[ "$status" -eq 1 ] || serve_failed "badge serve did not stop within 30 s of SIGTERM"
status=0
wait "$serve_pid" || status=$?
serve_pid=
exec {serve_out}<&-
[ "$status" -eq 0 ] && [ "${serve_said[-1]}" = Stopped. ] \
  || serve_failed "badge serve stopped by SIGTERM exited with status $status, its last line '${serve_said[-1]}'"
serve_ms=$(( (${EPOCHREALTIME//[!0-9]/} - serve_started) / 1000 ))
echo "check-package: ok: badge serve on ${base#http://}: /healthz ok; /api/backends: $backends; /v1/badge.png a 192×192 PNG; SIGTERM: stopped, status 0 ($((serve_ms / 1000)).$(printf %03d $((serve_ms % 1000))) s)" >&2
echo "check-package: ok: $(basename "$deb") installs with apt in a minimal Debian $suite; generate (procedural, over HTTP with libcurl, captions in Chinese and Hindi with libraqm), import (libgd), --choose on a terminal (chafa), show, verify, card back and serve (/healthz, /api/backends, /v1/badge.png, SIGTERM) work ($((SECONDS - started)) s)"
