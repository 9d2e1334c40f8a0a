#!/bin/sh
# Chatty: 5000 lines on standard error, then a good answer.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
i=0; while [ $i -lt 5000 ]; do echo "step $i of 5000"; i=$((i + 1)); done >&2
cp "$PNG_SOURCE" "$BADGE_OUTPUT"
echo '{"ok": true}'
