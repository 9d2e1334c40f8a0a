#!/bin/sh
# Writes outside its path: a real PNG to $ESCAPE_TO instead of $BADGE_OUTPUT.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
cp "$PNG_SOURCE" "$ESCAPE_TO"
echo '{"ok": true}'
