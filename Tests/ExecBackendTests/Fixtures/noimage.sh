#!/bin/sh
# Exits 0 without an image: claims success, writes nothing.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
echo '{"ok": true, "metadata": {"model": "liar 1"}}'
