"""How many frames Chromium's own decoder (WebCodecs' ImageDecoder) finds in
each PNG named, and whether it would animate it: an independent witness that
an APNG's frames are gone. Prints one JSON object, {path: {"frames", "animated"}}.

Usage: png_frames.py FILE [FILE ...]

The page is served by Playwright itself at http://localhost/ (a secure context,
which ImageDecoder needs); nothing listens on a port and nothing is downloaded."""
import base64
import json
import sys

from playwright.sync_api import sync_playwright

DECODE = """async (b64) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const decoder = new ImageDecoder({ data: bytes, type: 'image/png' });
  await decoder.tracks.ready;
  await decoder.completed;
  const track = decoder.tracks.selectedTrack;
  return { frames: track.frameCount, animated: track.animated };
}"""


def main():
    found = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.route("http://localhost/", lambda route: route.fulfill(body="<!doctype html><title>frames</title>", content_type="text/html"))
        page.goto("http://localhost/")
        for path in sys.argv[1:]:
            with open(path, "rb") as f:
                found[path] = page.evaluate(DECODE, base64.b64encode(f.read()).decode())
        browser.close()
    print(json.dumps(found))


if __name__ == "__main__":
    main()
