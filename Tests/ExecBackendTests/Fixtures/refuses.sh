#!/bin/sh
# Fails politely: ok false, with a message and a hint for the user.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
echo '{"ok": false, "error": "the model is still downloading", "hint": "try again in five minutes"}'
exit 1
