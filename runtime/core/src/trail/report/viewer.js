// The trace viewer of report.html (docs/trace.md). A trail's trace is loaded when opened, by adding
// a <script> for its trace.js (a page on file:// cannot fetch a JSON file), which calls
// trailblazeTrace(session, trace). Every text of a trace is set with textContent: a page's console
// or a request's body may hold markup. Every file it names is taken relative to the trace's folder,
// and one that names a scheme or an absolute path is not loaded (the report makes no request off
// its folder).
(function () {
  'use strict';
  // Without a prototype: a session named `constructor` is a session like any other.
  const traces = Object.create(null);   // folder -> trace, once loaded
  const pending = Object.create(null);  // session -> folder being loaded
  let view = null;     // { dir, trace, items, sel, when, whole, tab }
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function plain(p) {
    return typeof p === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(p) && !/^[\/\\]/.test(p) && p.indexOf('\\') < 0;
  }
  function rel(dir, p) {
    if (!plain(dir) || !plain(p) || p === '') return null;
    return dir ? dir + '/' + p : p;
  }
  function ms(v) {
    if (typeof v !== 'number' || !isFinite(v)) return '';
    return v >= 1000 ? (v / 1000).toFixed(2) + ' s' : v.toFixed(1) + ' ms';
  }
  function bytes(v) {
    if (typeof v !== 'number' || v < 0) return '';
    return v >= 1024 ? (v / 1024).toFixed(1) + ' KiB' : v + ' B';
  }
  function json(v) { try { return JSON.stringify(v); } catch (e) { return String(v); } }
  const num = (v) => (typeof v === 'number' && isFinite(v) ? v : null);

  window.trailblazeTrace = function (session, trace) {
    // A session folder's own report names no session (its folder is the page's): the one asked for.
    const key = session in pending ? session : '' in pending ? '' : null;
    if (key === null || !trace || typeof trace !== 'object') return;
    const dir = pending[key];
    delete pending[key];
    traces[dir] = prepare(trace);
    show(dir);
  };

  // Each step followed by its calls (nested ones too, in the order the step lists them).
  function prepare(t) {
    const bySeq = {};
    (Array.isArray(t.calls) ? t.calls : []).forEach((c) => { if (c) bySeq[c.seq] = c; });
    const items = [];
    (Array.isArray(t.steps) ? t.steps : []).forEach((s) => {
      if (!s) return;
      const calls = (Array.isArray(s.calls) ? s.calls : []).map((q) => bySeq[q]).filter(Boolean);
      s._calls = calls;
      items.push({ step: s, call: null });
      calls.forEach((c) => items.push({ step: s, call: c }));
    });
    t._items = items;
    return t;
  }

  function open(button) {
    const dir = button.getAttribute('data-dir') || '';
    const session = button.getAttribute('data-session') || '';
    if (traces[dir]) { show(dir); return; }
    if (rel(dir, 'trace.js') === null) return;
    pending[session] = dir;
    const src = rel(dir, 'trace.js');
    if (src === null) return;
    const s = document.createElement('script');
    s.src = src;
    s.onerror = () => {
      delete pending[session];
      window.alert('The trace could not be loaded from ' + s.src + ': `trailblaze report` writes trace.js from trace.json.');
    };
    document.head.appendChild(s);
  }

  function show(dir) {
    const t = traces[dir];
    view = { dir, trace: t, items: t._items, sel: 0, when: 'before', whole: false, tab: 'network' };
    const trail = t.trail || {};
    $('tv-title').textContent = trail.title || trail.id || trail.file || t.session || 'trace';
    const status = t.outcome && t.outcome.status ? String(t.outcome.status) : '';
    const o = $('tv-outcome');
    o.textContent = status.replace('_', ' ');
    o.className = 'badge ' + status.replace('_', '-');
    $('tv-meta').textContent = [t.device, t.platform, ms(num(t.duration_ms))].filter(Boolean).join(' · ');
    $('tv-whole').checked = false;
    timeline();
    $('tv').hidden = false;
    document.body.classList.add('tv-open');
    // The failed step first: that is what one opens a trace for.
    const failed = view.items.findIndex((it) => !it.call && it.step.outcome && it.step.outcome.status === 'failed');
    select(failed >= 0 ? failed : 0);
    $('tv-items').focus();
  }

  function close() {
    $('tv').hidden = true;
    document.body.classList.remove('tv-open');
    const v = $('tv-video-el');
    if (v) v.pause();
    view = null;
  }

  function timeline() {
    const list = $('tv-items');
    clear(list);
    view.items.forEach((it, i) => {
      const li = el('li', it.call ? 'tv-item tv-call' : 'tv-item tv-step');
      li.setAttribute('data-index', String(i));
      if (it.call) {
        li.style.paddingLeft = (14 + 12 * (num(it.call.depth) || 0)) + 'px';
        li.appendChild(el('code', null, it.call.tool));
        if (it.call.ok === false) li.classList.add('failed');
        li.appendChild(el('span', 't', ms(num(it.call.duration_ms))));
      } else {
        const s = it.step;
        const st = s.outcome && s.outcome.status ? String(s.outcome.status) : '';
        li.classList.add(st.replace('_', '-'));
        li.appendChild(el('span', 'num', s.number === 0 ? 'Trailhead' : 'Step ' + s.number));
        li.appendChild(el('span', 'text', s.text));
        li.appendChild(el('span', 't', ms(num(s.duration_ms))));
      }
      list.appendChild(li);
    });
    const scrub = $('tv-scrub');
    scrub.max = String(Math.max(0, view.items.length - 1));
  }

  // The call whose point and target a step shows: the innermost failed call that looked or acted
  // (a scripted tool's failing tap, not the tool), else its first failed, else its last that acted.
  function focusCall(it) {
    if (it.call) return it.call;
    const calls = it.step._calls || [];
    const last = calls.slice().reverse();
    return last.find((c) => c.ok === false && (c.target || c.point)) ||
      calls.find((c) => c.ok === false) || last.find((c) => c.point || c.target) || null;
  }

  function frameIndex(it, when) {
    if (it.call) {
      const other = when === 'before' ? 'after' : 'before';
      return num(it.call[when]) !== null ? it.call[when] : num(it.call[other]);
    }
    const calls = it.step._calls || [];
    const pick = (list, key) => { const c = list.find((x) => num(x[key]) !== null); return c ? c[key] : null; };
    return when === 'before'
      ? (pick(calls, 'before') ?? pick(calls.slice().reverse(), 'after'))
      : (pick(calls.slice().reverse(), 'after') ?? pick(calls, 'before'));
  }

  function select(i) {
    if (!view || !view.items.length) return;
    i = Math.max(0, Math.min(view.items.length - 1, i));
    view.sel = i;
    document.querySelectorAll('#tv-items li.sel').forEach((li) => li.classList.remove('sel'));
    const li = document.querySelector('#tv-items li[data-index="' + i + '"]');
    if (li) { li.classList.add('sel'); li.scrollIntoView({ block: 'nearest' }); }
    $('tv-scrub').value = String(i);
    render();
  }

  // The selection: its item, the frame shown (before or after) and the call it marks.
  function current() {
    const it = view.items[view.sel];
    const fi = frameIndex(it, view.when);
    const frames = Array.isArray(view.trace.frames) ? view.trace.frames : [];
    return { it, frame: (fi === null ? null : frames[fi]) || null, call: focusCall(it) };
  }

  function render() {
    const c = current();
    $('tv-before').classList.toggle('on', view.when === 'before');
    $('tv-after').classList.toggle('on', view.when === 'after');
    screen(c.frame, c.call);
    tree(c.frame, c.call);
    detail(c.it);
    panel();
  }

  // Bounds [left, top, right, bottom] in device pixels, placed on the shown image in percent.
  function place(box, b, size) {
    if (!Array.isArray(b) || b.length !== 4 || !size || !(size.x > 0) || !(size.y > 0)) { box.hidden = true; return; }
    box.style.left = (b[0] / size.x * 100) + '%';
    box.style.top = (b[1] / size.y * 100) + '%';
    box.style.width = (Math.max(0, b[2] - b[0]) / size.x * 100) + '%';
    box.style.height = (Math.max(0, b[3] - b[1]) / size.y * 100) + '%';
    box.hidden = false;
  }

  function frameSize(frame) {
    if (frame && frame.size && frame.size.x > 0 && frame.size.y > 0) return frame.size;
    const img = $('tv-img');
    return img.naturalWidth > 0 ? { x: img.naturalWidth, y: img.naturalHeight } : null;
  }

  function screen(frame, call) {
    const img = $('tv-img');
    const src = frame ? rel(view.dir, frame.screen) : null;
    $('tv-shot').hidden = !src;
    $('tv-noscreen').hidden = !!src;
    $('tv-hover').hidden = true;
    if (!src) return;
    if (img.getAttribute('src') !== src) img.setAttribute('src', src);
    const size = frameSize(frame);
    const point = call && call.point;
    const p = $('tv-point');
    if (point && num(point.x) !== null && num(point.y) !== null && size) {
      p.style.left = (point.x / size.x * 100) + '%';
      p.style.top = (point.y / size.y * 100) + '%';
      p.title = 'acted at (' + point.x + ', ' + point.y + ')';
      p.hidden = false;
    } else {
      p.hidden = true;
    }
    const target = call && call.target;
    const box = $('tv-box');
    const near = target && Array.isArray(target.candidates) ? target.candidates[0] : null;
    const b = target && target.matched ? target.matched.bounds : near ? near.bounds : null;
    box.className = 'tv-box ' + (target && target.matched ? 'matched' : 'candidate');
    place(box, b, size);
  }

  function tree(frame, call) {
    const out = $('tv-tree');
    clear(out);
    const t = view.trace;
    const tr = frame && t.trees ? t.trees[frame.tree] : null;
    view.nodes = {};
    if (!tr) { out.appendChild(el('div', 'meta', 'no tree at this moment')); return; }
    (Array.isArray(tr.nodes) ? tr.nodes : []).forEach((n) => { if (n && n.ref) view.nodes[n.ref] = n; });
    const target = call && call.target;
    const matched = target && target.matched ? target.matched.ref : null;
    const near = target && !target.matched && Array.isArray(target.candidates) && target.candidates[0] ? target.candidates[0].ref : null;
    const q = $('tv-search').value.toLowerCase();
    let mark = null;
    String(tr.text || '').split('\n').forEach((line) => {
      const d = el('div', 'tv-line', line);
      const m = /^\s*\[([^\]\s]+)\]/.exec(line);
      if (m) d.setAttribute('data-ref', m[1]);
      if (m && m[1] === matched) { d.classList.add('matched'); mark = d; }
      if (m && m[1] === near) { d.classList.add('candidate'); mark = mark || d; }
      if (q && line.toLowerCase().indexOf(q) < 0) d.hidden = true;
      out.appendChild(d);
    });
    if (mark) mark.scrollIntoView({ block: 'nearest' });
  }

  function hover(line) {
    const box = $('tv-hover');
    const ref = line ? line.getAttribute('data-ref') : null;
    const node = ref && view && view.nodes ? view.nodes[ref] : null;
    if (!node) { box.hidden = true; return; }
    place(box, node.bounds, frameSize(current().frame));
  }

  function row(list, label, value, cls) {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(el('dt', null, label));
    list.appendChild(el('dd', cls || null, value));
  }

  function detail(it) {
    const out = $('tv-detail');
    clear(out);
    const s = it.step;
    const head = el('div', 'tv-head');
    head.appendChild(el('span', 'num', s.number === 0 ? 'Trailhead' : 'Step ' + s.number));
    head.appendChild(el('span', 'kind', s.kind));
    head.appendChild(el('span', null, s.text));
    out.appendChild(head);
    const dl = el('dl');
    out.appendChild(dl);
    const c = it.call;
    if (!c) {
      row(dl, 'outcome', s.outcome && s.outcome.status);
      row(dl, 'line', s.line);
      row(dl, 'took', ms(num(s.duration_ms)));
      row(dl, 'calls', (s._calls || []).map((x) => x.tool).join(', '));
      row(dl, 'error', s.error, 'error');
      const f = focusCall(it);
      if (f && f.target) { row(dl, 'looked', f.tool); target(dl, f); }
      return;
    }
    row(dl, 'call', c.tool + ' ' + json(c.args));
    row(dl, 'outcome', c.ok === false ? 'failed' : 'ok', c.ok === false ? 'ko' : 'ok');
    row(dl, 'error', c.error, 'error');
    target(dl, c);
    timeSplit(out, dl, c);
  }

  // The selector a call looked for, and what it matched or the nearest nodes when nothing did.
  function target(dl, c) {
    if (c.target) {
      row(dl, 'selector', json(c.target.selector));
      if (c.target.matched) {
        row(dl, 'matched', '[' + c.target.matched.ref + '] ' + json(c.target.matched.bounds));
      } else {
        row(dl, 'matched', 'nothing', 'ko');
        const ol = el('ol', 'tv-candidates');
        (Array.isArray(c.target.candidates) ? c.target.candidates : []).forEach((k) => {
          const li = el('li', null, '[' + k.ref + '] ' + json(k.text) + (num(k.score) !== null ? ' · score ' + k.score.toFixed(2) : '') + (k.why ? ' · ' + k.why : ''));
          ol.appendChild(li);
        });
        if (ol.firstChild) { dl.appendChild(el('dt', null, 'nearest')); const dd = el('dd'); dd.appendChild(ol); dl.appendChild(dd); }
      }
    }
    if (c.point) row(dl, 'point', '(' + c.point.x + ', ' + c.point.y + ')');
  }

  // Where the call's time went: the device, its script, waits, and the host's own work (the rest).
  function timeSplit(out, dl, c) {
    const total = num(c.duration_ms) || 0;
    const tm = c.time || {};
    const parts = [['device', num(tm.device_ms) || 0], ['script', num(tm.script_ms) || 0], ['wait', num(tm.wait_ms) || 0]];
    const host = Math.max(0, total - parts.reduce((a, p) => a + p[1], 0));
    parts.push(['host', host]);
    row(dl, 'time', ms(total) + ': ' + parts.map((p) => p[0] + ' ' + ms(p[1])).join(', '));
    const bar = el('div', 'tv-split');
    parts.forEach((p) => {
      const seg = el('span', 'seg ' + p[0]);
      seg.style.flexGrow = String(p[1]);
      seg.title = p[0] + ' ' + ms(p[1]);
      bar.appendChild(seg);
    });
    if (total > 0) out.appendChild(bar);
    (Array.isArray(c.console) ? c.console : []).forEach((l) => out.appendChild(el('div', 'tv-log', '[' + (l.level || '') + '] ' + (l.text || ''))));
  }

  // The selected step's span of time, in which its requests and log lines fall.
  function windowOf() {
    const s = view.items[view.sel].step;
    const from = num(s.started_unix_ms);
    if (from === null) return null;
    return [from, from + (num(s.duration_ms) || 0)];
  }
  function within(t, w) {
    if (view.whole) return true;
    if (!w || num(t) === null) return false;
    return t >= w[0] && t <= w[1];
  }
  function at(t) {
    const start = num(view.trace.started_unix_ms);
    return num(t) === null || start === null ? '' : '+' + ms(t - start);
  }

  function panel() {
    const out = $('tv-panel');
    clear(out);
    const t = view.trace;
    const w = windowOf();
    const net = (Array.isArray(t.network) ? t.network : []).filter((e) => e && within(e._unix_ms, w));
    const cons = (Array.isArray(t.console) ? t.console : []).filter((l) => l && within(l.unix_ms, w));
    const dev = (Array.isArray(t.device_log) ? t.device_log : []).filter((l) => l && within(l.unix_ms, w));
    const step = view.items[view.sel].step;
    const agent = (Array.isArray(t.agent) ? t.agent : []).filter((a) => a && (view.whole || a.step === step.number));
    const counts = { network: net.length, console: cons.length, devicelog: dev.length, agent: agent.length };
    document.querySelectorAll('#tv-tabs button[data-tab]').forEach((b) => {
      const k = b.getAttribute('data-tab');
      b.classList.toggle('on', k === view.tab);
      const n = b.querySelector('.n');
      if (n) n.textContent = k in counts ? ' ' + counts[k] : '';
    });
    if (view.tab === 'network') network(out, net);
    else if (view.tab === 'console') lines(out, cons, 'no console line');
    else if (view.tab === 'devicelog') lines(out, dev, 'no device log line');
    else if (view.tab === 'agent') turns(out, agent);
    else video(out);
  }

  function network(out, entries) {
    if (!entries.length) { out.appendChild(el('div', 'meta', 'no request')); return; }
    const table = el('table', 'tv-net');
    const head = el('tr');
    ['method', 'URL', 'status', 'time', 'size'].forEach((h) => head.appendChild(el('th', null, h)));
    table.appendChild(head);
    entries.forEach((e) => {
      const req = e.request || {};
      const res = e.response || {};
      const status = num(res.status);
      const failed = status === null || status === 0 || status >= 400 || !!(e._failure || res._failureText);
      const tr = el('tr', failed ? 'failed' : null);
      const size = num(res.content && res.content.size) ?? num(res.bodySize);
      [req.method, req.url, status === null ? '' : status, ms(num(e.time)), bytes(size)].forEach((v) => tr.appendChild(el('td', null, v)));
      table.appendChild(tr);
      if (failed) {
        const body = (res.content && res.content.text) || e._failure || res._failureText || '';
        if (body) {
          const br = el('tr', 'body');
          const td = el('td');
          td.colSpan = 5;
          td.appendChild(el('pre', null, body));
          br.appendChild(td);
          table.appendChild(br);
        }
      }
    });
    out.appendChild(table);
  }

  function lines(out, list, none) {
    if (!list.length) { out.appendChild(el('div', 'meta', none)); return; }
    const ol = el('ol', 'tv-lines');
    list.forEach((l) => {
      const li = el('li', 'lvl-' + String(l.level || '').toLowerCase());
      li.appendChild(el('span', 't', at(l.unix_ms)));
      li.appendChild(el('span', 'lvl', l.level));
      li.appendChild(el('span', 'src', l.source));
      li.appendChild(el('span', 'text', l.text));
      ol.appendChild(li);
    });
    out.appendChild(ol);
  }

  function turns(out, agent) {
    if (!agent.length) { out.appendChild(el('div', 'meta', 'no agent turn')); return; }
    agent.forEach((a) => {
      out.appendChild(el('div', 'tv-agent-head', 'step ' + a.step + ' · ' + (a.provider || '') + ' · ' + (a.model || '')));
      (Array.isArray(a.turns) ? a.turns : []).forEach((turn, i) => {
        const d = el('div', 'tv-turn');
        d.appendChild(el('div', 'meta', 'turn ' + (i + 1) + ' ' + at(turn.unix_ms) + ' · ' + ms(num(turn.duration_ms)) + ' · ' + (turn.input_tokens || 0) + ' tokens in, ' + (turn.output_tokens || 0) + ' out' + (num(turn.cost_usd) !== null ? ' · $' + turn.cost_usd.toFixed(4) : '')));
        const rq = turn.request || {};
        const src = rel(view.dir, rq.image);
        if (src) { const img = el('img', 'tv-thumb'); img.alt = 'the screen sent'; img.setAttribute('src', src); d.appendChild(img); }
        if (rq.text) d.appendChild(el('pre', 'request', rq.text));
        const an = turn.answer || {};
        if (an.text) d.appendChild(el('pre', 'answer', an.text));
        (Array.isArray(an.tool_calls) ? an.tool_calls : []).forEach((c) => d.appendChild(el('code', 'tool-call', c.tool + ' ' + json(c.args))));
        out.appendChild(d);
      });
    });
  }

  // The moment the selection shows: its call's start, else its step's.
  function moment() {
    const it = view.items[view.sel];
    return num(it.call && it.call.started_unix_ms) ?? num(it.step.started_unix_ms);
  }

  function video(out) {
    const v = view.trace.video;
    const when = moment();
    if (v && v.file && rel(view.dir, v.file)) {
      const ve = el('video');
      ve.id = 'tv-video-el';
      ve.controls = true;
      ve.muted = true;
      ve.preload = 'metadata';
      ve.setAttribute('src', rel(view.dir, v.file));
      const start = num(v.started_unix_ms) ?? num(view.trace.started_unix_ms);
      const to = when !== null && start !== null ? Math.max(0, (when - start) / 1000) : 0;
      ve.setAttribute('data-seek', String(to));
      const seek = () => { try { ve.currentTime = to; } catch (e) { /* not seekable yet */ } };
      ve.addEventListener('loadedmetadata', seek);
      seek();
      out.appendChild(ve);
      return;
    }
    const frames = v && Array.isArray(v.frames) ? v.frames.filter((f) => f && rel(view.dir, f.file)) : [];
    if (!frames.length) { out.appendChild(el('div', 'meta', 'no video')); return; }
    let best = frames[0];
    if (when !== null) frames.forEach((f) => { if (Math.abs(f.unix_ms - when) < Math.abs(best.unix_ms - when)) best = f; });
    const img = el('img', 'tv-frame');
    img.id = 'tv-video-frame';
    img.alt = 'the video at ' + at(best.unix_ms);
    img.setAttribute('src', rel(view.dir, best.file));
    out.appendChild(img);
    out.appendChild(el('div', 'meta', at(best.unix_ms)));
  }

  document.addEventListener('click', (e) => {
    const b = e.target.closest ? e.target.closest('button.open-trace') : null;
    if (b) { e.preventDefault(); open(b); return; }
    if (!view) return;
    const li = e.target.closest('#tv-items li[data-index]');
    if (li) { select(Number(li.getAttribute('data-index'))); return; }
    const tab = e.target.closest('#tv-tabs button[data-tab]');
    if (tab) { view.tab = tab.getAttribute('data-tab'); panel(); return; }
    if (e.target.id === 'tv-before' || e.target.id === 'tv-after') { view.when = e.target.id.slice(3); render(); return; }
    if (e.target.id === 'tv-close') close();
  });
  document.addEventListener('keydown', (e) => {
    if (!view) return;
    if (e.key === 'Escape') { close(); e.stopPropagation(); return; }
    // The search box types, and the slider moves itself (its input event selects).
    if (e.target && (e.target.id === 'tv-search' || e.target.id === 'tv-scrub')) return;
    const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[e.key];
    if (step) { e.preventDefault(); select(view.sel + step); }
    else if (e.key === 'Home') { e.preventDefault(); select(0); }
    else if (e.key === 'End') { e.preventDefault(); select(view.items.length - 1); }
  });
  document.addEventListener('mouseover', (e) => {
    if (!view || !e.target.closest) return;
    if (e.target.closest('#tv-tree')) hover(e.target.closest('.tv-line'));
  });
  document.addEventListener('input', (e) => {
    if (!view) return;
    if (e.target.id === 'tv-scrub') select(Number(e.target.value));
    else if (e.target.id === 'tv-search') { const c = current(); tree(c.frame, c.call); }
  });
  document.addEventListener('change', (e) => {
    if (view && e.target.id === 'tv-whole') { view.whole = e.target.checked; panel(); }
  });
  // The tree's outline follows the image when it loads at another size.
  document.addEventListener('load', (e) => {
    if (view && e.target.id === 'tv-img') { const c = current(); screen(c.frame, c.call); }
  }, true);
}());
