#!/bin/sh
# A badge exec plugin in POSIX shell with ImageMagick (exec protocol 1, docs/PLUGINS.md).
#
# badge writes the JSON request to standard input and, for scripts like this
# one, also puts its fields in the environment: BADGE_KIND, BADGE_PROMPT,
# BADGE_SIZE, BADGE_SEED, BADGE_STYLE, BADGE_OUTPUT. The answer is one JSON
# line on standard output; anything on standard error goes to badge's log.
#
#   "magick": {"type": "exec", "command": ["Plugins/Examples/imagemagick/badge-magick.sh"], "timeoutSeconds": 30}
#
# Needs `convert` from ImageMagick (Debian: apt-get install imagemagick).
set -eu

fail() {
  # The message is ours, never the user's text, so it needs no JSON escaping.
  printf '{"ok": false, "error": "%s", "hint": "%s"}\n' "$1" "$2"
  exit 1
}

convert=$(command -v convert || true)

if [ "${BADGE_KIND:-}" = "availability" ]; then
  if [ -z "$convert" ]; then
    printf '{"available": false, "reason": "ImageMagick (convert) is not installed", "hint": "apt-get install imagemagick"}\n'
  else
    printf '{"available": true}\n'
  fi
  exit 0
fi

[ "${BADGE_PROTOCOL:-}" = "1" ] || fail "this plugin speaks exec protocol 1" "upgrade the plugin or badge"
[ -n "$convert" ] || fail "ImageMagick (convert) is not installed" "apt-get install imagemagick"

size=$BADGE_SIZE
# Seeds run to 2^64-1, past what shell arithmetic holds: the last 9 digits are plenty for a hue.
seed=$(printf '%s' "${BADGE_SEED:-0}" | tail -c 9 | sed 's/^0*//')
hue=$(( ${seed:-0} % 360 ))
center=$(( size / 2 ))
radius=$(( size * 42 / 100 ))
rim=$(( size / 55 + 1 ))
top=$(( center - radius ))
shadow=$(( size / 60 + 1 ))
text_width=$(( radius * 150 / 100 ))
text_height=$(( radius * 70 / 100 ))
text_y=$(( radius * 30 / 100 ))
star_y=$(( center - radius * 42 / 100 ))
star_r=$(( radius * 22 / 100 ))
star_i=$(( radius * 9 / 100 ))

# caption: treats a leading @ as "read this file" and % and \ as escapes: neutralise all three.
text=$(printf '%s' "${BADGE_PROMPT:-My promise}" | sed -e 's/\\/\\\\/g' -e 's/%/%%/g' -e 's/^@/ @/')

# A five-pointed star, drawn as a polygon around (center, star_y).
star=$(awk -v cx="$center" -v cy="$star_y" -v R="$star_r" -v r="$star_i" 'BEGIN {
  pi = atan2(0, -1)
  for (i = 0; i < 10; i++) {
    a = -pi / 2 + i * pi / 5; d = (i % 2 == 0) ? R : r
    printf "%.1f,%.1f ", cx + d * cos(a), cy + d * sin(a)
  }
}')

echo "drawing ${size} px, hue ${hue}" >&2
"$convert" \
  -size "${size}x${size}" "gradient:hsl($(( (hue + 180) % 360 )),30%,22%)-hsl($(( (hue + 180) % 360 )),40%,9%)" \
  \( -size "${size}x${size}" xc:none -fill "rgba(0,0,0,0.55)" \
     -draw "circle ${center},$(( center + shadow )) ${center},$(( top + shadow ))" -blur "0x$(( shadow * 2 ))" \) \
  -compose Over -composite \
  \( -size "${size}x${size}" "radial-gradient:hsl(${hue},70%,78%)-hsl(${hue},75%,38%)" \
     \( -size "${size}x${size}" xc:black -fill white -draw "circle ${center},${center} ${center},${top}" \) \
     -alpha off -compose CopyOpacity -composite \) \
  -compose Over -composite \
  -fill none -stroke white -strokewidth "$rim" -draw "circle ${center},${center} ${center},${top}" \
  -stroke "hsl(${hue},40%,92%)" -strokewidth "$(( rim / 3 + 1 ))" \
  -draw "circle ${center},${center} ${center},$(( top + radius * 12 / 100 ))" \
  -stroke none -fill white -draw "polygon ${star}" \
  \( -size "${text_width}x${text_height}" -background none -fill white \
     -font DejaVu-Sans-Bold -gravity center "caption:${text}" \) \
  -gravity center -geometry "+0+${text_y}" -compose Over -composite \
  -strip "PNG32:${BADGE_OUTPUT}" >&2 || fail "ImageMagick could not draw the badge" "run badge --verbose to see what convert said"

version=$("$convert" -version | sed -n 's/^Version: ImageMagick \([^ ]*\).*/\1/p')
printf '{"ok": true, "metadata": {"model": "magick-medal 1 (ImageMagick %s)", "seed": %s}}\n' "$version" "$seed"
