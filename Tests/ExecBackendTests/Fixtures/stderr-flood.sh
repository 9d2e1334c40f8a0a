#!/bin/sh
# 20 MB on standard error, in lines, then a good answer.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
yes "the plugin is thinking out loud, line after line" | head -c 20000000 >&2
cp "$PNG_SOURCE" "$BADGE_OUTPUT"
echo '{"ok": true}'
