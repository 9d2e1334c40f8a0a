#!/bin/sh
# Unavailable: says why, and how to fix it.
if [ "${BADGE_KIND:-}" = availability ]; then echo '{"available": false, "reason": "no GPU found", "hint": "plug one in"}'; exit 0; fi
echo '{"ok": false, "error": "must not be asked to generate"}'
