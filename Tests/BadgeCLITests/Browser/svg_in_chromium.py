#!/usr/bin/env python3
"""Draws SVG badges in Chromium (Playwright, Debian's /usr/bin/chromium).

    svg_in_chromium.py DIR SIDE:NAME...

For each NAME, DIR/NAME.svg is opened at SIDE x SIDE pixels (device pixel
ratio 1) on a white page and its screenshot written to DIR/NAME-chromium.png;
the last line printed is {"drawn": [NAME, ...]}. The test compares the
screenshots with the PNGs.
"""
import json
import sys

from playwright.sync_api import sync_playwright


def main():
    directory, jobs = sys.argv[1], [a.split(":", 1) for a in sys.argv[2:]]
    drawn = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for side, name in jobs:
                side = int(side)
                page = browser.new_page(viewport={"width": side, "height": side}, device_scale_factor=1)
                svg = open(f"{directory}/{name}.svg", encoding="utf-8").read()
                page.set_content(f'<html><body style="margin:0;background:#fff">{svg}</body></html>')
                page.screenshot(path=f"{directory}/{name}-chromium.png", clip={"x": 0, "y": 0, "width": side, "height": side})
                page.close()
                drawn.append(name)
        finally:
            browser.close()
    print(json.dumps({"drawn": drawn}))


if __name__ == "__main__":
    main()
