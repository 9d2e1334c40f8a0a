#!/bin/sh
# Succeeds, but repeats the token it was given in everything it says about
# the picture, as a careless plugin does: its model, revised prompt and an
# endpoint URL with the token in the query, and a metadata key that is the token.
[ "${BADGE_KIND:-}" = availability ] && { echo '{"available": true}'; exit 0; }
cat > /dev/null
cp "$PNG_SOURCE" "$BADGE_OUTPUT"
echo "{\"ok\": true, \"metadata\": {\"model\": \"hub model (token $HF_TOKEN)\", \"revisedPrompt\": \"drawn for $HF_TOKEN\", \"endpoint\": \"https://hub.example/run?token=$HF_TOKEN\", \"$HF_TOKEN\": \"a key of its own\"}}"
