// Trailblaze's page agent: runs in an isolated world of each frame (the page's scripts cannot see or
// change it), captures the frame's visible elements with their ARIA role, accessible name and
// states, and acts on the elements of the last capture by index. Every loop is bounded: the page
// controls the DOM, so depth, node count and text length are capped.
(() => {
  const MAX_TEXT = 300;
  const MAX_DEPTH = 256;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE', 'svg']);
  const FROM_CONTENT = new Set(['button', 'link', 'heading', 'tab', 'option', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem', 'cell', 'columnheader', 'rowheader', 'tooltip', 'checkbox', 'radio', 'switch',
    'summary', 'legend', 'caption']);
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'combobox', 'checkbox', 'radio', 'switch',
    'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'slider', 'spinbutton', 'treeitem', 'listbox']);
  const FORM = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset']);
  const st = { gen: 0, els: [], roots: [], secret: new WeakSet(), rects: [] };

  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const cap = (s) => { s = norm(s); return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) + '…' : s; };

  function inputRole(el) {
    const t = (el.getAttribute('type') || 'text').toLowerCase();
    switch (t) {
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
      case 'button': case 'submit': case 'reset': case 'image': return 'button';
      case 'hidden': return 'none';
      case 'file': return 'button';
      case 'color': case 'date': case 'datetime-local': case 'month': case 'time': case 'week': return 'textbox';
      default: return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
  }

  function implicitRole(el) {
    const tag = el.localName;
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : 'generic';
      case 'button': return 'button';
      case 'input': return inputRole(el);
      case 'select': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return 'listitem';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'header': return el.closest('article,aside,main,nav,section') ? 'generic' : 'banner';
      case 'footer': return el.closest('article,aside,main,nav,section') ? 'generic' : 'contentinfo';
      case 'aside': return 'complementary';
      case 'form': return 'form';
      case 'section': return (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby')) ? 'region' : 'generic';
      case 'article': return 'article';
      case 'table': return 'table';
      case 'thead': case 'tbody': case 'tfoot': return 'rowgroup';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'img': return el.getAttribute('alt') === '' ? 'presentation' : 'img';
      case 'dialog': return 'dialog';
      case 'p': return 'paragraph';
      case 'details': return 'group';
      case 'summary': return 'button';
      case 'fieldset': return 'group';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'hr': return 'separator';
      case 'output': return 'status';
      case 'iframe': case 'frame': return 'iframe';
      case 'blockquote': return 'blockquote';
      case 'dl': return 'list';
      case 'dt': case 'dd': return 'listitem';
      case 'figure': return 'figure';
      case 'label': return 'label';
      case 'strong': return 'strong';
      case 'em': return 'emphasis';
      case 'code': return 'code';
      case 'body': return 'document';
      default: return el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable ? 'textbox' : 'generic';
    }
  }

  function roleOf(el) {
    const r = el.getAttribute('role');
    if (r) {
      const t = r.trim().split(/\s+/)[0].toLowerCase();
      if (t) return t;
    }
    return implicitRole(el);
  }

  // The text of an element's subtree as a name reads it (hidden parts left out, bounded). `null` on
  // the stack stands for the space a block element puts around its text.
  function subtreeText(el, budget, skip) {
    const parts = [];
    let len = 0;
    let n = 0;
    const stack = [el];
    while (stack.length && n < budget && len < MAX_TEXT * 2) {
      const node = stack.pop();
      n++;
      if (node === null) { parts.push(' '); continue; }
      if (node.nodeType === 3) { parts.push(node.data); len += node.data.length; continue; }
      if (node.nodeType !== 1 || SKIP.has(node.nodeName) || node === skip) continue;
      let block = false;
      if (node !== el) {
        if (node.getAttribute('aria-hidden') === 'true') continue;
        const cs = getComputedStyle(node);
        if (cs.display === 'none' || cs.visibility === 'hidden') continue;
        const al = node.getAttribute('aria-label');
        if (al && al.trim()) { parts.push(' ', al, ' '); len += al.length; continue; }
        if (node.localName === 'img') { parts.push(' ', node.getAttribute('alt') || '', ' '); continue; }
        if (node.localName === 'input' && node.type !== 'hidden') { parts.push(' ', node.value || '', ' '); continue; }
        block = !(cs.display || '').startsWith('inline');
      }
      const kids = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
      if (block) stack.push(null);
      for (let i = Math.min(kids.length, 1000) - 1; i >= 0; i--) stack.push(kids[i]);
      if (block) stack.push(null);
    }
    return parts.join('');
  }

  function byIds(el, attr) {
    const ids = (el.getAttribute(attr) || '').trim().split(/\s+/).filter(Boolean).slice(0, 16);
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids) {
      const t = (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
      if (t) parts.push(t.getAttribute('aria-label') || subtreeText(t, 500));
    }
    return norm(parts.join(' '));
  }

  function labelText(el) {
    const parts = [];
    if (el.labels) for (const l of Array.from(el.labels).slice(0, 4)) parts.push(subtreeText(l, 500, el));
    return norm(parts.join(' '));
  }

  function nameOf(el, role) {
    let n = byIds(el, 'aria-labelledby');
    if (n) return n;
    n = norm(el.getAttribute('aria-label'));
    if (n) return n;
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (tag === 'input' && (t === 'button' || t === 'submit' || t === 'reset')) {
        return norm(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      }
      if (tag === 'input' && t === 'image') return norm(el.getAttribute('alt'));
      n = labelText(el);
      if (n) return n;
      return norm(el.getAttribute('title') || el.getAttribute('placeholder'));
    }
    if (tag === 'img' || tag === 'area') return norm(el.getAttribute('alt') || el.getAttribute('title'));
    if (tag === 'fieldset') { const l = el.querySelector(':scope > legend'); if (l) return norm(subtreeText(l, 500)); }
    if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) return norm(subtreeText(c, 500)); }
    if (tag === 'figure') { const c = el.querySelector(':scope > figcaption'); if (c) return norm(subtreeText(c, 500)); }
    if (FROM_CONTENT.has(role)) { n = norm(subtreeText(el, 2000)); if (n) return n; }
    return norm(el.getAttribute('title'));
  }

  function ownText(el) {
    let t = '';
    let i = 0;
    for (let c = el.firstChild; c && i < 512; c = c.nextSibling, i++) if (c.nodeType === 3) t += c.data;
    return t ? norm(t) : '';
  }

  function deepActive() {
    let a = document.activeElement;
    if (!a || a === document.body || a === document.documentElement) return null;
    for (let i = 0; i < 64 && a && a.shadowRoot && a.shadowRoot.activeElement; i++) a = a.shadowRoot.activeElement;
    return a;
  }

  function checkedOf(el, role) {
    const ac = el.getAttribute('aria-checked');
    if (ac === 'true') return true;
    if (ac === 'false') return false;
    if (ac === 'mixed') return 'mixed';
    if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return el.indeterminate ? 'mixed' : el.checked;
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') return false;
    return undefined;
  }

  function valueOf(el, role) {
    if (st.secret.has(el)) return el.value || el.textContent ? '***' : '';
    const tag = el.localName;
    if (tag === 'input') {
      const t = (el.type || '').toLowerCase();
      if (t === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 8)) : '';
      if (t === 'checkbox' || t === 'radio' || t === 'button' || t === 'submit' || t === 'reset' || t === 'image' || t === 'file') return undefined;
      return el.value;
    }
    if (tag === 'textarea') return el.value;
    if (tag === 'select') {
      const o = el.selectedOptions;
      return o && o.length ? norm(Array.from(o).slice(0, 8).map((x) => x.label || x.text).join(', ')) : '';
    }
    if (role === 'textbox' && el.isContentEditable) return el.textContent;
    const vn = el.getAttribute('aria-valuenow');
    if (vn !== null) return el.getAttribute('aria-valuetext') || vn;
    return undefined;
  }

  function editable(el, role) {
    if (el.localName === 'input') return role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton';
    if (el.localName === 'textarea') return true;
    return !!el.isContentEditable;
  }

  // One capture of this frame: visible elements in tree order, each with its parent's index.
  function capture(opts) {
    const max = Math.max(1, Math.min(opts.max || 5000, 100000));
    st.gen = opts.gen;
    st.els = [];
    st.roots = [document];
    st.rects = [];
    st.index = null;
    const out = [];
    const active = deepActive();
    const vw = innerWidth, vh = innerHeight;
    let truncated = 0;
    // [node, parentIndex, depth, insideNamedByContent, nthChild, inShadowRootTop, parentSkipped, clip]
    const stack = [];
    const body = document.body || document.documentElement;
    if (body) stack.push([body, -1, 0, false, 1, false, false, null]);
    while (stack.length) {
      const [el, parent, depth, named, nth, shadowTop, skipped, clip] = stack.pop();
      if (out.length >= max) { truncated++; continue; }
      if (SKIP.has(el.nodeName)) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'none') continue;
      if (el.getAttribute('aria-hidden') === 'true') continue;
      const r = el.getBoundingClientRect();
      // Clipped away by an ancestor's `overflow: hidden` (a zero-size box that hides its content).
      const clipped = clip && (r.right <= clip[0] || r.bottom <= clip[1] || r.left >= clip[2] || r.top >= clip[3]);
      const hidden = clipped || cs.visibility === 'hidden' || cs.visibility === 'collapse' || (r.width === 0 && r.height === 0 && cs.display !== 'contents');
      let inner = clip;
      if ((cs.overflowX === 'hidden' || cs.overflowX === 'clip') && (cs.overflowY === 'hidden' || cs.overflowY === 'clip')) {
        inner = [Math.max(r.left, clip ? clip[0] : -Infinity), Math.max(r.top, clip ? clip[1] : -Infinity),
          Math.min(r.right, clip ? clip[2] : Infinity), Math.min(r.bottom, clip ? clip[3] : Infinity)];
      }
      let idx = parent;
      let role = null;
      if (!hidden || el.localName === 'body') {
        role = roleOf(el);
        if (role === 'none' && el.localName === 'input') continue;
        idx = st.els.length;
        st.els.push(el);
        st.rects.push([r.x, r.y, r.width, r.height]);
        const n = { p: parent, r: role, t: el.localName, k: nth, b: [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)] };
        if (shadowTop) n.sr = 1;
        if (skipped) n.sk = 1;
        const name = cap(nameOf(el, role));
        if (name) n.n = name;
        const own = cap(ownText(el));
        if (own) n.o = own;
        if (named) n.in = 1;
        const id = el.getAttribute('id');
        if (id) n.id = id.slice(0, MAX_TEXT);
        const tid = el.getAttribute('data-testid') || el.getAttribute('data-test-id') || el.getAttribute('data-test');
        if (tid) n.ti = tid.slice(0, MAX_TEXT);
        const desc = byIds(el, 'aria-describedby') || norm(el.getAttribute('aria-description'));
        if (desc) n.d = cap(desc);
        const ph = el.getAttribute('placeholder');
        if (ph) n.h = cap(ph);
        if (role === 'heading') {
          const al = parseInt(el.getAttribute('aria-level') || '', 10);
          n.l = al > 0 ? al : (/^h[1-6]$/.test(el.localName) ? +el.localName[1] : 2);
        }
        const c = checkedOf(el, role);
        if (c !== undefined) n.c = c;
        const ex = el.getAttribute('aria-expanded');
        if (ex === 'true' || ex === 'false') n.x = ex === 'true';
        else if (el.localName === 'details') n.x = el.open;
        if ((FORM.has(el.localName) && el.matches(':disabled')) || el.getAttribute('aria-disabled') === 'true') n.dis = 1;
        if (el === active) n.f = 1;
        const sel = el.getAttribute('aria-selected');
        if (sel === 'true' || (el.localName === 'option' && el.selected)) n.s = 1;
        if (editable(el, role)) n.e = 1;
        if (el.localName === 'input' && (el.type || '').toLowerCase() === 'password') n.pw = 1;
        const v = valueOf(el, role);
        if (v !== undefined && v !== null) n.v = cap(String(v));
        if (INTERACTIVE.has(role) || el.hasAttribute('onclick') || cs.cursor === 'pointer') n.ck = 1;
        const oy = cs.overflowY;
        if ((oy === 'auto' || oy === 'scroll') && el.scrollHeight > el.clientHeight + 1) n.sc = 1;
        if (el.localName === 'iframe' || el.localName === 'frame') {
          n.fr = el.__tbFrame || '';
          n.cb = [Math.round(r.x + el.clientLeft + (parseFloat(cs.paddingLeft) || 0)), Math.round(r.y + el.clientTop + (parseFloat(cs.paddingTop) || 0))];
        }
        if (r.bottom < 0 || r.right < 0 || r.top > vh || r.left > vw) n.off = 1;
        out.push(n);
      }
      if (depth >= MAX_DEPTH) { truncated++; continue; }
      const inNamed = named || (role !== null && FROM_CONTENT.has(role));
      const kids = [];
      let k = 0;
      for (let ch = el.firstElementChild; ch && kids.length < 10000; ch = ch.nextElementSibling) { k++; kids.push([ch, k, false]); }
      if (el.shadowRoot) {
        st.roots.push(el.shadowRoot);
        let j = 0;
        for (let ch = el.shadowRoot.firstElementChild; ch && j < 10000; ch = ch.nextElementSibling) { j++; kids.push([ch, j, true]); }
      }
      if (el.localName === 'slot' && el.assignedElements) {
        for (const ch of el.assignedElements().slice(0, 1000)) kids.push([ch, 0, false]);
      }
      const gone = idx === parent && role === null;
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i][0], idx, depth + 1, inNamed, kids[i][1], kids[i][2], gone || kids[i][1] === 0, inner]);
    }
    return { gen: st.gen, url: location.href, title: document.title.slice(0, MAX_TEXT), w: vw, h: vh, nodes: out, truncated };
  }

  const el = (i, gen) => {
    if (gen !== st.gen) return null;
    const e = st.els[i];
    return e && e.isConnected ? e : null;
  };

  // Scrolls the element into view and tells whether it can be acted on: visible, enabled (when
  // asked), stable (the same box as at capture, or across an animation frame) and the top element
  // at its centre. Returns {x, y} (the centre, in this frame's viewport) or {why}.
  async function actionable(i, gen, opts) {
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    const r0 = e.getBoundingClientRect();
    if (r0.top < 0 || r0.left < 0 || r0.bottom > innerHeight || r0.right > innerWidth) {
      e.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
    const cs = getComputedStyle(e);
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || cs.visibility !== 'visible') return { why: 'not visible (hidden or zero-size)' };
    if (opts.enabled && (e.matches(':disabled') || e.getAttribute('aria-disabled') === 'true')) return { why: 'disabled' };
    if (opts.editable && !(e.isContentEditable || ((e.localName === 'input' || e.localName === 'textarea') && !e.readOnly))) {
      return { why: 'not editable' };
    }
    const running = e.getAnimations ? e.getAnimations().some((a) => a.playState === 'running') : false;
    const prev = st.rects[i];
    const same = prev && Math.abs(prev[0] - r.x) < 1 && Math.abs(prev[1] - r.y) < 1 && Math.abs(prev[2] - r.width) < 1 && Math.abs(prev[3] - r.height) < 1;
    if (running || (!same && !opts.scrolled)) {
      const r2 = await new Promise((res) => requestAnimationFrame(() => res(e.getBoundingClientRect())));
      if (Math.abs(r2.x - r.x) >= 1 || Math.abs(r2.y - r.y) >= 1 || Math.abs(r2.width - r.width) >= 1 || Math.abs(r2.height - r.height) >= 1) {
        st.rects[i] = [r2.x, r2.y, r2.width, r2.height];
        return { why: 'not stable (moving or animating)' };
      }
    }
    const x = r.x + r.width / 2, y = r.y + r.height / 2;
    if (opts.hit) {
      let top = document.elementFromPoint(x, y);
      for (let d = 0; d < 32 && top && top.shadowRoot; d++) {
        const inner = top.shadowRoot.elementFromPoint(x, y);
        if (!inner || inner === top) break;
        top = inner;
      }
      if (top && top !== e && !e.contains(top) && !(top.getRootNode().host && e.contains(top.getRootNode().host))) {
        const what = top.localName + (top.id ? '#' + top.id : '') + (top.className && typeof top.className === 'string' ? '.' + top.className.trim().split(/\s+/).slice(0, 2).join('.') : '');
        return { why: 'covered by another element (' + what.slice(0, 80) + ')' };
      }
    }
    return { x, y };
  }

  function focus(i, gen, clear) {
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    e.focus();
    if (clear) {
      if (typeof e.select === 'function' && (e.localName === 'input' || e.localName === 'textarea')) {
        e.select();
      } else if (e.isContentEditable) {
        const range = document.createRange();
        range.selectNodeContents(e);
        const s = getSelection();
        s.removeAllRanges();
        s.addRange(range);
      }
    } else if (typeof e.setSelectionRange === 'function' && e.value !== undefined) {
      try { e.setSelectionRange(e.value.length, e.value.length); } catch (_) { /* not a text input */ }
    }
    return { ok: 1, focused: deepActive() === e };
  }

  function clear(i, gen) {
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    if (e.value !== undefined && e.localName !== 'select') {
      e.value = '';
      e.dispatchEvent(new Event('input', { bubbles: true }));
      e.dispatchEvent(new Event('change', { bubbles: true }));
    } else if (e.isContentEditable) {
      e.textContent = '';
      e.dispatchEvent(new Event('input', { bubbles: true }));
    }
    return { ok: 1 };
  }

  function selectOptions(i, gen, values) {
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    if (e.localName !== 'select') return { why: 'not a <select> element (a ' + e.localName + ')' };
    const opts = Array.from(e.options);
    const picked = [];
    const missing = [];
    for (const v of values) {
      const o = opts.find((x) => x.value === v) || opts.find((x) => norm(x.label) === norm(v) || norm(x.text) === norm(v));
      if (o) picked.push(o); else missing.push(v);
    }
    if (missing.length) return { missing, options: opts.slice(0, 20).map((o) => o.label || o.value) };
    if (!e.multiple && picked.length > 1) return { why: 'the <select> takes one option, ' + picked.length + ' were given' };
    for (const o of opts) o.selected = picked.includes(o);
    e.dispatchEvent(new Event('input', { bubbles: true }));
    e.dispatchEvent(new Event('change', { bubbles: true }));
    return { ok: 1, selected: picked.map((o) => o.value) };
  }

  // The indexes (this capture) of the elements `css` matches, across open shadow roots.
  function query(css, gen) {
    if (gen !== st.gen) return { stale: 1 };
    const found = new Set();
    try {
      for (const root of st.roots.slice(0, 10000)) for (const m of root.querySelectorAll(css)) found.add(m);
    } catch (err) {
      return { bad: String(err && err.message || err).slice(0, 200) };
    }
    if (!st.index) st.index = new Map(st.els.map((e, i) => [e, i]));
    const idx = [];
    let hidden = 0;
    for (const m of found) {
      const i = st.index.get(m);
      if (i !== undefined) idx.push(i); else hidden++;
    }
    return { idx, hidden };
  }

  function read(i, gen, what, attr) {
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    if (what === 'text') return { v: norm(subtreeText(e, 5000)).slice(0, 5000) };
    if (what === 'value') return { v: st.secret.has(e) ? '***' : (e.value !== undefined ? String(e.value) : null) };
    return { v: e.getAttribute(attr) };
  }

  function markSecret(i, gen) {
    const e = i < 0 ? deepActive() : el(i, gen);
    if (e) st.secret.add(e);
    return { ok: !!e };
  }

  // The current values of the elements holding a secret (for scrubbing what the page returns).
  function secretValues() {
    const out = [];
    for (const e of st.els) {
      if (!st.secret.has(e)) continue;
      const v = e.value !== undefined ? String(e.value) : (e.textContent || '');
      if (v) out.push(v);
    }
    return out;
  }

  // How many elements holding a secret show it as text (not a password field's dots).
  function secretsShown() {
    let n = 0;
    for (const e of st.els) {
      if (st.secret.has(e) && e.isConnected && !(e.tagName === 'INPUT' && e.type === 'password')) n++;
    }
    return n;
  }

  // Boxes over every element holding a secret, for a screenshot; `false` removes them.
  function mask(on) {
    for (const m of document.querySelectorAll('[data-trailblaze-mask]')) m.remove();
    if (!on) return 0;
    let n = 0;
    for (const e of st.els) {
      if (!st.secret.has(e) || !e.isConnected) continue;
      const r = e.getBoundingClientRect();
      const box = document.createElement('div');
      box.setAttribute('data-trailblaze-mask', '');
      box.style.cssText = 'position:fixed;z-index:2147483647;pointer-events:none;background:#444;left:' + r.x + 'px;top:' + r.y + 'px;width:' + r.width + 'px;height:' + r.height + 'px';
      document.documentElement.appendChild(box);
      n++;
    }
    return n;
  }

  function scrollBy(i, gen, dx, dy) {
    if (i < 0) { scrollBy0(dx, dy); return { ok: 1 }; }
    const e = el(i, gen);
    if (!e) return { stale: 1 };
    e.scrollBy({ left: dx, top: dy, behavior: 'instant' });
    return { ok: 1 };
  }
  const scrollBy0 = (dx, dy) => window.scrollBy({ left: dx, top: dy, behavior: 'instant' });

  return { capture, actionable, focus, clear, selectOptions, query, read, markSecret, mask, scrollBy, secretValues, secretsShown, st };
})()
