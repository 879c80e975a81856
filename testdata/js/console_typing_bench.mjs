// Times the console's search as a person types: for each query, the time
// from the last keystroke to the results of that query on screen, in
// Debian's chromium through playwright-core.
// Usage: node console_typing_bench.mjs URL [TOKEN] [ROUNDS]
// Prints one JSON object: the queries, each delay in ms with p50, p95 and max,
// and the same queries sent straight to the API from the page (the server's
// part, measured in the same run).
import { chromium } from 'playwright-core';

const [url, token = '', roundsArg = '3'] = process.argv.slice(2);
const rounds = Number(roundsArg);

const browser = await chromium.launch({
  executablePath: process.env.CAIRN_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  if (token) await page.addInitScript((t) => sessionStorage.setItem('cairn.token', t), token);
  await page.goto(url + '/#/search');
  await page.waitForSelector('#results[aria-busy="false"]');
  // Query words from the data itself: the newest messages' words.
  const words = await page.$$eval('#results .result .text', (ts) => [...new Set(ts.map((t) => t.textContent).join(' ').toLowerCase().match(/[a-z]{4,}/g) || [])]);
  const queries = [];
  for (let i = 0; i + 1 < words.length && queries.length < 10; i += 2) queries.push(`${words[i]} ${words[i + 1]}`);
  // In the page: when the last key went down, and when the status line
  // first shows the results of the query typed.
  await page.evaluate(() => {
    window.__lastKey = 0;
    document.addEventListener('keydown', () => { window.__lastKey = performance.now(); }, true);
  });
  // Warm-up: the first search after start loads the vectors into memory.
  await page.fill('#q', queries[0]);
  await page.waitForFunction((q) => document.getElementById('results').dataset.query === q, queries[0], { timeout: 60000 });
  const delays = [];
  const apiTimes = [];
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      await page.fill('#q', '');
      await page.waitForTimeout(200);
      await page.waitForSelector('#results[aria-busy="false"]');
      const wait = page.evaluate((want) => new Promise((resolve) => {
        const status = document.getElementById('search-status');
        const results = document.getElementById('results');
        const done = () => results.dataset.query === want && / results? · /.test(status.textContent);
        const obs = new MutationObserver(() => {
          if (done()) {
            obs.disconnect();
            resolve(performance.now() - window.__lastKey);
          }
        });
        obs.observe(document.getElementById('main'), { subtree: true, childList: true, characterData: true, attributes: true });
      }), q);
      // 120 ms a key (a quick typist): the debounce fires between keys too.
      await page.type('#q', q, { delay: 120 });
      delays.push(await wait);
      // The same query straight to the API from the page: the server's part.
      apiTimes.push(await page.evaluate(async (query) => {
        const t = sessionStorage.getItem('cairn.token');
        const t0 = performance.now();
        const r = await fetch('/api/cairn/v1/search', { method: 'POST', body: JSON.stringify({ query }),
          headers: { 'Content-Type': 'application/json', ...(t ? { Authorization: 'Bearer ' + t } : {}) } });
        await r.json();
        return performance.now() - t0;
      }, q));
    }
  }
  const pct = (xs, p) => {
    const s = xs.slice().sort((a, b) => a - b);
    return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]);
  };
  console.log(JSON.stringify({
    queries, n: delays.length,
    typed_p50_ms: pct(delays, 0.5), typed_p95_ms: pct(delays, 0.95), typed_max_ms: pct(delays, 1),
    api_p50_ms: pct(apiTimes, 0.5), api_p95_ms: pct(apiTimes, 0.95),
    typed_ms: delays.map(Math.round), api_ms: apiTimes.map(Math.round),
  }));
} finally {
  await browser.close();
}
