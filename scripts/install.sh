#!/usr/bin/env bash
# Installs or removes badge's files under DESTDIR+PREFIX (make install / make uninstall).
#   scripts/install.sh install   STAGE DESTDIR PREFIX
#   scripts/install.sh uninstall STAGE DESTDIR PREFIX
# install copies every file to a temporary name beside its target first; only when all
# are there are they renamed into place, so a failure (a read-only or full DESTDIR)
# leaves nothing half-installed: the temporaries and any folder it made are removed.
# uninstall removes exactly the files install writes (and, under a DESTDIR, the
# folders that are left empty).
# ZSH_COMPLETIONS (relative to PREFIX) is where zsh's completion goes: zsh reads
# share/zsh/site-functions under /usr/local; Debian's own packages use
# share/zsh/vendor-completions.
set -euo pipefail
action=${1:-}
stage=${2:-}
destdir=${3:-}
prefix=${4:-/usr/local}
zsh_dir=${ZSH_COMPLETIONS:-share/zsh/site-functions}
case "$action" in install|uninstall) ;; *) echo "usage: scripts/install.sh install|uninstall STAGE DESTDIR PREFIX" >&2; exit 64 ;; esac
case "$prefix" in /*) ;; *) echo "badge: PREFIX must be an absolute path (it is '$prefix'), e.g. PREFIX=/usr/local" >&2; exit 64 ;; esac
[ -z "$destdir" ] || destdir=$(realpath -m -- "$destdir")
root="${destdir%/}${prefix%/}"

# target (under PREFIX)                       staged file              mode
files=(
  "bin/badge                                  badge                    0755"
  "share/man/man1/badge.1                     badge.1                  0644"
  "share/bash-completion/completions/badge    completions/badge.bash   0644"
  "$zsh_dir/_badge                            completions/_badge       0644"
  "share/fish/vendor_completions.d/badge.fish completions/badge.fish   0644"
  "share/doc/badge/config.example.json        config.example.json      0644"
)

where="${destdir:+DESTDIR=$destdir }PREFIX=$prefix"

if [ "$action" = uninstall ]; then
  removed=0
  for entry in "${files[@]}"; do
    read -r target _ _ <<<"$entry"
    path="$root/$target"
    [ -e "$path" ] || [ -L "$path" ] || continue
    if ! rm -f -- "$path" 2>/dev/null; then
      echo "badge: cannot remove $path: permission denied; run 'sudo make uninstall' with the same $where" >&2
      exit 1
    fi
    echo "removed $path"
    removed=$((removed + 1))
    dir=$(dirname "$path")
    # badge's own folder goes when empty; under a DESTDIR, so does every folder install made.
    if [ "$(dirname "$target")" = share/doc/badge ]; then rmdir "$dir" 2>/dev/null || true; fi
    if [ -n "$destdir" ]; then
      while [ "$dir" != "$destdir" ] && [ "$dir" != / ]; do
        if [ -d "$dir" ]; then rmdir "$dir" 2>/dev/null || break; fi
        dir=$(dirname "$dir")
      done
    fi
  done
  [ "$removed" -gt 0 ] || echo "badge: nothing to remove under ${root:-/} (was it installed with another PREFIX or DESTDIR?)" >&2
  exit 0
fi

[ -n "$stage" ] && [ -d "$stage" ] || { echo "badge: nothing staged at '$stage'; run 'make install', which stages first" >&2; exit 1; }
for entry in "${files[@]}"; do
  read -r _ source _ <<<"$entry"
  [ -f "$stage/$source" ] || { echo "badge: $stage/$source is missing; run 'make stage' again" >&2; exit 1; }
done

made_dirs=()   # the topmost folder made for each target, removed on failure
temps=()
rollback() {
  for t in "${temps[@]}"; do rm -f -- "$t"; done
  local i
  for ((i = ${#made_dirs[@]} - 1; i >= 0; i--)); do rm -rf -- "${made_dirs[i]}"; done
}
fail() {
  rollback
  echo "badge: $1" >&2
  echo "badge: nothing was installed. Choose a writable DESTDIR or PREFIX, or run 'sudo make install' ($where)." >&2
  exit 1
}
trap 'rollback; exit 130' INT TERM

for entry in "${files[@]}"; do
  read -r target source mode <<<"$entry"
  path="$root/$target"
  dir=$(dirname "$path")
  if [ ! -d "$dir" ]; then
    top=$dir
    while [ ! -e "$(dirname "$top")" ]; do top=$(dirname "$top"); done
    err=$(mkdir -p -- "$dir" 2>&1) || fail "cannot create $dir: ${err##*: }"
    made_dirs+=("$top")
  fi
  temp="$dir/.badge-install.$$"
  err=$(install -m "$mode" -- "$stage/$source" "$temp" 2>&1) || fail "cannot write into $dir: ${err##*: }"
  temps+=("$temp")
done

i=0
for entry in "${files[@]}"; do
  read -r target _ _ <<<"$entry"
  if ! mv -f -- "${temps[i]}" "$root/$target"; then
    for t in "${temps[@]:i}"; do rm -f -- "$t"; done
    echo "badge: cannot move ${temps[i]} to $root/$target; the files listed above were installed, run 'make uninstall' ($where) to remove them" >&2
    exit 1
  fi
  echo "installed $root/$target"
  i=$((i + 1))
done
