import BadgeCard
import NIOCore

/// The studio page: plain HTML, CSS and JavaScript, served from the binary,
/// loading nothing from another origin. The card (its springs, snap and
/// wiggle) is `badge card html`'s own script and style, served beside it.
enum StudioAssets {
    /// A file of the studio's as it is served: its bytes, type and tag.
    struct File: Sendable {
        let name: String
        let type: String
        let body: ByteBuffer
        /// A strong tag of the bytes (64-bit FNV-1a): it changes whenever they do.
        let etag: String

        init(_ name: String, type: String, _ text: String) {
            self.name = name
            self.type = type
            body = ByteBuffer(string: text)
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            let hex = String(hash, radix: 16)
            etag = "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
        }
    }

    static let pageFile = File("index.html", type: "text/html; charset=utf-8", page)
    /// What `/studio/NAME` serves; the card's are `badge card html`'s own.
    static let files = [
        File("studio.js", type: "text/javascript; charset=utf-8", script),
        File("studio.css", type: "text/css; charset=utf-8", style),
        File("card.js", type: "text/javascript; charset=utf-8", CardScript.script),
        File("card.css", type: "text/css; charset=utf-8", CardScript.style),
        File("icon.svg", type: "image/svg+xml", icon),
    ]

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The answer to `/?token=...`: a token in the query is sent to the
    /// server, logged by proxies and kept in the browser's history.
    static let tokenInQuery = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Promise Badge studio</title></head>
        <body><main><h1>The token goes after #, not ?</h1>
        <p>Open the address <code>badge serve</code> printed when it started: it ends in <code>#token=</code> and a long key,
        which the browser keeps to itself rather than send it anywhere.</p></main></body></html>

        """

    static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
        <title>Promise Badge</title>
        <link rel="icon" href="/studio/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/studio/card.css">
        <link rel="stylesheet" href="/studio/studio.css">
        </head>
        <body>
        <header class="bar">
          <h1>Promise Badge</h1>
          <button id="new" type="button" class="primary" aria-haspopup="dialog">New Badge</button>
        </header>
        <main id="main">
          <section id="locked" class="empty" hidden>
            <h2>This studio needs its token</h2>
            <p>Open the address <code>badge serve</code> printed when it started: it ends in <code>#token=</code> and a long key.
            The key keeps other pages and other people away from your badge; this tab keeps it until it is closed.</p>
          </section>
          <section id="empty" class="empty" hidden>
            <div class="placeholder" aria-hidden="true"></div>
            <h2>No badge yet</h2>
            <p>Describe your promise, see a few pictures of it, and keep the one you like.
            Press <strong>New Badge</strong>, or run <code>badge generate "A pair of dumbbells"</code>.</p>
          </section>
          <section id="current" class="current" hidden>
            <div class="card" id="card" role="button" tabindex="0" aria-pressed="false"
                 aria-label="Your Promise Badge. Tap it, or press Space, to turn it over.">
              <img class="face front" id="front" alt="" draggable="false">
              <img class="face back" id="back" alt="" draggable="false" hidden>
            </div>
            <p class="date" id="date"></p>
            <p class="promise" id="promise"></p>
            <p class="hint">Tap the badge, drag it, or press Space to turn it over.</p>
            <p class="actions"><a id="download" class="button" href="/api/badge.png?download=1" data-source="/api/badge.png?download=1" download="promise-badge.png">Download PNG</a>
              <a id="download-svg" class="button" href="/api/badge.svg?download=1" data-source="/api/badge.svg?download=1" download="promise-badge.svg" hidden>Download SVG</a></p>
          </section>
          <section id="earlier" class="earlier" hidden>
            <h2>Earlier badges</h2>
            <ul id="history" class="history"></ul>
          </section>
          <p id="status" class="status" role="status" aria-live="polite"></p>
        </main>

        <dialog id="sheet" class="sheet" aria-labelledby="sheet-title">
          <form id="form" novalidate>
            <div class="sheet-head">
              <button type="button" id="cancel" class="plain">Cancel</button>
              <h2 id="sheet-title">New Promise Badge</h2>
              <button type="button" id="done" class="primary" disabled aria-keyshortcuts="Enter">Done</button>
            </div>
            <figure class="preview" id="preview">
              <div class="stage"><img id="preview-image" alt="" hidden>
                <p id="preview-empty" class="stage-hint">Describe your promise below and press Generate: the candidates appear here.</p></div>
              <figcaption><span id="preview-label"></span><span id="preview-note" class="caption-note"></span></figcaption>
            </figure>
            <ol id="candidates" class="candidates" aria-label="Candidates"></ol>
            <p id="sheet-status" class="status" role="status" aria-live="polite"></p>
            <label for="promise-input" class="promise-label">Your promise</label>
            <div class="prompt-row">
              <textarea id="promise-input" name="promise" rows="2" maxlength="1000" placeholder="A pair of dumbbells (Ctrl+Enter generates)"
                        aria-keyshortcuts="Control+Enter"></textarea>
              <button type="submit" id="generate" class="primary">Generate</button>
            </div>
            <details id="steps">
              <summary>Compose it step by step</summary>
              <div class="grid">
                <label>Purpose <input name="purpose" autocomplete="off" placeholder="Run a marathon"></label>
                <label>Vibe <input name="vibe" list="vibes" autocomplete="off" placeholder="joyful"></label>
                <label>Metaphor <input name="metaphor" list="metaphors" autocomplete="off" placeholder="path"></label>
                <label>Colours <input name="colors" list="colors" autocomplete="off" placeholder="coral, teal"></label>
              </div>
              <datalist id="vibes"></datalist><datalist id="metaphors"></datalist><datalist id="colors"></datalist>
            </details>
            <details id="options">
              <summary>Options: style, backend, day to begin, candidates</summary>
              <div class="grid">
                <label>Style <select name="style" id="style"><option value="">Varied</option></select></label>
                <label>Backend <select name="backend" id="backend"></select></label>
                <label>Day to begin <input type="date" name="date" id="day"></label>
                <label>Candidates <select name="count" id="count"></select></label>
              </div>
              <p id="backend-note" class="note" aria-live="polite"></p>
            </details>
          </form>
        </dialog>
        <script src="/studio/card.js"></script>
        <script src="/studio/studio.js"></script>
        </body>
        </html>

        """

    /// A medal: a gold disc in a darker rim, with a star.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" fill="#b8860b"/>\
        <circle cx="32" cy="32" r="24" fill="#f4c542"/><path d="M32 16l4.7 9.6 10.6 1.5-7.7 7.5 1.8 10.5L32 40.1l-9.4 5 1.8-10.5-7.7-7.5 \
        10.6-1.5z" fill="#fff8e1"/></svg>

        """

    static let style = #"""
        [hidden] { display: none !important; }
        body { display: block; place-items: initial; }
        .bar {
          display: flex; align-items: center; justify-content: space-between; gap: 12px;
          padding: 12px max(16px, env(safe-area-inset-left)); position: sticky; top: 0;
          background: color-mix(in srgb, Canvas 80%, transparent); backdrop-filter: blur(12px); z-index: 1;
        }
        .bar h1 { margin: 0; font-size: 1.15rem; }
        main { max-width: 720px; margin: 0 auto; }
        button, .button, select, input, textarea { font: inherit; }
        button, .button {
          border: 1px solid color-mix(in srgb, currentColor 25%, transparent); border-radius: 10px; padding: 8px 14px;
          background: color-mix(in srgb, Canvas 92%, currentColor); color: inherit; cursor: pointer; text-decoration: none;
          display: inline-block; min-height: 44px;
        }
        button:disabled { opacity: .45; cursor: default; }
        button.primary { background: #0062cc; border-color: #0062cc; color: #fff; font-weight: 600; }
        button.plain { background: transparent; border-color: transparent; }
        :focus-visible { outline: 3px solid #0a84ff; outline-offset: 2px; }
        .empty { text-align: center; max-width: 30rem; padding: 32px 8px; }
        .placeholder {
          width: min(60vw, 240px); aspect-ratio: 1; margin: 0 auto 16px; border-radius: 50%;
          border: 3px dashed color-mix(in srgb, currentColor 30%, transparent);
        }
        .current { display: grid; justify-items: center; gap: 8px; }
        .date { margin: 0; font-size: 1.05rem; font-weight: 600; }
        .actions { margin: 4px 0 0; }
        .earlier { width: 100%; }
        .earlier h2 { font-size: 1rem; margin: 24px 0 8px; }
        .history { list-style: none; padding: 0; margin: 0; display: grid; gap: 8px; }
        .history li { display: grid; grid-template-columns: 56px 1fr auto; align-items: center; gap: 12px; text-align: left; }
        .history img { width: 56px; height: 56px; border-radius: 8px; }
        .history .what { display: grid; }
        .history .when { font-size: .85rem; opacity: .7; }
        .status { min-height: 1.4em; margin: 8px 0; }
        .status.error { color: #d70015; }
        @media (prefers-color-scheme: dark) { .status.error { color: #ff6961; } }
        .sheet {
          width: min(860px, 100vw - 16px); max-height: calc(100dvh - 16px); border: none; border-radius: 16px; padding: 16px 20px;
          background: Canvas; color: CanvasText; box-shadow: 0 24px 60px rgba(0, 0, 0, .35);
        }
        .sheet::backdrop { background: rgba(0, 0, 0, .35); }
        /* The sheet's head stays in view as its body scrolls (on a phone, most of it). */
        .sheet-head {
          display: grid; grid-template-columns: 1fr auto 1fr; align-items: center; position: sticky; top: -16px; z-index: 1;
          margin: -16px -20px 0; padding: 12px 20px; background: Canvas;
          border-bottom: 1px solid color-mix(in srgb, currentColor 12%, transparent);
        }
        .sheet-head h2 { margin: 0; font-size: 1.1rem; text-align: center; }
        .sheet-head #cancel { justify-self: start; }
        .sheet-head #done { justify-self: end; }
        .preview { margin: 14px 0 0; display: grid; justify-items: center; gap: 6px; }
        .stage {
          width: min(400px, 100%, 46dvh); aspect-ratio: 1; border-radius: 24px; display: grid; place-items: center;
          background: color-mix(in srgb, currentColor 6%, transparent);
        }
        .stage img { width: 100%; height: 100%; object-fit: contain; }
        .stage-hint { max-width: 18rem; text-align: center; opacity: .75; margin: 0; padding: 16px; }
        .preview figcaption { display: grid; justify-items: center; gap: 2px; font-size: .9rem; min-height: 1.3em; text-align: center; }
        .promise-label { margin-top: 6px; }
        .prompt-row { display: grid; grid-template-columns: 1fr auto; gap: 10px; align-items: end; }
        .sheet label { display: grid; gap: 4px; font-size: .9rem; }
        .sheet textarea, .sheet input, .sheet select {
          width: 100%; padding: 8px 10px; border-radius: 8px; min-height: 40px;
          border: 1px solid color-mix(in srgb, currentColor 30%, transparent); background: Field; color: FieldText;
        }
        .sheet textarea { font-size: 1.05rem; resize: vertical; }
        .sheet details { margin: 10px 0; }
        .sheet summary { cursor: pointer; padding: 6px 0; }
        .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin-top: 10px; }
        .note { font-size: .85rem; opacity: .8; margin: 6px 0 0; min-height: 1.2em; }
        .buttons { display: flex; gap: 10px; margin-top: 12px; }
        /* The strip of candidates under the preview. */
        .candidates { list-style: none; padding: 4px; margin: 10px 0 0; display: flex; justify-content: center; gap: 10px; overflow-x: auto; }
        .candidates li { flex: 0 0 120px; }
        .candidate {
          width: 100%; padding: 6px; display: grid; gap: 4px; justify-items: center; border-radius: 14px; position: relative;
        }
        .candidate[aria-pressed="true"] { border: 3px solid #0062cc; padding: 4px; }
        .candidate .picture {
          width: 100%; aspect-ratio: 1; border-radius: 10px; display: grid; place-items: center;
          background: color-mix(in srgb, currentColor 6%, transparent);
        }
        .candidate img { width: 100%; height: 100%; object-fit: contain; }
        .candidate .number {
          position: absolute; top: 8px; left: 8px; min-width: 26px; height: 26px; border-radius: 13px; display: grid; place-items: center;
          background: rgba(0, 0, 0, .6); color: #fff; font-size: .85rem; font-weight: 700;
        }
        .candidate .label { font-size: .8rem; text-align: center; overflow-wrap: anywhere; }
        .candidate[data-status="failed"] .label { color: #d70015; }
        .caption-note { display: block; font-size: .8rem; line-height: 1.25; color: #8a4b00; }
        .candidate .caption-note { text-align: left; }
        .caption-note:empty { display: none; }
        @media (prefers-color-scheme: dark) { .caption-note { color: #ffb340; } }
        .candidate[data-status="ready"]:hover { border-color: #0a84ff; }
        .spinner {
          width: 36px; height: 36px; border-radius: 50%; border: 4px solid color-mix(in srgb, currentColor 20%, transparent);
          border-top-color: #0a84ff; animation: spin 1s linear infinite;
        }
        @keyframes spin { to { transform: rotate(360deg); } }
        @media (prefers-reduced-motion: reduce) { .spinner { animation: none; border-top-color: color-mix(in srgb, currentColor 20%, transparent); } }
        @media (max-width: 480px) {
          .sheet { padding: 12px; border-radius: 12px; }
          .sheet-head { top: -12px; margin: -12px -12px 0; padding: 10px 12px; }
          .candidates { justify-content: flex-start; }
          .candidates li { flex-basis: 88px; }
          .candidate .label, .candidate .caption-note { display: none; }
          .history li { grid-template-columns: 44px 1fr auto; }
          .history img { width: 44px; height: 44px; }
        }
        """#

    static let script = #"""
        (() => {
          'use strict';
          const $ = (id) => document.getElementById(id);
          const card = window.card;
          const sheet = $('sheet'), form = $('form');
          // For scripts and tests: what the page shows and is doing.
          const studio = window.studio = { ready: false, badge: null, job: null, candidates: {}, error: null };
          let backends = null, events = null, ticking = null;

          // The token comes in the address's fragment (#token=...), which the browser
          // never sends; this tab keeps it in sessionStorage, which no other origin (no
          // other port) can read, and it goes to this server in X-Badge-Token alone.
          const token = (() => {
            const given = /^#token=([0-9A-Za-z._~%-]+)$/.exec(location.hash);
            if (given) {
              sessionStorage.setItem('badge-token', decodeURIComponent(given[1]));
              history.replaceState(null, '', location.pathname);
            }
            return sessionStorage.getItem('badge-token');
          })();

          function locked() {
            sessionStorage.removeItem('badge-token');
            for (const id of ['empty', 'current', 'earlier']) $(id).hidden = true;
            $('new').hidden = true;
            $('locked').hidden = false;
            studio.locked = true;
          }

          async function request(path, init) {
            init.headers = Object.assign({ 'X-Badge-Token': token }, init.headers);
            init.credentials = 'omit';
            const response = await fetch(path, init);
            if (response.ok) return response;
            const data = await response.json().catch(() => null);
            const e = data && data.error;
            if (response.status === 401 && e && e.code === 'token') locked();
            throw new Error(e ? e.message + (e.hint ? ' (' + e.hint + ')' : '') : 'the server answered ' + response.status);
          }

          async function api(path, body) {
            const init = { method: body === undefined ? 'GET' : 'POST', headers: {} };
            if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
            return (await request(path, init)).json();
          }

          // A picture of the API, fetched with the token, as a blob: URL; the one an
          // element showed before is let go. data-source names what it shows.
          const shown = new WeakMap();
          async function picture(element, path, attribute) {
            element.dataset.wanted = path;
            const url = URL.createObjectURL(await (await request(path, { headers: {} })).blob());
            // Asked for something else meanwhile: that one will be shown.
            if (element.dataset.wanted !== path) { URL.revokeObjectURL(url); return; }
            if (shown.has(element)) URL.revokeObjectURL(shown.get(element));
            shown.set(element, url);
            element.dataset.source = path;
            element[attribute || 'src'] = url;
          }

          function say(id, text, isError) {
            const el = $(id);
            el.textContent = text || '';
            el.classList.toggle('error', !!isError);
            if (isError) studio.error = text;
          }

          // The page is in English throughout, its dates too: in the browser's own
          // English (en-GB: 1 January 2027), else en-US's.
          const english = /^en(-|$)/i.test(navigator.language || '') ? navigator.language : 'en-US';

          // The commitment date as a long date, on the calendar day of the time
          // zone the promise was made in.
          function longDate(badge) {
            const date = new Date(badge.commitmentDate);
            try { return new Intl.DateTimeFormat(english, { dateStyle: 'long', timeZone: badge.timeZone }).format(date); }
            catch (_) { return new Intl.DateTimeFormat(english, { dateStyle: 'long' }).format(date); }
          }

          // A badge the art engine can draw again is shown as its SVG, sharp at
          // any zoom and on any screen; should the SVG not come, its PNG.
          function showImage(img, vector, png) {
            img.onerror = null;
            const asPNG = () => { img.onerror = null; picture(img, png).catch((e) => say('status', e.message, true)); };
            if (vector) {
              img.onerror = asPNG;
              picture(img, vector).catch(asPNG);
            } else {
              asPNG();
            }
          }

          // A download of the API's: fetched with the token, then saved from a blob: URL.
          async function download(event) {
            event.preventDefault();
            const link = event.currentTarget;
            try {
              const url = URL.createObjectURL(await (await request(link.dataset.source, { headers: {} })).blob());
              const save = document.createElement('a');
              save.href = url;
              save.download = link.getAttribute('download');
              document.body.append(save);
              save.click();
              save.remove();
              setTimeout(() => URL.revokeObjectURL(url), 60_000);
            } catch (e) {
              say('status', e.message, true);
            }
          }

          function show(state) {
            const badge = state.badge;
            $('empty').hidden = !!badge;
            $('current').hidden = !badge;
            if (badge) {
              const changed = studio.badge !== badge.id;
              const date = longDate(badge);
              showImage($('front'), badge.vector, badge.image);
              $('download-svg').hidden = !badge.vector;
              $('front').alt = 'Promise Badge: ' + badge.promise;
              picture($('back'), '/api/badge/back.png?locale=' + encodeURIComponent(english) + '&v=' + badge.id)
                .catch((e) => say('status', e.message, true));
              $('back').alt = 'Commitment Date: ' + date;
              $('date').textContent = date;
              $('promise').textContent = badge.promise;
              if (changed && card) card.reset();
            }
            studio.badge = badge ? badge.id : null;
            studio.date = badge ? $('date').textContent : null;
            const list = $('history');
            list.replaceChildren(...state.history.map((entry) => {
              const item = document.createElement('li');
              const picture = document.createElement('img');
              showImage(picture, null, entry.image);
              picture.alt = '';
              const what = document.createElement('span');
              what.className = 'what';
              const promise = document.createElement('span');
              promise.textContent = entry.promise;
              const when = document.createElement('span');
              when.className = 'when';
              when.textContent = longDate(entry);
              what.append(promise, when);
              const restore = document.createElement('button');
              restore.type = 'button';
              restore.textContent = 'Restore';
              restore.dataset.id = entry.id;
              restore.setAttribute('aria-label', 'Restore ' + entry.promise + ', ' + when.textContent);
              restore.addEventListener('click', () => act(() => api('/api/restore', { id: entry.id }), 'Restored an earlier badge.'));
              item.append(picture, what, restore);
              return item;
            }));
            $('earlier').hidden = state.history.length === 0;
          }

          async function act(work, done) {
            try {
              show(await work());
              say('status', done);
            } catch (e) {
              say('status', e.message, true);
            }
          }

          function fillOptions(state) {
            const options = (id, values) => $(id).replaceChildren(...values.map((v) => { const o = document.createElement('option'); o.value = v; return o; }));
            options('vibes', state.vibes);
            options('metaphors', state.metaphors);
            options('colors', state.colors);
            const style = $('style');
            for (const name of state.styles) { const o = document.createElement('option'); o.value = name; o.textContent = name; style.append(o); }
            const count = $('count');
            for (const n of state.counts) { const o = document.createElement('option'); o.value = n; o.textContent = n; o.defaultSelected = o.selected = n === state.count; count.append(o); }
            $('backend').dataset.default = state.defaultBackend;
          }

          async function loadBackends() {
            const select = $('backend');
            select.replaceChildren(new Option('Checking the backends…', ''));
            select.disabled = true;
            try {
              backends = await api('/api/backends');
            } catch (e) {
              say('backend-note', e.message, true);
              return;
            }
            select.replaceChildren(...backends.map((b) => {
              const o = new Option(b.name + (b.available ? '' : ' (unavailable)'), b.name);
              o.disabled = !b.available;
              o.defaultSelected = o.selected = b.name === select.dataset.default && b.available;
              return o;
            }));
            select.disabled = false;
            describeBackend();
          }

          function describeBackend() {
            const chosen = backends && backends.find((b) => b.name === $('backend').value);
            const missing = (backends || []).filter((b) => !b.available)
              .map((b) => b.name + ': ' + (b.reason || 'the server gave no reason') + (b.hint ? ' (' + b.hint + ')' : ''));
            const lines = [];
            // "procedural is ready.", "photos (import) is ready.": the type when the name is not it.
            if (chosen) lines.push(chosen.name + (chosen.name === chosen.type ? '' : ' (' + chosen.type + ')') + ' is ready.');
            if (missing.length) lines.push('Unavailable: ' + missing.join('; '));
            say('backend-note', lines.join(' '));
            const style = $('style');
            style.disabled = !!chosen && chosen.styles.length === 0;
            if (style.disabled) style.value = '';
          }

          // The sheet opens fresh: no promise, options at their defaults, no candidates
          // (closing it cancelled any that were being made).
          function openSheet() {
            if (events) { events.abort(); events = null; }
            clearInterval(ticking);
            ticking = null;
            form.reset();
            clearCandidates();
            studio.job = null;
            studio.jobStatus = null;
            $('generate').disabled = false;
            say('sheet-status', '');
            if (!sheet.open) sheet.showModal();
            if (!backends) loadBackends(); else describeBackend();
            $('promise-input').focus();
          }

          // Cancel (or Esc) dismisses the sheet and commits nothing; work under way stops.
          function closeSheet() {
            const stopping = studio.job && !studio.jobStatus;
            const made = Object.keys(studio.candidates).length > 0;
            stopJob();
            if (events) { events.abort(); events = null; }
            clearInterval(ticking);
            ticking = null;
            if (stopping) studio.jobStatus = 'cancelled';
            studio.job = null;
            if (sheet.open) sheet.close();
            if (stopping || made) say('status', 'Cancelled. Nothing was committed.');
            $('new').focus();
          }

          // The candidates of the last time go, and the blob: URLs of their pictures.
          function clearCandidates() {
            for (const img of $('candidates').querySelectorAll('img')) if (shown.has(img)) URL.revokeObjectURL(shown.get(img));
            $('candidates').replaceChildren();
            studio.candidates = {};
            studio.selected = null;
            $('done').disabled = true;
            $('preview-image').hidden = true;
            $('preview-image').removeAttribute('src');
            $('preview-empty').hidden = false;
            $('preview-label').textContent = '';
            $('preview-note').textContent = '';
          }

          // The candidate in the preview, the one Done keeps.
          function select(number, focus) {
            const button = candidate(number);
            if (!button || studio.candidates[number] !== 'ready') return;
            studio.selected = number;
            for (const other of $('candidates').querySelectorAll('.candidate')) other.setAttribute('aria-pressed', String(other === button));
            const thumbnail = button.querySelector('img');
            const preview = $('preview-image');
            preview.src = thumbnail.src;
            preview.alt = 'Candidate ' + number + ': ' + button.dataset.described;
            preview.hidden = false;
            $('preview-empty').hidden = true;
            $('preview-label').textContent = 'Candidate ' + number + ' · ' + button.querySelector('.label').textContent;
            $('preview-note').textContent = button.dataset.note ? button.dataset.note[0].toUpperCase() + button.dataset.note.slice(1) + '.' : '';
            $('done').disabled = false;
            if (focus) button.focus();
          }

          function tile(number) {
            const item = document.createElement('li');
            const button = document.createElement('button');
            button.type = 'button';
            button.className = 'candidate';
            button.disabled = true;
            button.dataset.number = number;
            button.dataset.status = 'working';
            const picture = document.createElement('span');
            picture.className = 'picture';
            const spinner = document.createElement('span');
            spinner.className = 'spinner';
            picture.append(spinner);
            const badge = document.createElement('span');
            badge.className = 'number';
            badge.textContent = number;
            const label = document.createElement('span');
            label.className = 'label';
            label.textContent = 'Waiting…';
            const note = document.createElement('span');
            note.className = 'caption-note';
            button.append(picture, badge, label, note);
            button.setAttribute('aria-pressed', 'false');
            button.addEventListener('click', () => select(number));
            item.append(button);
            return item;
          }

          function candidate(number) { return $('candidates').querySelector('[data-number="' + number + '"]'); }

          function update(event) {
            const button = candidate(event.number);
            if (!button) return;
            const label = button.querySelector('.label');
            studio.candidates[event.number] = event.status;
            button.dataset.status = event.status;
            if (event.status === 'working') {
              button.dataset.since = String(performance.now() - event.seconds * 1000);
              label.textContent = 'Working… ' + event.seconds.toFixed(1) + ' s';
            } else if (event.status === 'ready') {
              const picture = button.querySelector('.picture');
              const image = document.createElement('img');
              showImage(image, event.vector, event.image);
              image.alt = '';
              picture.replaceChildren(image);
              const described = [event.style, event.fallbackFrom ? 'by ' + event.backend + ' instead' : null].filter(Boolean).join(', ');
              label.textContent = (described || 'Ready') + ' · ' + event.seconds.toFixed(1) + ' s';
              // A caption not drawn whole says so on the candidate, in short; the preview says why.
              const note = event.captionNote || '';
              button.querySelector('.caption-note').textContent = !note ? '' : note.startsWith('the caption was shortened') ? 'Caption shortened'
                : note.includes('without some of its letters') ? 'Some letters missing' : 'No caption';
              button.dataset.note = note;
              button.disabled = false;
              button.dataset.described = described || 'ready';
              button.setAttribute('aria-label', 'Candidate ' + event.number + (described ? ', ' + described : '')
                + (event.captionNote ? '. ' + event.captionNote : ''));
              // The first one ready goes into the preview, and takes the focus from the form,
              // so the arrows, a number and Enter work at once.
              image.addEventListener('load', () => {
                if (studio.selected !== null) return;
                const focus = sheet.contains(document.activeElement) && !document.activeElement.matches('.candidate');
                select(event.number, focus);
              }, { once: true });
            } else if (event.status === 'failed') {
              button.querySelector('.picture').replaceChildren();
              label.textContent = 'Failed after ' + event.seconds.toFixed(1) + ' s: ' + event.message + (event.hint ? ' (' + event.hint + ')' : '');
            }
          }

          function tick() {
            const now = performance.now();
            for (const button of $('candidates').querySelectorAll('[data-status="working"][data-since]')) {
              button.querySelector('.label').textContent = 'Working… ' + ((now - Number(button.dataset.since)) / 1000).toFixed(1) + ' s';
            }
          }

          function finished(done) {
            if (events) { events.abort(); events = null; }
            clearInterval(ticking);
            ticking = null;
            $('generate').disabled = false;
            studio.jobStatus = done.status;
            for (const button of $('candidates').querySelectorAll('[data-status="working"]')) {
              button.dataset.status = done.status === 'cancelled' ? 'cancelled' : 'failed';
              studio.candidates[button.dataset.number] = button.dataset.status;
              button.querySelector('.picture').replaceChildren();
              button.querySelector('.label').textContent = done.status === 'cancelled' ? 'Cancelled' : 'Not made';
            }
            if (done.status === 'cancelled') say('sheet-status', 'Stopped. Nothing was committed.');
            else if (done.status === 'failed') say('sheet-status', done.message + (done.hint ? ' (' + done.hint + ')' : ''), true);
            else say('sheet-status', 'Choose the one that keeps your promise (click it, or its number, or the arrows), then Done.');
          }

          function stopJob() {
            const job = studio.job;
            if (!job || studio.jobStatus) return;
            api('/api/jobs/' + job + '/cancel', {}).catch(() => {});
          }

          async function generate(event) {
            event.preventDefault();
            stopJob();
            const data = new FormData(form);
            const text = (name) => String(data.get(name) || '').trim();
            const colors = text('colors').split(/\s*(?:,|&|\band\b)\s*/i).filter(Boolean);
            const body = {
              promise: text('promise'), purpose: text('purpose'), vibe: text('vibe'), metaphor: text('metaphor'), colors,
              style: text('style'), backend: text('backend'), date: text('date'),
              timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, count: Number(text('count')) || 4,
            };
            if (!body.promise && !body.purpose) { say('sheet-status', 'Describe your promise first.', true); $('promise-input').focus(); return; }
            say('sheet-status', 'Making candidates…');
            clearCandidates();
            studio.jobStatus = null;
            let started;
            try {
              started = await api('/api/generate', body);
            } catch (e) {
              say('sheet-status', e.message, true);
              return;
            }
            studio.job = started.job;
            $('candidates').replaceChildren(...Array.from({ length: body.count }, (_, i) => tile(i + 1)));
            $('generate').disabled = true;
            ticking = setInterval(tick, 100);
            follow(started.events, { candidate: update, done: finished });
          }

          // The job's Server-Sent Events, read from a fetch (an EventSource cannot send
          // the token): each "event: NAME" and "data: JSON" block goes to its handler.
          async function follow(path, handlers) {
            const controller = events = new AbortController();
            const lost = () => { if (events === controller && !studio.jobStatus) finished({ status: 'failed', message: 'the connection to badge serve was lost' }); };
            try {
              const response = await request(path, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
              const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
              let buffer = '';
              for (;;) {
                const { value, done } = await reader.read();
                if (done) break;
                buffer = (buffer + value).replace(/\r\n?/g, '\n');
                let end;
                while ((end = buffer.indexOf('\n\n')) >= 0) {
                  const block = buffer.slice(0, end);
                  buffer = buffer.slice(end + 2);
                  let name = 'message';
                  const data = [];
                  for (const line of block.split('\n')) {
                    if (line.startsWith('event:')) name = line.slice(6).trim();
                    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
                  }
                  if (handlers[name] && data.length) handlers[name](JSON.parse(data.join('\n')));
                }
              }
              lost();
            } catch (e) {
              if (e.name !== 'AbortError') lost();
            }
          }

          async function pick(number) {
            const job = studio.job;
            if (!job || studio.candidates[number] !== 'ready') return;
            say('sheet-status', 'Committing candidate ' + number + '…');
            try {
              const state = await api('/api/jobs/' + job + '/pick', { number });
              studio.job = null;
              if (sheet.open) sheet.close();
              show(state);
              say('status', 'Committed your Promise Badge.');
              $('card').focus();
            } catch (e) {
              say('sheet-status', e.message, true);
            }
          }

          $('new').addEventListener('click', openSheet);
          $('download').addEventListener('click', download);
          $('download-svg').addEventListener('click', download);
          $('cancel').addEventListener('click', closeSheet);
          $('done').addEventListener('click', () => { if (studio.selected !== null) pick(studio.selected); });
          $('backend').addEventListener('change', describeBackend);
          form.addEventListener('submit', generate);
          // Ctrl+Enter (or ⌘+Enter) in the promise generates, as in a chat box.
          $('promise-input').addEventListener('keydown', (e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
          });
          // Without a keyboard (a phone), the placeholder does not speak of Ctrl+Enter.
          if (matchMedia('(pointer: coarse)').matches) $('promise-input').placeholder = 'A pair of dumbbells';
          // Esc closes the sheet (the dialog's own cancel), which cancels the work.
          sheet.addEventListener('cancel', (e) => { e.preventDefault(); closeSheet(); });
          sheet.addEventListener('keydown', (e) => {
            if (e.altKey || e.ctrlKey || e.metaKey) return;
            const target = e.target;
            if (target.matches('input, textarea, select')) return;
            const number = Number(e.key);
            if (number >= 1 && number <= 9 && candidate(number)) { e.preventDefault(); select(number, true); return; }
            // On a candidate: the arrows move the choice between those ready, Enter keeps it.
            if (!target.matches('.candidate')) return;
            if (e.key === 'Enter') { e.preventDefault(); select(Number(target.dataset.number)); if (studio.selected !== null) pick(studio.selected); return; }
            const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
            if (step) {
              const ready = Array.from($('candidates').querySelectorAll('.candidate:not(:disabled)'));
              const next = ready[(ready.indexOf(target) + step + ready.length) % ready.length];
              if (next) { e.preventDefault(); select(Number(next.dataset.number), true); }
            }
          });

          (async () => {
            if (!token) { locked(); studio.ready = true; return; }
            try {
              const state = await api('/api/state');
              fillOptions(state);
              show(state);
            } catch (e) {
              say('status', e.message, true);
            }
            studio.ready = true;
          })();
        })();
        """#
}
