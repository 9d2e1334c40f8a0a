#!/bin/sh
# Hangs: ignores SIGTERM, starts a child that ignores it too (its pid in $CHILD_PID_FILE), never answers.
[ "${BADGE_KIND:-}" = availability ] && [ -z "${HANG_AVAILABILITY:-}" ] && { echo '{"available": true}'; exit 0; }
trap '' TERM
sleep 300 &
echo $! > "$CHILD_PID_FILE"
echo "thinking very hard" >&2
while :; do sleep 1; done
