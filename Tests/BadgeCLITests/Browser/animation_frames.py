"""Every frame of an animated PNG or GIF as Chromium decodes it (WebCodecs'
ImageDecoder, the decoder behind <img>): an independent witness of badge's
animations.

Usage: animation_frames.py FILE MIME-TYPE

Prints one JSON object: the size, the number of frames, the loop count
(0: plays once; "forever"), whether Chromium would animate it, each frame's
duration in milliseconds, and each frame's pixels as base64 RGBA (8 bits a
channel, not premultiplied, read back through a 2D canvas).

The page is served by Playwright itself at http://localhost/ (a secure context,
which ImageDecoder needs); nothing listens on a port and nothing is downloaded.
Debian's Chromium is used as it is (executable_path)."""
import base64
import json
import sys

from playwright.sync_api import sync_playwright

DECODE = """async ([b64, type]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const decoder = new ImageDecoder({ data: bytes, type, colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  await decoder.tracks.ready;
  await decoder.completed;
  const track = decoder.tracks.selectedTrack;
  const found = { frames: track.frameCount, animated: track.animated,
                  loop: track.repetitionCount === Infinity ? 'forever' : track.repetitionCount,
                  durations_ms: [], pixels: [] };
  for (let k = 0; k < track.frameCount; k++) {
    const { image } = await decoder.decode({ frameIndex: k });
    if (k === 0) { found.width = image.displayWidth; found.height = image.displayHeight; }
    found.durations_ms.push(image.duration / 1000);
    const canvas = new OffscreenCanvas(image.displayWidth, image.displayHeight);
    const context = canvas.getContext('2d', { colorSpace: 'srgb' });
    context.drawImage(image, 0, 0);
    image.close();
    const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let text = '';
    for (let i = 0; i < rgba.length; i += 0x8000) text += String.fromCharCode.apply(null, rgba.subarray(i, i + 0x8000));
    found.pixels.push(btoa(text));
  }
  decoder.close();
  return found;
}"""


def main():
    path, mime = sys.argv[1], sys.argv[2]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--force-color-profile=srgb"])
        page = browser.new_page()
        page.route("http://localhost/", lambda route: route.fulfill(body="<!doctype html><title>frames</title>", content_type="text/html"))
        page.goto("http://localhost/")
        with open(path, "rb") as f:
            found = page.evaluate(DECODE, [base64.b64encode(f.read()).decode(), mime])
        browser.close()
    print(json.dumps(found))


if __name__ == "__main__":
    main()
