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

  // The download links point at blob: URLs of the current badge, fetched
  // with the token, so that every way of following a link saves the
  // picture: a click, a middle click, "Save link as". Until one is ready,
  // a click fetches it first; a link the server does not answer stays so.
  async function prepareDownload(link, id) {
    const blob = await (await request(link.dataset.source, { headers: {} })).blob();
    if (studio.badge !== id) return;
    if (link.dataset.blob) URL.revokeObjectURL(link.dataset.blob);
    link.dataset.blob = URL.createObjectURL(blob);
    link.dataset.badge = id;
    link.href = link.dataset.blob;
  }

  async function download(event) {
    const link = event.currentTarget;
    if (link.dataset.blob && link.dataset.badge === studio.badge) return;
    event.preventDefault();
    try {
      await prepareDownload(link, studio.badge);
      link.click();
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
      if (changed) {
        for (const link of [$('download'), ...(badge.vector ? [$('download-svg')] : [])]) {
          prepareDownload(link, badge.id).catch(() => {});
        }
      }
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
