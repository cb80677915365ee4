// The anchor of runtime/trailblaze/benches/web.rs: Playwright (playwright-core, driving the same Chromium
// binary) doing the same click-and-verify rounds and 1,000-node snapshots. Prints JSON medians (ms).
// node web_bench.mjs CHROMIUM BASE_URL ROUNDS SNAPSHOTS
import { chromium } from 'playwright-core';

const [exe, base, rounds, snaps] = process.argv.slice(2);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const browser = await chromium.launch({
  executablePath: exe,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(base + '/index.html');
  const click = [];
  for (let i = 1; i <= +rounds; i++) {
    const t = performance.now();
    await page.locator('#inc').click();
    await page.getByText('Count: ' + i).first().waitFor({ state: 'visible' });
    click.push(performance.now() - t);
  }
  await page.goto(base + '/big.html?n=1000');
  const snapshot = [];
  for (let i = 0; i < +snaps; i++) {
    const t = performance.now();
    await page.locator(':root').ariaSnapshot();
    snapshot.push(performance.now() - t);
  }
  console.log(JSON.stringify({ click: median(click), snapshot: median(snapshot) }));
} finally {
  await browser.close();
}
