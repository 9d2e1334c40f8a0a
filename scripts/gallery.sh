#!/usr/bin/env bash
# Renders a fixed set of promises in every procedural style into docs/gallery/,
# with a fixed seed, so a change to the art engine shows up as a change here.
# Run: make gallery (builds badge first).
set -euo pipefail
cd "$(dirname "$0")/.."
badge=${BADGE_BIN:-.build/release/badge}
out=docs/gallery
size=${GALLERY_SIZE:-256}
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.svg

prompts=(
  "A pair of dumbbells"
  "A path through a forest"
  "Run a marathon"
  "Read 20 books"
  "Drink more water"
  "Meditate daily"
  "Sleep before midnight"
  "Learn the guitar"
  "Save money"
  "Travel the world"
  "Eat more greens"
  "Climb a mountain in midnight blue"
  "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders"
  "Learn Spanish, pastel colours"
  "Call grandmother every Sunday"
  "Go to bed before midnight"
  "Finish writing the fantasy novel I have been planning since university"
  "A minimalist abstract graphic design of a sunrise breaking through darkness. The composition is a full square, 8k resolution, flat surface. --ar 1:1"
  # A name for the file where the prompt has no Latin letters: name|prompt.
  "learn-chinese|学习中文"
  "read-every-day-arabic|اقرأ كل يوم"
  "yoga-every-day-hindi|रोज़ योग करो"
)
styles=(medal tile flat sketch)

for entry in "${prompts[@]}"; do
  if [[ $entry == *"|"* ]]; then
    slug=${entry%%|*} prompt=${entry#*|}
  else
    prompt=$entry
    slug=$(printf '%s' "$prompt" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9' '-' | sed 's/--*/-/g; s/-$//' | cut -c1-48 | sed 's/-$//')
  fi
  for style in "${styles[@]}"; do
    "$badge" generate --backend procedural --style "$style" --size "$size" --seed 1 \
      --output "$out/$slug-$style.png" "$prompt" > /dev/null
  done
done
# And the first promise as vectors, one SVG a style.
for style in "${styles[@]}"; do
  "$badge" generate --backend procedural --style "$style" --size "$size" --seed 1 \
    --output "$out/a-pair-of-dumbbells-$style.svg" "A pair of dumbbells" > /dev/null
done
printf 'gallery: %s badges in %s\n' "$(ls -1 "$out" | wc -l)" "$out"
