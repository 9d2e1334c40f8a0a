#!/bin/sh
# Floods standard output: never stops printing.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
yes "flood flood flood flood flood flood flood flood"
