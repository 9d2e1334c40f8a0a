#!/usr/bin/env bash
# Runs COMMAND in a session of its own whose CPU weight is the lowest there is,
# so that it takes only the CPU other work leaves idle: make test builds the
# consumer package beside its suite this way, and CI the release binary beside
# make test and the fuzzers beside what is left of it.
# Linux shares CPU between sessions (autogroups) before it shares it between the
# processes of one, and SwiftPM starts its compilers at nice 0 whatever its own nice
# is: so the session as a whole is given nice 19 (/proc/self/autogroup).
# Once the work it was beside is over and the caller waits for COMMAND, give it
# the full weight back, or any other load (stress, a second job) starves it.
#   scripts/beside.sh --check     succeeds when this can be done here
#   scripts/beside.sh COMMAND...  (start it with & ; `kill -- -PID` stops all of it)
#   scripts/beside.sh --full PID  the session PID leads gets nice 0 again
set -euo pipefail

can() {
  [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] && [ -w /proc/self/autogroup ]
}

if [ "${1:-}" = --check ]; then
  can
  exit
fi
if [ "${1:-}" = --full ]; then
  # It may have ended already: then there is nothing to raise.
  [ -n "${2:-}" ] && { echo 0 > "/proc/$2/autogroup"; } 2>/dev/null || true
  exit 0
fi
[ $# -gt 0 ] || { echo "usage: scripts/beside.sh --check | COMMAND..." >&2; exit 64; }
can || { echo "beside: Linux's autogroups are off here; the command would compete with the work beside it" >&2; exit 1; }
# Started in the background by a script, this process leads no process group, so
# setsid makes the new session without a fork: it keeps the PID its caller knows.
exec setsid bash -c 'echo 19 > /proc/self/autogroup && exec "$@"' beside "$@"
