"""The studio, walked through in Chromium as a person would, with Playwright.

Usage: studio_walkthrough.py URL SCREENSHOTS_DIR [--slow-backend NAME]

URL is what `badge serve` printed (it carries the token). Each step waits for
the state it expects (never a fixed sleep), saves a screenshot, and the script
ends with one JSON line on stdout: what the page showed at each step. Any step
that does not reach its state fails the script with a message naming it.
Debian's Chromium is used as it is (executable_path): nothing is downloaded."""
import http.server
import json
import os
import re
import sys
import threading

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
STEP_MS = 60_000
FOCUS_PAD = 12
# What a value the page failed to turn into words shows as.
NOT_WORDS = re.compile(r"\bundefined\b|\bnull\b|\bNaN\b|\[object \w+\]")


def wait_until(page, expression, what=None, timeout_ms=STEP_MS):
    """Polls `expression` (evaluated by the DevTools protocol, which the page's
    CSP does not block, unlike wait_for_function's eval) until it is truthy."""
    waited = 0
    while not page.evaluate(expression):
        if waited >= timeout_ms:
            raise AssertionError(f"gave up after {timeout_ms / 1000:.0f} s waiting for {what or expression}")
        page.wait_for_timeout(50)
        waited += 50


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another local server, on a port of its own: it keeps every request's
    headers, to show that nothing that authenticates to the studio reaches it."""
    seen = []

    def do_GET(self):
        Recorder.seen.append({"path": self.path, "headers": dict(self.headers.items())})
        body = b"<!doctype html><title>elsewhere</title><p>another server on 127.0.0.1</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def open_options(page):
    """The sheet's options (style, backend, day, count) are behind a disclosure."""
    if not page.evaluate("document.querySelector('#options').open"):
        page.click("#options summary")


def main():
    url, shots = sys.argv[1], sys.argv[2]
    slow = sys.argv[sys.argv.index("--slow-backend") + 1] if "--slow-backend" in sys.argv else None
    os.makedirs(shots, exist_ok=True)
    report = {"steps": [], "console_errors": [], "requests_elsewhere": [], "not_words": [], "axe": []}
    axe = Axe()
    origin = url.split("/#")[0]

    def shot(page, name):
        # axe-core on each view: every serious or critical violation, named by rule and element.
        for violation in axe.run(page).response["violations"]:
            if violation.get("impact") in ("serious", "critical"):
                for node in violation["nodes"]:
                    report["axe"].append(f"{name}: {violation['id']} ({violation['impact']}): {node['target']}: {node.get('failureSummary', '')}")
        path = os.path.join(shots, f"{len(report['steps']) + 1:02d}-{name}.png")
        page.screenshot(path=path, full_page=True)
        report["steps"].append({"step": name, "screenshot": path})
        # Every word on the page, the options of its selectors and their titles included.
        text = page.evaluate("""() => [document.body.innerText,
            ...Array.from(document.querySelectorAll('option, [title], [aria-label], img[alt]'))
                .map(e => [e.textContent, e.title, e.getAttribute('aria-label'), e.alt].filter(Boolean).join(' '))].join('\\n')""")
        for match in NOT_WORDS.finditer(text):
            around = text[max(0, match.start() - 40):match.end() + 40].replace("\n", " ")
            report["not_words"].append(f"{name}: {around}")

    def element_shot(selector, name):
        path = os.path.join(shots, f"{name}.png")
        page.locator(selector).screenshot(path=path)
        return path

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="en-US")
        page = context.new_page()
        page.on("console", lambda m: report["console_errors"].append(m.text) if m.type == "error" else None)
        # The page's own pictures are blob: URLs of its origin.
        page.on("request", lambda r: report["requests_elsewhere"].append(r.url)
                if not (r.url.startswith(origin) or r.url.startswith("blob:" + origin)) else None)
        page.set_default_timeout(STEP_MS)

        # An empty store shows the empty state.
        page.goto(url)
        wait_until(page, "window.studio && window.studio.ready")
        assert page.url == origin + "/", f"the token stays in the address bar: {page.url}"
        report["cookies"] = context.cookies()
        report["token_kept"] = page.evaluate("sessionStorage.getItem('badge-token') !== null")
        assert page.locator("#empty").is_visible(), "an empty store does not show the empty state"
        assert not page.locator("#current").is_visible(), "the empty store shows a badge"
        report["empty_text"] = page.locator("#empty").inner_text()
        shot(page, "empty-state")

        # The sheet opens, and a promise is typed.
        page.click("#new")
        page.wait_for_selector("#sheet[open]")
        assert page.evaluate("document.activeElement.id") == "promise-input", "the promise field does not have the focus"
        wait_until(page, "document.querySelector('#backend').options.length > 0 && !document.querySelector('#backend').disabled")
        report["backends"] = page.eval_on_selector_all("#backend option", "os => os.map(o => [o.value, o.disabled, o.textContent])")
        report["backend_note"] = page.evaluate("document.querySelector('#backend-note').textContent")
        page.fill("#promise-input", "Run a marathon before I turn forty")
        report["options_closed_at_first"] = not page.evaluate("document.querySelector('#options').open")
        open_options(page)
        page.select_option("#backend", "procedural")
        shot(page, "sheet-with-promise")

        # Four candidates appear; the third is picked.
        page.click("#generate")
        wait_until(page, "Object.values(window.studio.candidates).filter(s => s === 'ready').length === 4")
        wait_until(page, "Array.from(document.querySelectorAll('#candidates img')).every(i => i.complete && i.naturalWidth > 0)")
        report["candidates"] = page.eval_on_selector_all("#candidates .candidate", "bs => bs.map(b => b.querySelector('.label').textContent)")
        # Each candidate's picture as the page shows it, for the test to look at.
        report["candidate_shots"] = [element_shot(f".candidate[data-number='{n}'] img", f"candidate-{n}") for n in range(1, 5)]
        report["candidate_sources"] = page.eval_on_selector_all("#candidates img", "is => is.map(i => i.dataset.source)")
        report["candidate_urls"] = page.eval_on_selector_all("#candidates img", "is => is.map(i => i.currentSrc)")
        # The first one ready is in the large preview; a click chooses another, Done keeps it.
        wait_until(page, "window.studio.selected !== null && !document.querySelector('#done').disabled")
        shot(page, "four-candidates")
        page.click(".candidate[data-number='3']")
        report["chosen"] = page.evaluate("""() => ({ selected: window.studio.selected, open: document.querySelector('#sheet').open,
            preview: document.querySelector('#preview-image').alt, badge: window.studio.badge,
            pressed: Array.from(document.querySelectorAll('.candidate[aria-pressed=true]')).map(b => Number(b.dataset.number)) })""")
        page.click("#done")
        page.wait_for_selector("#sheet", state="hidden")
        wait_until(page, "window.studio.badge !== null")
        wait_until(page, "document.querySelector('#front').complete && document.querySelector('#front').naturalWidth > 0")

        # The main view shows it with the date.
        report["picked_id"] = page.evaluate("window.studio.badge")
        report["date"] = page.locator("#date").inner_text()
        report["promise"] = page.locator("#promise").inner_text()
        report["front_shot"] = element_shot("#front", "main-view-front")
        report["front_source"] = page.evaluate("document.querySelector('#front').dataset.source")
        report["front_url"] = page.evaluate("document.querySelector('#front').currentSrc")
        report["svg_download_shown"] = page.locator("#download-svg").is_visible()
        shot(page, "committed")

        # Download: the PNG of the badge shown.
        with page.expect_download() as download:
            page.click("#download")
        report["download"] = os.path.join(shots, "download.png")
        download.value.save_as(report["download"])
        report["download_name"] = download.value.suggested_filename
        # Followed another way ("Save link as", a middle click), the link still gives the picture:
        # it points at a blob: URL of it, which needs no token.
        wait_until(page, "document.querySelector('#download').href.startsWith('blob:')")
        report["download_href_scheme"] = page.evaluate("new URL(document.querySelector('#download').href).protocol")
        report["download_href_png"] = page.evaluate("""() => new Promise((done) => {
            const image = new Image();
            image.onload = () => done(image.naturalWidth > 0);
            image.onerror = () => done(false);
            image.src = document.querySelector('#download').href; })""")

        # The card reached with Tab, as a keyboard user reaches it: its focus ring, clipped with a
        # margin of FOCUS_PAD px around the card, for the test to measure.
        for _ in range(30):
            if page.evaluate("document.activeElement.id") == "card":
                break
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "card", "Tab never reached the card"
        box = page.locator("#card").bounding_box()
        report["focus_ring"] = os.path.join(shots, "card-focus.png")
        page.screenshot(path=report["focus_ring"], clip={"x": box["x"] - FOCUS_PAD, "y": box["y"] - FOCUS_PAD,
                                                         "width": box["width"] + 2 * FOCUS_PAD, "height": box["height"] + 2 * FOCUS_PAD})
        report["focus_pad"] = FOCUS_PAD

        # The card flips (Space on the focused card), with the spring's snap.
        page.focus("#card")
        page.keyboard.press("Space")
        wait_until(page, "window.card.state === 'back' && !window.card.animating")
        wait_until(page, "document.querySelector('#back').complete && document.querySelector('#back').naturalWidth > 0")
        report["flipped_face"] = page.evaluate("window.card.face")
        report["flip_duration"] = page.evaluate("window.card.motion && window.card.motion.duration")
        shot(page, "card-back")
        page.keyboard.press("Space")
        wait_until(page, "window.card.state === 'front' && !window.card.animating")

        # A second badge, with the keyboard alone, so there is an earlier one to restore.
        for _ in range(20):
            if page.evaluate("document.activeElement.id") == "new":
                break
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "new", "Tab never reaches New Badge"
        page.keyboard.press("Enter")
        page.wait_for_selector("#sheet[open]")
        # Reopened, the sheet is fresh: no promise, no candidates of the last time.
        report["reopened"] = page.evaluate("""() => ({ promise: document.querySelector('#promise-input').value,
            candidates: document.querySelectorAll('#candidates li').length, status: document.querySelector('#sheet-status').textContent })""")
        page.keyboard.type("Read twenty books")
        page.keyboard.press("Control+Enter")
        wait_until(page, "Object.values(window.studio.candidates).filter(s => s === 'ready').length === 4")
        # The first candidate ready took the focus; the arrows move the choice; a digit chooses; Enter keeps.
        wait_until(page, "window.studio.selected !== null", "a candidate in the preview")
        report["focus_when_ready"] = page.evaluate("document.activeElement.className")
        first = page.evaluate("Number(document.activeElement.dataset.number)")
        page.keyboard.press("ArrowRight")
        report["focus_after_arrow"] = [first, page.evaluate("Number(document.activeElement.dataset.number)")]
        page.keyboard.press("ArrowLeft")
        report["focus_after_arrow_back"] = page.evaluate("Number(document.activeElement.dataset.number)")
        page.keyboard.press("1")
        report["chosen_by_number"] = page.evaluate("[window.studio.selected, document.querySelector('#sheet').open]")
        page.keyboard.press("Enter")
        wait_until(page, f"window.studio.badge !== null && window.studio.badge !== '{report['picked_id']}'")
        report["second_id"] = page.evaluate("window.studio.badge")
        wait_until(page, f"(document.querySelector('#front').dataset.source || '').includes('{report['second_id']}')"
                         " && document.querySelector('#front').complete", "the second badge's picture")
        page.wait_for_selector(f"#history button[data-id='{report['picked_id']}']")
        shot(page, "history")

        # History restores the earlier badge.
        page.click(f"#history button[data-id='{report['picked_id']}']")
        wait_until(page, f"window.studio.badge === '{report['picked_id']}'")
        report["restored_id"] = page.evaluate("window.studio.badge")
        report["restored_promise"] = page.locator("#promise").inner_text()
        shot(page, "restored")

        # Cancel during a slow remote render commits nothing.
        if slow:
            page.click("#new")
            page.wait_for_selector("#sheet[open]")
            wait_until(page, "!document.querySelector('#backend').disabled")
            page.fill("#promise-input", "Learn the cello")
            open_options(page)
            page.select_option("#backend", slow)
            page.select_option("#count", "2")
            page.click("#generate")
            wait_until(page, "Object.values(window.studio.candidates).filter(s => s === 'working').length === 2")
            wait_until(page, "Array.from(document.querySelectorAll('#candidates .label')).every(l => /Working… [1-9]/.test(l.textContent))")
            report["working_labels"] = page.eval_on_selector_all("#candidates .label", "ls => ls.map(l => l.textContent)")
            shot(page, "slow-remote-working")
            # Cancel dismisses the sheet, stops the work and commits nothing.
            page.click("#cancel")
            page.wait_for_selector("#sheet", state="hidden")
            wait_until(page, "window.studio.jobStatus === 'cancelled'")
            report["cancel_status"] = page.locator("#status").inner_text()
            shot(page, "cancelled")
            report["after_cancel_id"] = page.evaluate("window.studio.badge")

        # With reduced motion, the card turns without the spring: at once.
        page.emulate_media(reduced_motion="reduce")
        page.focus("#card")
        page.keyboard.press("Space")
        report["reduced_motion_animating"] = page.evaluate("window.card.animating")
        report["reduced_motion_face"] = page.evaluate("window.card.state")
        page.keyboard.press("Space")
        page.emulate_media(reduced_motion="no-preference")

        # A phone-sized window: nothing wider than the screen; the sheet's head stays in view
        # as the sheet scrolls.
        page.set_viewport_size({"width": 390, "height": 844})
        wait_until(page, "document.documentElement.scrollWidth <= 390")
        shot(page, "phone")
        page.click("#new")
        page.wait_for_selector("#sheet[open]")
        page.fill("#promise-input", "Learn to juggle")
        page.click("#generate")
        wait_until(page, "Object.values(window.studio.candidates).filter(s => s === 'ready').length === 4")
        wait_until(page, "Array.from(document.querySelectorAll('#candidates img')).length === 4 && "
                         "Array.from(document.querySelectorAll('#candidates img')).every(i => i.complete && i.naturalWidth > 0)")
        page.evaluate("document.querySelector('#sheet').scrollTop = 1e6")
        report["phone_sheet"] = page.evaluate("""() => { const sheet = document.querySelector('#sheet').getBoundingClientRect();
            const head = document.querySelector('.sheet-head').getBoundingClientRect();
            return { scrolled: document.querySelector('#sheet').scrollTop, headTop: head.top - sheet.top, headBottom: head.bottom - sheet.top }; }""")
        shot(page, "phone-sheet-scrolled")
        page.keyboard.press("Escape")
        page.wait_for_selector("#sheet", state="hidden")
        page.set_viewport_size({"width": 1200, "height": 900})

        # A German browser: the page is in English throughout, its dates too.
        german = browser.new_context(viewport={"width": 1200, "height": 900}, locale="de-DE")
        deutsch = german.new_page()
        deutsch.goto(url)
        wait_until(deutsch, "window.studio && window.studio.ready && document.querySelector('#date').textContent")
        report["german"] = deutsch.evaluate("""() => ({ language: navigator.language, date: document.querySelector('#date').textContent,
            back: document.querySelector('#back').dataset.wanted })""")
        german.close()

        # Another server on 127.0.0.1, visited in the same tab: it receives nothing that
        # authenticates (a cookie would go to every port), nor can it read the token.
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        elsewhere = f"http://127.0.0.1:{server.server_address[1]}"
        report["requests_elsewhere"] = list(report["requests_elsewhere"])
        asked_before = len(report["requests_elsewhere"])
        page.goto(elsewhere + "/visited")
        report["elsewhere_storage"] = page.evaluate("sessionStorage.getItem('badge-token')")
        page.goto(origin + "/")
        wait_until(page, "window.studio && window.studio.ready")
        report["back_in_the_tab"] = page.evaluate("({ locked: !!window.studio.locked, badge: window.studio.badge })")
        # A new tab, the studio's address without the token: it asks for it.
        other = context.new_page()
        other.goto(origin + "/")
        wait_until(other, "window.studio && window.studio.ready")
        report["new_tab_locked"] = other.evaluate("!!window.studio.locked") and other.locator("#locked").is_visible()
        report["new_tab_text"] = other.locator("main").inner_text()
        shot(other, "new-tab-needs-the-token")
        server.shutdown()
        report["elsewhere_seen"] = Recorder.seen
        report["requests_elsewhere"] = report["requests_elsewhere"][:asked_before]
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # the step that failed, for the Swift test to print
        print(f"studio walkthrough failed: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
