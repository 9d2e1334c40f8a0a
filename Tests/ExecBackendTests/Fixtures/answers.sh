#!/bin/sh
# Prints its result, says "answered" on standard error and exits. With CHILD_PID_FILE set it
# first starts a child that keeps standard output and error open (its pid in that file).
if [ -n "${CHILD_PID_FILE:-}" ]; then
    sleep 300 &
    echo $! > "$CHILD_PID_FILE.tmp" && mv "$CHILD_PID_FILE.tmp" "$CHILD_PID_FILE"
fi
echo '{"ok": true}'
echo answered >&2
