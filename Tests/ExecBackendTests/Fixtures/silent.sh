#!/bin/sh
# Writes nothing: no result line, no image, exit status 0.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
exit 0
