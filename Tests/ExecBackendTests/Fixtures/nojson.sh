#!/bin/sh
# Prints no JSON: a friendly sentence instead of the result line.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
echo "Here is your badge!"
