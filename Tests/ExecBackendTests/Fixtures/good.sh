#!/bin/sh
# Behaves: keeps a copy of its request and environment (when asked), logs, writes the PNG it is given, and a stray file.
[ -n "${ASKED_LOG:-}" ] && echo "$BADGE_KIND" >> "$ASKED_LOG"
if [ "${BADGE_KIND:-}" = availability ]; then echo '{"protocol": 1, "available": true}'; exit 0; fi
request=$(cat)
[ -n "${REQUEST_COPY:-}" ] && printf "%s" "$request" > "$REQUEST_COPY"
[ -n "${ENV_COPY:-}" ] && env > "$ENV_COPY"
echo "drawing with care" >&2
echo "a line for the log, not the result"
cp "$PNG_SOURCE" "$BADGE_OUTPUT"
echo scratch > "$(dirname "$BADGE_OUTPUT")/scratch.txt"
echo '{"protocol": 1, "ok": true, "metadata": {"model": "good 1", "seed": 77, "revisedPrompt": "a good badge", "steps": 20, "sampler": "euler"}}'
