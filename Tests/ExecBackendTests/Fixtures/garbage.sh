#!/bin/sh
# Writes garbage: random bytes where the PNG should be, and claims success.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
head -c 5000 /dev/urandom > "$BADGE_OUTPUT"
echo '{"ok": true}'
