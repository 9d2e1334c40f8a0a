#!/usr/bin/env python3
"""A badge exec plugin in Python with Pillow (exec protocol 1, docs/PLUGINS.md).

badge writes one JSON request to standard input; this answers with one JSON
line on standard output. Logs go to standard error, which badge sends to its
log (`badge --verbose`).

Configure it (paths relative to the configuration file's directory):

    "pillow": {"type": "exec",
               "command": ["/usr/bin/python3", "Plugins/Examples/python-pillow/badge_pillow.py"],
               "timeoutSeconds": 30}

Debian's Pillow is `python3-pil`, installed for /usr/bin/python3; a bare
`python3` may be another interpreter without it.
"""

import colorsys
import json
import math
import random
import sys
import textwrap

PROTOCOL = 1


def answer(result):
    """The one result line on standard output."""
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def availability():
    try:
        import PIL  # noqa: F401
    except ImportError:
        return {"available": False, "reason": "Pillow is not installed for " + sys.executable,
                "hint": "apt-get install python3-pil (Debian) or pip install pillow"}
    return {"available": True}


def font(size):
    from PIL import ImageFont
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
                 "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf"):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default()


def rgb(h, s, v):
    return tuple(round(c * 255) for c in colorsys.hsv_to_rgb(h % 1.0, s, v))


def star(cx, cy, outer, inner, points=5):
    corners = []
    for i in range(points * 2):
        radius = outer if i % 2 == 0 else inner
        angle = -math.pi / 2 + i * math.pi / points
        corners.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
    return corners


def draw(request):
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

    size = request["size"]
    # Pillow's shapes are not anti-aliased: draw at twice the size and scale down.
    scale = 2 if size <= 2048 else 1
    side = size * scale
    rng = random.Random(request["seed"])
    hue = rng.random()

    # Background: a quiet vertical gradient in the complementary hue.
    top, bottom = rgb(hue + 0.5, 0.25, 0.22), rgb(hue + 0.5, 0.35, 0.10)
    column = Image.new("RGB", (1, side))
    for y in range(side):
        t = y / max(side - 1, 1)
        column.putpixel((0, y), tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))
    image = column.resize((side, side))

    center, radius = side / 2, side * 0.42

    # A soft shadow under the medal.
    shadow = Image.new("L", (side, side), 0)
    ImageDraw.Draw(shadow).ellipse(
        (center - radius, center - radius + side * 0.02, center + radius, center + radius + side * 0.02), fill=150)
    shadow = shadow.filter(ImageFilter.GaussianBlur(side * 0.015))
    image.paste((0, 0, 0), mask=shadow)

    # The face: a diagonal gradient in the seed's hue, clipped to a circle.
    light, dark = rgb(hue, 0.45, 0.98), rgb(hue + 0.04, 0.85, 0.62)
    down = Image.linear_gradient("L").resize((side, side))
    ramp = ImageChops.add(down, down.transpose(Image.Transpose.ROTATE_90).transpose(Image.Transpose.FLIP_LEFT_RIGHT), scale=2.0)
    face = Image.composite(Image.new("RGB", (side, side), dark), Image.new("RGB", (side, side), light), ramp)
    disc = Image.new("L", (side, side), 0)
    ImageDraw.Draw(disc).ellipse((center - radius, center - radius, center + radius, center + radius), fill=255)
    image.paste(face, mask=disc)

    pen = ImageDraw.Draw(image)
    rim = max(2, round(side * 0.018))
    pen.ellipse((center - radius, center - radius, center + radius, center + radius), outline=(255, 255, 255), width=rim)
    inner = radius * 0.88
    pen.ellipse((center - inner, center - inner, center + inner, center + inner),
                outline=rgb(hue, 0.25, 1.0), width=max(1, rim // 3))

    # A star above the words.
    pen.polygon(star(center, center - radius * 0.38, radius * 0.24, radius * 0.1), fill=(255, 255, 255))

    # The promise itself, wrapped to fit the lower half of the face.
    words = " ".join(request["prompt"].split()) or "My promise"
    lines = textwrap.wrap(words, width=16)[:3]
    if len(textwrap.wrap(words, width=16)) > 3:
        lines[-1] = lines[-1][:13].rstrip() + "..."
    text_font = font(round(side * (0.085 if len(lines) == 1 else 0.07)))
    line_height = text_font.getbbox("Ag")[3] * 1.2
    y = center + radius * 0.08
    for line in lines:
        width = pen.textlength(line, font=text_font)
        x = center - width / 2
        pen.text((x + side * 0.004, y + side * 0.004), line, font=text_font, fill=dark)
        pen.text((x, y), line, font=text_font, fill=(255, 255, 255))
        y += line_height

    if scale != 1:
        image = image.resize((size, size), Image.LANCZOS)
    return image


def generate(request):
    try:
        image = draw(request)
    except ImportError:
        return {"ok": False, "error": "Pillow is not installed for " + sys.executable,
                "hint": "apt-get install python3-pil"}
    image.save(request["output"], "PNG", optimize=False)
    import PIL
    print(f"drew {request['size']} px for seed {request['seed']}", file=sys.stderr)
    return {"ok": True, "metadata": {"model": "pillow-medal 1 (Pillow " + PIL.__version__ + ")", "seed": request["seed"]}}


def main():
    try:
        request = json.loads(sys.stdin.read())
    except ValueError as error:
        answer({"ok": False, "error": f"the request is not JSON: {error}"})
        return 1
    if request.get("protocol") != PROTOCOL:
        answer({"ok": False, "error": f"this plugin speaks protocol {PROTOCOL}, not {request.get('protocol')}"})
        return 1
    if request.get("kind") == "availability":
        answer(availability())
        return 0
    answer(generate(request))
    return 0


if __name__ == "__main__":
    sys.exit(main())
