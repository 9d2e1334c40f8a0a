#!/bin/sh
# Fails rudely: a word on standard error and exit status 3, no result line.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
echo "cannot open /models/sd.bin" >&2
exit 3
