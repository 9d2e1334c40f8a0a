#!/bin/sh
# Fails repeating the token it was given, in its error and on standard error,
# as a careless plugin does.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
echo "auth failed for token $HF_TOKEN" >&2
echo "{\"ok\": false, \"error\": \"the hub refused token $HF_TOKEN\"}"
exit 1
