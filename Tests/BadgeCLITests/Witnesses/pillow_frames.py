"""Every frame of an animated PNG or GIF as Pillow decodes it: an independent
witness of badge's animations. Run with Debian's Python (/usr/bin/python3),
whose python3-pil the tests install.

Usage: pillow_frames.py FILE

Prints one JSON object: the format Pillow recognised, the size, the number
of frames, the loop count (0: for ever; null: the file says nothing), each
frame's duration in milliseconds, and each frame's pixels as base64 RGBA
(8 bits a channel, not premultiplied, the frame as shown: composed over the
frames before it as the file says)."""
import base64
import json
import sys

from PIL import Image


def main():
    with Image.open(sys.argv[1]) as image:
        found = {"format": image.format, "width": image.width, "height": image.height,
                 "frames": getattr(image, "n_frames", 1), "durations_ms": [], "pixels": []}
        for k in range(found["frames"]):
            image.seek(k)
            found["durations_ms"].append(image.info.get("duration"))
            rgba = image.convert("RGBA")
            if rgba.size != (found["width"], found["height"]):
                raise SystemExit(f"frame {k} is {rgba.size}, not {found['width']}x{found['height']}")
            found["pixels"].append(base64.b64encode(rgba.tobytes()).decode())
        found["loop"] = image.info.get("loop")
    print(json.dumps(found))


if __name__ == "__main__":
    main()
