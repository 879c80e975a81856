// Drives cairn's web console in Debian's chromium with playwright-core.
// Usage: node console_browser.mjs URL TOKEN
// Prints one JSON line per step: {"step", "ok", "detail"}. The Go test
// (cmd/cairn/console_browser_test.go) seeds the data, starts `cairn serve`
// and checks every step. CAIRN_CONSOLE_SHOTS=DIR saves screenshots there.
import { chromium } from 'playwright-core';

const [url, token] = process.argv.slice(2);
const shots = process.env.CAIRN_CONSOLE_SHOTS || '';
const origin = new URL(url).origin;

function report(step, ok, detail) {
  process.stdout.write(JSON.stringify({ step, ok: Boolean(ok), detail }) + '\n');
}

// step runs one check; after a failure the page is in an unknown state, so
// the steps after it are not run (the Go test names the first failure).
let failed = false;
async function step(name, fn) {
  if (failed) return;
  try {
    const detail = await fn();
    report(name, true, detail === undefined ? null : detail);
  } catch (e) {
    failed = true;
    let where = '';
    try {
      where = `\nat ${page.url()}; alert: ${await page.textContent('#alert')}; main: ${(await page.textContent('main')).slice(0, 400)}`;
    } catch {
      where = '';
    }
    report(name, false, String(e && e.stack ? e.stack : e) + where);
  }
}

function expect(cond, what) {
  if (!cond) throw new Error(what);
}

const browser = await chromium.launch({
  executablePath: process.env.CAIRN_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // Playwright gives the browser a new empty profile (user data dir).
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
const page = await context.newPage();
page.setDefaultTimeout(8000);
const foreign = [];
const pageErrors = [];
page.on('request', (req) => {
  if (new URL(req.url()).origin !== origin && !req.url().startsWith('data:')) foreign.push(req.url());
});
page.on('pageerror', (e) => pageErrors.push(e.message));

const shot = async (name) => {
  if (shots) await page.screenshot({ path: `${shots}/${name}.png` });
};
const resultIds = () => page.$$eval('#results .result h2 a', (as) => as.map((a) => a.textContent));
const resultTexts = () => page.$$eval('#results .result', (ls) => ls.map((l) => l.textContent));
// settle waits for the debounced search to answer.
const settle = async () => {
  await page.waitForTimeout(150);
  await page.waitForSelector('#results[aria-busy="false"]');
};

try {
  await step('auth prompt', async () => {
    await page.goto(url + '/');
    await page.waitForSelector('#token-dialog[open]');
    const label = await page.textContent('label[for="token-input"]');
    expect(/token/i.test(label), 'the token field has no label');
    expect(await page.evaluate(() => document.activeElement.id) === 'token-input', 'the token field is not focused');
  });

  await step('wrong token', async () => {
    await page.fill('#token-input', 'not-the-token');
    await page.press('#token-input', 'Enter');
    await page.waitForSelector('#token-dialog[open]');
    await page.waitForFunction(() => /refused/.test(document.getElementById('token-why').textContent));
    await page.fill('#token-input', token);
    await page.press('#token-input', 'Enter');
    await page.waitForSelector('#results .result');
    expect(!page.url().includes(token), 'the token is in the URL');
    expect(await page.evaluate(() => sessionStorage.getItem('cairn.token')) === token, 'the token is not in sessionStorage');
    expect(await page.evaluate(() => localStorage.length) === 0, 'something was kept in localStorage');
  });

  await step('search', async () => {
    await page.fill('#q', 'upload retries backoff');
    await settle();
    const texts = await resultTexts();
    expect(texts.length > 0, 'no results');
    expect(/backoff/.test(texts[0]), `the first result does not mention backoff: ${texts[0]}`);
    const status = await page.textContent('#search-status');
    expect(/hybrid/.test(status), `not a hybrid search: ${status}`);
    expect(page.url().includes('query=upload'), 'the query is not in the page address');
    await shot('search');
    return { results: texts.length, status };
  });

  await step('score bars', async () => {
    const labels = await page.$$eval('#results .result:first-child .scores dt', (ds) => ds.map((d) => d.textContent));
    expect(JSON.stringify(labels) === JSON.stringify(['similarity', 'keyword', 'confidence', 'recency', 'final']), `bars: ${labels}`);
    const widths = await page.$$eval('#results .result:first-child .scores .fill', (fs) => fs.map((f) => f.style.width));
    expect(widths.every((w) => /%$/.test(w)) && widths.some((w) => w !== '0%'), `bar widths: ${widths}`);
    return widths;
  });

  await step('no layout shift', async () => {
    await page.evaluate(() => {
      window.__shift = 0;
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__shift += e.value; }).observe({ type: 'layout-shift', buffered: false });
    });
    const top = await page.$eval('#results', (r) => r.getBoundingClientRect().top);
    for (const q of ['wal', 'wal checkpoint', 'release', 'backup restored']) {
      await page.fill('#q', q);
      await settle();
      expect(await page.$eval('#results', (r) => r.getBoundingClientRect().top) === top, `results moved while searching ${q}`);
    }
    const shift = await page.evaluate(() => window.__shift);
    expect(shift < 0.05, `layout shift ${shift}`);
    return { shift };
  });

  await step('filters', async () => {
    await page.fill('#q', 'upload');
    await page.fill('#f-senders', 'bob');
    await settle();
    const metas = await page.$$eval('#results .result .meta', (ms) => ms.map((m) => m.textContent));
    expect(metas.length > 0 && metas.every((m) => m.startsWith('bob')), `senders filter: ${metas}`);
    await page.fill('#f-senders', '');
    await page.selectOption('#f-channel-type', 'project');
    await page.fill('#f-minconf', '0.8');
    await settle();
    const chans = await page.$$eval('#results .result .chan', (cs) => cs.map((c) => c.textContent));
    expect(chans.length > 0 && chans.every((c) => c.startsWith('project:')), `channel type filter: ${chans}`);
    const confs = await page.$$eval('#results .result .meta', (ms) => ms.map((m) => Number(/confidence ([0-9.]+)/.exec(m.textContent)[1])));
    expect(confs.every((c) => c >= 0.8), `min confidence filter: ${confs}`);
    expect(page.url().includes('channel_type=project'), 'filters are not in the page address');
    return { senders: metas.length, project: chans };
  });

  await step('open message', async () => {
    await page.click('#f-clear');
    await page.fill('#q', 'SQLite connection writer');
    await settle();
    await page.click('#results .result:first-child h2 a');
    await page.waitForSelector('#h-thread');
    const content = await page.textContent('.content');
    expect(/one SQLite connection/.test(content), `content: ${content}`);
    const facts = await page.textContent('.facts');
    expect(/claude/.test(facts) && /decision/.test(facts) && /0\.90/.test(facts), `details: ${facts}`);
    expect(/CAIRN-12/.test(await page.textContent('.json')), 'metadata missing');
    await shot('message');
  });

  await step('breadcrumbs', async () => {
    const crumbs = await page.$$eval('.crumbs li', (ls) => ls.map((l) => l.textContent));
    expect(crumbs.some((c) => c.includes('store.go:1-3') && c.includes('valid')), `store.go: ${crumbs}`);
    expect(crumbs.some((c) => c.includes('old/upload.go') && c.includes('gone')), `old/upload.go: ${crumbs}`);
    return crumbs;
  });

  await step('neighbours', async () => {
    const items = await page.$$eval('.thread li', (ls) => ls.map((l) => l.textContent));
    expect(items.length >= 2 && items.some((i) => /backoff/.test(i)), `neighbours: ${items}`);
    expect(await page.$('.thread [aria-current]') !== null, 'the message itself is not marked');
    return items.length;
  });

  await step('keyboard', async () => {
    await page.goto(url + '/#/channels');
    await page.waitForSelector('table');
    await page.keyboard.press('/');
    await page.waitForSelector('#q');
    expect(await page.evaluate(() => document.activeElement.id) === 'q', '/ does not bring the query back');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('busy timeout', { delay: 20 });
    await settle();
    // Tab from the query through the form to the first result and open it with Enter.
    let found = false;
    for (let i = 0; i < 60 && !found; i++) {
      await page.keyboard.press('Tab');
      found = await page.evaluate(() => document.activeElement.closest('#results .result') !== null);
    }
    expect(found, 'Tab never reached a result');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#h-thread');
    const focused = await page.evaluate(() => document.activeElement.tagName);
    expect(focused === 'H1', `focus after opening: ${focused}`);
    expect(/busy_timeout|busy timeout/.test(await page.textContent('.content')), 'opened the wrong message');
  });

  await step('api error', async () => {
    await page.goto(url + '/#/search?query=upload&min_confidence=3');
    await page.waitForSelector('#alert:not([hidden])');
    const text = await page.textContent('#alert');
    expect(/min_confidence/.test(text) && /HTTP 400/.test(text) && !/[{}]/.test(text), `alert: ${text}`);
    const role = await page.getAttribute('#alert', 'role');
    expect(role === 'alert', 'the error is not announced');
    await page.fill('#f-minconf', '');
    await settle();
    expect(await page.isHidden('#alert'), 'the alert stayed after a good search');
    return text;
  });

  await step('bad where', async () => {
    await page.fill('#f-where', '{"confidence": ');
    await page.waitForSelector('#alert:not([hidden])');
    const text = await page.textContent('#alert');
    expect(/where must be a JSON object/.test(text), `alert: ${text}`);
    await page.fill('#f-where', '');
    await settle();
    return text;
  });

  let deleted = 0;
  await step('delete', async () => {
    await page.fill('#q', 'nightly backup restored');
    await settle();
    const first = (await resultIds())[0];
    deleted = Number(first.slice(1));
    await page.click('#results .result:first-child h2 a');
    await page.waitForSelector('#delete-message');
    await page.click('#delete-message');
    await page.waitForSelector('#confirm-dialog[open]');
    expect(/nightly backup/.test(await page.textContent('#confirm-dialog')), 'the confirmation does not show the message');
    // Cancel first: nothing happens.
    await page.click('#confirm-dialog button[value="cancel"]');
    await page.waitForSelector('#confirm-dialog:not([open])', { state: 'attached' });
    expect(await page.$('#delete-message') !== null, 'cancel left the page');
    await page.click('#delete-message');
    await page.click('#confirm-ok');
    await page.waitForSelector('.flash');
    expect(/deleted/.test(await page.textContent('.flash')), 'no notice of the delete');
    return { id: deleted };
  });

  await step('gone from search', async () => {
    await page.fill('#q', 'nightly backup restored');
    await settle();
    const ids = await resultIds();
    expect(!ids.includes(`#${deleted}`), `#${deleted} is still found: ${ids}`);
    await page.goto(url + `/#/message/${deleted}`);
    await page.waitForSelector('#alert:not([hidden])');
    expect(/404/.test(await page.textContent('#alert')), 'the deleted message still opens');
    return ids;
  });

  await step('channels', async () => {
    await page.goto(url + '/#/channels');
    await page.waitForSelector('table');
    const rows = await page.$$eval('tbody tr', (rs) => rs.map((r) => r.textContent));
    expect(rows.some((r) => r.includes('team-log')) && rows.some((r) => r.includes('claude')), 'channels or agents missing');
    await shot('channels');
    return rows.length;
  });

  await step('stats', async () => {
    await page.goto(url + '/#/stats');
    await page.waitForSelector('#h-bytes');
    expect(await page.$('svg.chart rect') !== null, 'no chart bars');
    const legend = await page.$$eval('.legend li', (ls) => ls.map((l) => l.textContent));
    expect(legend.includes('agent-notes') && legend.includes('channel') && legend.includes('project'), `legend: ${legend}`);
    const bytes = await page.textContent('#h-bytes + p');
    expect(/storage budget/.test(bytes) && /256\.0 MiB/.test(bytes), `budget line: ${bytes}`);
    const cards = await page.textContent('.cards');
    expect(/Embedding cache hit rate/.test(cards) && /Search latency/.test(cards), `cards: ${cards}`);
    await page.setViewportSize({ width: 1280, height: 1100 });
    await shot('stats');
    await page.setViewportSize({ width: 1280, height: 800 });
    return { legend };
  });

  await step('gc dry run', async () => {
    await page.goto(url + '/#/curation');
    await page.click('#gc-dry-run');
    await page.waitForSelector('#gc-plan table');
    const rows = await page.$$eval('#gc-plan tbody tr', (rs) => rs.map((r) => r.textContent));
    expect(rows.length === 2 && rows.every((r) => r.includes('scratch')), `plan: ${rows}`);
    await shot('curation');
    return rows;
  });

  await step('gc changed since review', async () => {
    // Another old scratch message arrives after the dry run: the reviewed
    // list no longer matches, so nothing goes and the new list is shown.
    const created = new Date(Date.now() - 10 * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
    const code = await page.evaluate(async (c) => {
      const r = await fetch('/api/cairn/v1/messages', { method: 'POST', headers: { 'Content-Type': 'application/json',
        Authorization: 'Bearer ' + sessionStorage.getItem('cairn.token') },
      body: JSON.stringify({ channel: 'scratch', sender: 'gemini', content: 'scratch: a late note', created_at: c }) });
      return r.status;
    }, created);
    expect(code === 201, `storing the late note: ${code}`);
    await page.click('#gc-forget');
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm-ok');
    await page.waitForSelector('#alert:not([hidden])');
    const text = await page.textContent('#alert');
    expect(/nothing was deleted/.test(text) && /409/.test(text), `alert: ${text}`);
    await page.waitForFunction(() => document.querySelectorAll('#gc-plan tbody tr').length === 3);
    return text;
  });

  await step('gc forget', async () => {
    await page.click('#gc-forget');
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm-ok');
    await page.waitForFunction(() => [...document.querySelectorAll('[role="status"]')].some((s) => /Forgot 3 messages/.test(s.textContent)));
    await page.goto(url + '/#/search?query=scratch');
    await settle();
    const texts = await resultTexts();
    expect(!texts.some((x) => x.includes('scratch:')), `scratch notes still found: ${texts}`);
  });

  await step('narrow window', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    for (const p of ['#/search?query=upload', '#/channels', '#/stats', '#/message/1']) {
      await page.goto(url + '/' + p);
      await page.waitForSelector('main h1');
      await page.waitForTimeout(200);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(over <= 0, `${p} scrolls sideways by ${over}px at 400px`);
    }
    await page.goto(url + '/#/search?query=upload');
    await settle();
    const top = await page.$eval('#results', (r) => r.getBoundingClientRect().top);
    for (const q of ['wal checkpoint', 'upload']) {
      await page.fill('#q', q);
      await settle();
      expect(await page.$eval('#results', (r) => r.getBoundingClientRect().top) === top, `results moved at 400px while searching ${q}`);
    }
    await shot('search-narrow');
  });

  await step('wide window', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const p of ['#/search?query=upload', '#/channels', '#/stats', '#/curation', '#/message/1']) {
      await page.goto(url + '/' + p);
      await page.waitForSelector('main h1');
      await page.waitForTimeout(200);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(over <= 0, `${p} scrolls sideways by ${over}px at 1280px`);
    }
  });

  await step('same origin only', async () => {
    expect(foreign.length === 0, `requests to other origins: ${foreign}`);
    expect(pageErrors.length === 0, `page errors: ${pageErrors}`);
  });
} finally {
  await browser.close();
}
