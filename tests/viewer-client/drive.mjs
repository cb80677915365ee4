// report.html's trace viewer in the system's Chromium, driven by playwright-core, from file://.
// `node drive.mjs check PAGE`: opens the failed trail's trace, clicks, hovers, switches tabs and
// prints what it saw as JSON (tests/e2e/trace_viewer.rs asserts on it).
// `node drive.mjs paint PAGE ROUNDS [no-open]`: the page's first paint and a trace's opening, per
// round, as JSON (runtime/trailblaze/benches/viewer.rs).
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const [mode, page_path, rounds_arg, open_arg] = process.argv.slice(2);
const url = pathToFileURL(page_path).href;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });

try {
  if (mode === 'check') console.log(JSON.stringify(await check()));
  else if (mode === 'real') console.log(JSON.stringify(await real()));
  else if (mode === 'paint') console.log(JSON.stringify(await paint(Number(rounds_arg || 5))));
  else throw new Error('mode: check, real or paint');
} finally {
  await browser.close();
}

// The report in a fresh page, every request it makes and every error it logs noted.
async function opened() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const requests = [];
  const errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  return { page, requests, errors };
}

async function check() {
  const { page, requests, errors } = await opened();
  const out = { requests, errors };
  out.buttons = await page.locator('button.open-trace').count();
  await page.locator('#trail-1 button.open-trace').click();
  await page.waitForSelector('#tv:not([hidden]) #tv-items li');
  out.opened = await page.evaluate(() => ({
    title: document.getElementById('tv-title').textContent,
    items: [...document.querySelectorAll('#tv-items li')].map((li) => li.textContent),
    selected: document.querySelector('#tv-items li.sel')?.textContent,
  }));
  const state = () => page.evaluate(() => {
    const rect = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
    const img = document.getElementById('tv-img');
    return {
      img: img.getAttribute('src'),
      loaded: img.complete && img.naturalWidth > 0,
      imgRect: rect(img),
      tree: [...document.querySelectorAll('#tv-tree .tv-line')].filter((l) => !l.hidden).map((l) => l.textContent),
      matched: document.querySelector('#tv-tree .tv-line.matched')?.textContent ?? null,
      candidate: document.querySelector('#tv-tree .tv-line.candidate')?.textContent ?? null,
      point: document.getElementById('tv-point').hidden ? null : rect(document.getElementById('tv-point')),
      box: document.getElementById('tv-box').hidden ? null : { cls: document.getElementById('tv-box').className, ...rect(document.getElementById('tv-box')) },
      hover: document.getElementById('tv-hover').hidden ? null : rect(document.getElementById('tv-hover')),
      detail: document.getElementById('tv-detail').textContent,
      panel: document.getElementById('tv-panel').textContent,
      rows: [...document.querySelectorAll('#tv-panel tr:not(.body), #tv-panel li')].map((r) => r.textContent),
      bodies: [...document.querySelectorAll('#tv-panel tr.body pre')].map((p) => p.textContent),
      panelImages: [...document.querySelectorAll('#tv-panel img')].map((i) => i.getAttribute('src')),
      xss: window.__xss ?? null,
      selected: document.querySelector('#tv-items li.sel')?.textContent,
    };
  });
  const settle = async () => { await page.waitForFunction(() => { const i = document.getElementById('tv-img'); return i.complete && i.naturalWidth > 0; }); };
  const step = async (n) => { await page.locator('#tv-items li.tv-step').nth(n).click(); await settle(); };
  const tab = async (name) => { await page.locator(`#tv-tabs button[data-tab="${name}"]`).click(); };

  // Step 1 (typing the email): its screen before, the tap's point, the matched node.
  await step(1);
  await page.locator('#tv-before').click();
  await settle();
  out.step1 = await state();
  await tab('network');
  out.step1.network = (await state()).rows;
  await page.locator('#tv-after').click();
  await settle();
  out.step1after = await state();

  // Step 2 (the failure): the screen before it, the nearest candidate outlined.
  await step(2);
  await page.locator('#tv-before').click();
  await settle();
  out.step2 = await state();
  await page.locator('#tv-tree .tv-line[data-ref="b2"]').hover();
  out.hoverB2 = await state();
  await page.locator('#tv-tree .tv-line[data-ref="e1"]').hover();
  out.hoverE1 = await state();
  await tab('network');
  out.network = await state();
  await tab('console');
  out.console = await state();
  await page.locator('#tv-whole').check();
  out.consoleWhole = await state();
  await page.locator('#tv-whole').uncheck();
  await tab('devicelog');
  out.devicelog = await state();
  await tab('agent');
  out.agent = await state();
  await tab('video');
  out.video = await state();

  // The keyboard: up from step 2 selects its previous item, down comes back.
  await page.locator('#tv-items').focus();
  await page.keyboard.press('ArrowUp');
  out.keyUp = (await state()).selected;
  await page.keyboard.press('ArrowDown');
  out.keyDown = (await state()).selected;
  // The tree's search.
  await page.locator('#tv-search').fill('sign');
  out.search = (await state()).tree;
  await page.keyboard.press('Escape');
  out.closed = await page.evaluate(() => document.getElementById('tv').hidden);
  // Another trail's trace: its own title, and its video seeked to its step.
  await page.locator('#trail-2 > summary').click(); // a passed trail starts folded
  await page.locator('#trail-2 button.open-trace').click();
  await page.waitForFunction(() => document.getElementById('tv-title').textContent === 'trail-1');
  await tab('video');
  out.other = await page.evaluate(() => {
    const v = document.getElementById('tv-video-el');
    return { title: document.getElementById('tv-title').textContent, video: v ? v.getAttribute('src') : null, seek: v ? Number(v.getAttribute('data-seek')) : null };
  });
  await page.waitForTimeout(200);
  return out;
}

async function paint(rounds) {
  const out = [];
  for (let i = 0; i < rounds; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'load' });
    const loaded = Date.now() - t0;
    const paints = await page.evaluate(() => {
      const get = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
      const nav = performance.getEntriesByType('navigation')[0];
      return { first_paint_ms: get('first-paint'), first_contentful_paint_ms: get('first-contentful-paint'),
        dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null, bytes: document.documentElement.outerHTML.length };
    });
    let open_trace_ms = null;
    if (open_arg !== 'no-open') {
      const t1 = Date.now();
      await page.locator('#trail-1 button.open-trace').click();
      await page.waitForFunction(() => { const i = document.getElementById('tv-img'); return !document.getElementById('tv').hidden && i.complete && i.naturalWidth > 0; });
      open_trace_ms = Date.now() - t1;
    }
    out.push({ ...paints, load_ms: loaded, open_trace_ms });
    await context.close();
  }
  return out;
}

// A recorded run's report (tests/e2e/trace.rs): the first trace opened, every step and call clicked
// in turn; for each, the picture shown (loaded?), the tree's lines and the marks.
async function real() {
  const { page, requests, errors } = await opened();
  await page.locator('button.open-trace').first().click();
  await page.waitForSelector('#tv:not([hidden]) #tv-items li');
  const items = await page.locator('#tv-items li').count();
  const seen = [];
  for (let i = 0; i < items; i++) {
    await page.locator('#tv-items li').nth(i).click();
    await page.waitForFunction(() => { const img = document.getElementById('tv-img'); return !img.getAttribute('src') || (img.complete && img.naturalWidth > 0); });
    seen.push(await page.evaluate(() => {
      const img = document.getElementById('tv-img');
      return {
        item: document.querySelector('#tv-items li.sel')?.textContent,
        img: img.getAttribute('src'),
        loaded: img.complete && img.naturalWidth > 0,
        tree: [...document.querySelectorAll('#tv-tree .tv-line')].length,
        matched: document.querySelector('#tv-tree .tv-line.matched')?.textContent ?? null,
        candidate: document.querySelector('#tv-tree .tv-line.candidate')?.textContent ?? null,
        point: !document.getElementById('tv-point').hidden,
        detail: document.getElementById('tv-detail').textContent,
      };
    }));
  }
  return { requests, errors, seen };
}
