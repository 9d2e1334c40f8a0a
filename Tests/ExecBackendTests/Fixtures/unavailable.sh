#!/bin/sh
# Unavailable: says why, and how to fix it.
[ -n "${ASKED_LOG:-}" ] && echo "$BADGE_KIND" >> "$ASKED_LOG"
if [ "${BADGE_KIND:-}" = availability ]; then echo '{"available": false, "reason": "no GPU found", "hint": "plug one in"}'; exit 0; fi
echo '{"ok": false, "error": "must not be asked to generate"}'
