#!/usr/bin/env python3
"""Drives the card page in headless Chromium the way a person would: drags
with the mouse and with a finger, taps, presses keys. Speaks the DevTools
protocol over --remote-debugging-pipe (JSON messages separated by NUL bytes
on fds 3 and 4), so it needs nothing beyond the standard library.

usage: drive_card.py PAGE.html OUTDIR
Writes screenshots into OUTDIR and prints one JSON object describing what
the page reported after each step."""
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise SystemExit("chromium is not installed (apt-get install chromium; make test installs it)")
        self.profile = tempfile.mkdtemp(prefix="badge-chromium-")
        to_read, self.to_write = os.pipe()
        self.from_read, from_write = os.pipe()
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--mute-audio",
                "--hide-scrollbars", "--force-color-profile=srgb", "about:blank"]
        # The shell puts our pipe ends on the fds Chromium reads (3) and writes (4).
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", 'exec "$@" 3<&%d 4>&%d' % (to_read, from_write), "sh"] + args,
            pass_fds=(to_read, from_write), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_read)
        os.close(from_write)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method, params=None, session=True, timeout=15):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self.receive(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s failed: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def receive(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.from_read], [], [], left)
            if ready:
                chunk = os.read(self.from_read, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe (did it crash?)")
                self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def open(self, url):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.url = url

    def load(self, width, height, mobile=False, reduced_motion=False):
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        self.send("Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 1})
        self.send("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-reduced-motion", "value": "reduce" if reduced_motion else "no-preference"},
            {"name": "prefers-color-scheme", "value": "light"}]})
        self.send("Page.navigate", {"url": self.url})
        self.wait_for("document.readyState === 'complete' && window.card && window.card.ready === true")

    def eval(self, expression, await_promise=False):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                 "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise RuntimeError("page script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.eval(expression):
                return
            time.sleep(0.03)
        raise TimeoutError("the page never reached: " + expression)

    def settle(self):
        self.wait_for("!window.card.animating && !window.card.dragging")

    def card(self):
        return self.eval("JSON.stringify({state: card.state, face: card.face, angle: card.angle, "
                         "animating: card.animating, transform: document.getElementById('card').style.transform, "
                         "rect: (() => { const e = document.getElementById('card'); "
                         "return {x: e.offsetLeft, y: e.offsetTop, width: e.offsetWidth, height: e.offsetHeight}; })()})")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def mouse(self, kind, x, y, buttons=1):
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                               "buttons": buttons, "clickCount": 1})

    def drag(self, fraction, release=True, steps=8):
        """Presses at the card's centre and moves by `fraction` of its width."""
        rect = json.loads(self.card())["rect"]
        x0, y0 = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        self.mouse("mousePressed", x0, y0)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + rect["width"] * fraction * k / steps, y0)
        if release:
            self.mouse("mouseReleased", x0 + rect["width"] * fraction, y0, buttons=0)
        return x0 + rect["width"] * fraction, y0

    def touch_drag(self, fraction, steps=8):
        rect = json.loads(self.card())["rect"]
        x0, y0 = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        self.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]})
        for k in range(1, steps + 1):
            self.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [
                {"x": x0 + rect["width"] * fraction * k / steps, "y": y0}]})
        self.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    def key(self, key, code, key_code):
        text = " " if key == " " else ""
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "code": code,
                                             "windowsVirtualKeyCode": key_code, "text": text})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                             "windowsVirtualKeyCode": key_code})

    def planned_angles(self, step=0.001):
        """The angle of the last turn's springs every `step` seconds, from the page's own plan
        (window.card.motion), whatever frames the browser found time to draw."""
        return self.eval("""(() => { const m = card.motion, angles = [];
            for (let t = 0; t <= m.duration; t += %r) angles.push(m.angleAt(t));
            angles.push(m.angleAt(m.duration)); return angles; })()""" % step)

    def record_angles(self):
        """Angles on every animation frame until the card rests."""
        return self.eval("""new Promise((done) => {
            const angles = [];
            const tick = () => { angles.push(card.angle);
              if (card.animating) requestAnimationFrame(tick); else done(angles); };
            requestAnimationFrame(tick); })""", await_promise=True)


def main():
    page, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    shot = lambda name: browser.screenshot(os.path.join(out, name + ".png"))
    steps = {}
    browser = Browser()
    try:
        browser.open("file://" + page)
        browser.load(480, 720)
        steps["initial"] = json.loads(browser.card())
        steps["initial"]["screenshot"] = shot("initial")
        steps["promise"] = browser.eval("document.querySelector('.promise').textContent")
        steps["alt-back"] = browser.eval("document.querySelector('.face.back').alt")

        # A drag of 20% of the width turns the card 36° with the finger, then springs back.
        x, y = browser.drag(0.20, release=False)
        steps["short-drag-held"] = json.loads(browser.card())
        browser.mouse("mouseReleased", x, y, buttons=0)
        browser.settle()
        steps["short-drag"] = json.loads(browser.card())
        steps["short-drag"]["screenshot"] = shot("after-short-drag")

        # Past the threshold: held at 60% (108°, the back showing), then released.
        x, y = browser.drag(0.60, release=False)
        steps["long-drag-held"] = json.loads(browser.card())
        steps["long-drag-held"]["screenshot"] = shot("during-long-drag")
        browser.mouse("mouseReleased", x, y, buttons=0)
        steps["long-drag-angles"] = browser.record_angles()
        steps["long-drag-planned"] = browser.planned_angles()
        browser.settle()
        steps["long-drag"] = json.loads(browser.card())
        steps["long-drag"]["screenshot"] = shot("after-long-drag")

        browser.key(" ", "Space", 32)
        browser.settle()
        steps["space"] = json.loads(browser.card())
        steps["space"]["screenshot"] = shot("after-space")

        browser.key("ArrowLeft", "ArrowLeft", 37)
        browser.settle()
        steps["arrow-left"] = json.loads(browser.card())

        # A press that moves less than 6 px is a tap: it flips the card.
        x, y = browser.drag(0.004, release=False, steps=1)
        browser.mouse("mouseReleased", x, y, buttons=0)
        browser.settle()
        steps["tap"] = json.loads(browser.card())

        # Either side of the 35% threshold, close to it: 33% springs back, 37% turns it.
        browser.drag(0.33)
        browser.settle()
        steps["drag-33"] = json.loads(browser.card())
        browser.drag(0.37)
        browser.settle()
        steps["drag-37"] = json.loads(browser.card())

        # A phone: a finger drag past the threshold.
        browser.load(390, 700, mobile=True)
        browser.touch_drag(-0.5)
        browser.settle()
        steps["phone-swipe"] = json.loads(browser.card())
        steps["phone-swipe"]["screenshot"] = shot("phone-after-swipe")

        # Reduced motion: the card changes face at once, without turning.
        browser.load(480, 720, reduced_motion=True)
        browser.key(" ", "Space", 32)
        steps["reduced-motion"] = json.loads(browser.card())
        browser.wait_for("document.getAnimations().length === 0")  # past the short cross-fade
        steps["reduced-motion"]["screenshot"] = shot("reduced-motion")
    finally:
        browser.close()
    print(json.dumps(steps))


if __name__ == "__main__":
    main()
