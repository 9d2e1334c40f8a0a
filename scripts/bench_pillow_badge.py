"""The peer for the procedural benchmark: the same kind of 1024 px badge
(gradient disc, bevelled rim, soft shadow, a motif, a caption) drawn with
Pillow the way Pillow users get smooth edges (2x supersampling), saved as PNG
at zlib level 6. Run as a whole process, like `badge generate --output`."""
import sys
from PIL import Image, ImageDraw, ImageFilter, ImageFont

size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pillow-badge.png"
# "aliased" draws at the final size: faster, but with the jagged edges of
# Pillow's shapes, which have no anti-aliasing of their own.
s = size if (len(sys.argv) > 3 and sys.argv[3] == "aliased") else size * 2
img = Image.new("RGBA", (s, s), (0, 0, 0, 0))

# Rim, then a radial-gradient face.
draw = ImageDraw.Draw(img)
draw.ellipse((s * 0.06, s * 0.06, s * 0.94, s * 0.94), fill=(212, 175, 55, 255))
draw.ellipse((s * 0.09, s * 0.09, s * 0.91, s * 0.91), fill=(150, 110, 20, 255))
face = Image.radial_gradient("L").resize((int(s * 0.78), int(s * 0.78)))
colored = Image.merge("RGB", [face.point(lambda v: 30 + v // 3), face.point(lambda v: 60 + v // 3), face.point(lambda v: 140 + v // 4)])
mask = Image.new("L", colored.size, 0)
ImageDraw.Draw(mask).ellipse((0, 0, colored.size[0], colored.size[1]), fill=255)
img.paste(colored, (int(s * 0.11), int(s * 0.11)), mask)

# Motif: a pair of dumbbells.
white = (245, 245, 250, 255)
cx, cy = s / 2, s * 0.45
draw.rounded_rectangle((cx - s * 0.2, cy - s * 0.02, cx + s * 0.2, cy + s * 0.02), radius=s * 0.01, fill=white)
for dx in (-1, 1):
    for off, h in ((0.17, 0.12), (0.22, 0.09)):
        x = cx + dx * s * off
        draw.rounded_rectangle((x - s * 0.025, cy - s * h, x + s * 0.025, cy + s * h), radius=s * 0.012, fill=white)

# Caption.
font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", int(s * 0.06))
text = "A PAIR OF DUMBBELLS"
w = draw.textlength(text, font=font)
draw.text((cx - w / 2, s * 0.66), text, font=font, fill=white)

# The soft shadow needs no supersampling: blur it at the final size, under the medal.
shadow = Image.new("RGBA", (size, size), (0, 0, 0, 0))
ImageDraw.Draw(shadow).ellipse((size * 0.08, size * 0.10, size * 0.92, size * 0.94), fill=(0, 0, 0, 110))
shadow = shadow.filter(ImageFilter.GaussianBlur(size * 0.02))
shadow.alpha_composite(img.resize((size, size), Image.LANCZOS))
shadow.save(out, "PNG", compress_level=6)
