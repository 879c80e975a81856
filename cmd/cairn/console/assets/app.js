// cairn's web console: search, a message, channels and agents, stats and
// curation, over cairn's own HTTP API (api.js). Pages are hash routes
// (#/search?query=..., #/message/42, ...), so the server serves one page
// and the browser's back button works. Everything is built with DOM calls
// and textContent: no HTML from data is ever parsed.

import { api, ApiError, askToken, tokenPrompts } from './api.js';
import { legend, stackedBars } from './chart.js';

const main = document.getElementById('main');
const alertBox = document.getElementById('alert');

// ---- small DOM helpers -------------------------------------------------

// h builds an element: h('a', {href: '#/x', class: 'y'}, 'text', child...).
function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()) || d.getTime() <= 0) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

function timeEl(iso) {
  return h('time', { datetime: iso, title: iso }, fmtTime(iso));
}

function fmtBytes(n) {
  if (!n) return '0 B';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function fmtNum(x, digits = 2) {
  return typeof x === 'number' ? x.toFixed(digits) : '';
}

function showError(what, err) {
  if (err && err.name === 'AbortError') return;
  const text = err instanceof ApiError ? err.readable(what) : `${what}: ${err && err.message ? err.message : err}`;
  alertBox.replaceChildren(h('p', {}, text), h('button', { type: 'button', class: 'quiet', onclick: clearError }, 'Dismiss'));
  alertBox.hidden = false;
}

function clearError() {
  alertBox.hidden = true;
  alertBox.replaceChildren();
}

// flash is a one-time notice shown on the next page (e.g. after a delete).
let flash = '';

function confirmDialog(title, body, okLabel) {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-body').replaceChildren(...[].concat(body));
  document.getElementById('confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
  });
}

// snippet renders text with **marked** terms as <mark>.
function snippet(text) {
  const out = [];
  text.split('**').forEach((part, i) => {
    if (part) out.push(i % 2 ? h('mark', {}, part) : document.createTextNode(part));
  });
  return out;
}

function shorten(text, n) {
  return text.length > n ? text.slice(0, n - 1) + '…' : text;
}

// ---- routing -----------------------------------------------------------

function parseHash() {
  const raw = location.hash.startsWith('#/') ? location.hash.slice(2) : 'search';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const [page, arg] = path.split('/');
  return { page: page || 'search', arg: arg ? decodeURIComponent(arg) : '', params };
}

const pages = { search: searchPage, message: messagePage, channels: channelsPage, stats: statsPage, curation: curationPage };

async function route() {
  if (location.hash && !location.hash.startsWith('#/')) return; // an in-page anchor (the skip link)
  const r = parseHash();
  const page = pages[r.page] || notFoundPage;
  for (const a of document.querySelectorAll('nav a[data-page]')) {
    if (a.dataset.page === r.page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  clearError();
  const view = h('div', { class: `page page-${r.page}` });
  main.replaceChildren(view);
  if (flash) {
    view.append(h('p', { class: 'flash', role: 'status' }, flash));
    flash = '';
  }
  await page(view, r);
}

function notFoundPage(view) {
  document.title = 'Not found · cairn';
  view.append(h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '#/search' }, 'Go to search')));
}

function focusHeading(view) {
  const h1 = view.querySelector('h1');
  if (h1) {
    h1.tabIndex = -1;
    h1.focus({ preventScroll: true });
  }
}

// ---- search ------------------------------------------------------------

const PROFILES = ['similarity', 'balanced', 'recent', 'quality', 'multiplicative'];
const SCORE_BARS = ['similarity', 'keyword', 'confidence', 'recency', 'final'];
const DEBOUNCE_MS = 40;
const searchTimes = []; // round trips of this tab's searches, ms
let lastSearchHash = '#/search';

function field(label, input, hint) {
  const id = input.id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', { id: id + '-hint' }, hint) : null);
}

function select(id, name, options, value) {
  return h('select', { id, name }, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

// specFromForm turns the form into a SearchSpec (the body of POST /search)
// and the URL parameters that bring the same search back.
function specFromForm(form) {
  const f = new FormData(form);
  const spec = {};
  const params = new URLSearchParams();
  const text = (k) => (f.get(k) || '').toString().trim();
  for (const [k, v] of f.entries()) {
    const s = v.toString().trim();
    if (s) params.set(k, s);
  }
  if (text('query')) spec.query = text('query');
  if (text('mode')) spec.mode = text('mode');
  if (text('profile')) spec.profile = text('profile');
  if (text('fusion')) spec.fusion = text('fusion');
  for (const k of ['channels', 'senders', 'types']) if (text(k)) spec[k] = list(text(k));
  if (text('channel_type')) spec.channel_types = [text('channel_type')];
  for (const k of ['exclude_sender', 'project', 'unread_by']) if (text(k)) spec[k] = text(k);
  for (const k of ['min_confidence', 'demote_stale', 'min_score']) if (text(k)) spec[k] = Number(text(k));
  if (text('limit')) spec.limit = Number(text('limit'));
  if (text('min_word_count')) spec.min_word_count = Number(text('min_word_count'));
  if (text('max_age_days')) spec.max_age_hours = Number(text('max_age_days')) * 24;
  if (text('since')) spec.since = text('since') + 'T00:00:00Z';
  if (text('until')) spec.until = text('until') + 'T00:00:00Z';
  if (text('has_breadcrumbs')) spec.has_breadcrumbs = text('has_breadcrumbs') === 'true';
  if (f.get('breadcrumbs_valid')) spec.breadcrumbs_valid = true;
  if (text('where')) {
    try {
      spec.where = JSON.parse(text('where'));
    } catch (e) {
      throw new ApiError(0, 'invalid_argument', `where must be a JSON object, such as {"confidence": {"$gte": 0.8}}: ${e.message}`, 'where');
    }
  }
  return { spec, params };
}

function searchForm(p) {
  const v = (k) => p.get(k) || '';
  const q = h('input', { id: 'q', name: 'query', type: 'search', value: v('query'), autocomplete: 'off', spellcheck: 'false',
    placeholder: 'What do the agents know about…', 'aria-describedby': 'q-hint' });
  const filters = h('details', { class: 'filters', id: 'filters', open: window.innerWidth > 820 || undefined },
    h('summary', {}, 'Filters'),
    h('div', { class: 'filter-grid' },
      field('Channels', h('input', { id: 'f-channels', name: 'channels', value: v('channels'), 'aria-describedby': 'f-channels-hint' }), 'comma-separated ids'),
      field('Channel type', select('f-channel-type', 'channel_type', [['', 'any'], ['agent-notes', 'agent notes'], ['project', 'project'], ['channel', 'channel']], v('channel_type'))),
      field('Senders', h('input', { id: 'f-senders', name: 'senders', value: v('senders'), 'aria-describedby': 'f-senders-hint' }), 'comma-separated agents'),
      field('Not from', h('input', { id: 'f-exclude', name: 'exclude_sender', value: v('exclude_sender') })),
      field('Project', h('input', { id: 'f-project', name: 'project', value: v('project') })),
      field('Types', h('input', { id: 'f-types', name: 'types', value: v('types'), 'aria-describedby': 'f-types-hint' }), 'decision, note, policy…'),
      field('Min confidence', h('input', { id: 'f-minconf', name: 'min_confidence', type: 'number', step: '0.05', value: v('min_confidence'), inputmode: 'decimal' })),
      field('Min relevance (0 = all)', h('input', { id: 'f-minscore', name: 'min_score', type: 'number', step: '0.05', min: '0', max: '1', value: v('min_score'), inputmode: 'decimal' })),
      field('Max age (days)', h('input', { id: 'f-maxage', name: 'max_age_days', type: 'number', step: 'any', min: '0', value: v('max_age_days') })),
      field('Since', h('input', { id: 'f-since', name: 'since', type: 'date', value: v('since') })),
      field('Until', h('input', { id: 'f-until', name: 'until', type: 'date', value: v('until') })),
      field('Breadcrumbs', select('f-crumbs', 'has_breadcrumbs', [['', 'any'], ['true', 'with'], ['false', 'without']], v('has_breadcrumbs'))),
      field('Min words', h('input', { id: 'f-words', name: 'min_word_count', type: 'number', min: '0', value: v('min_word_count') })),
      field('Unread by', h('input', { id: 'f-unread', name: 'unread_by', value: v('unread_by') })),
      field('Demote stale ×', h('input', { id: 'f-demote', name: 'demote_stale', type: 'number', step: '0.1', min: '0', max: '1', value: v('demote_stale') })),
      field('Fusion', select('f-fusion', 'fusion', [['', 'default (calibrated)'], ['calibrated', 'calibrated'], ['minmax', 'minmax'], ['weighted', 'weighted'], ['rrf', 'rrf']], v('fusion'))),
      field('Limit', h('input', { id: 'f-limit', name: 'limit', type: 'number', min: '1', max: '1000', value: v('limit'), placeholder: '20' })),
      h('div', { class: 'field check' },
        h('input', { id: 'f-valid', name: 'breadcrumbs_valid', type: 'checkbox', value: 'true', checked: v('breadcrumbs_valid') === 'true' }),
        h('label', { for: 'f-valid' }, 'Only notes whose breadcrumbs still hold')),
      h('div', { class: 'field wide' },
        h('label', { for: 'f-where' }, 'Where (JSON)'),
        h('textarea', { id: 'f-where', name: 'where', rows: '2', spellcheck: 'false', placeholder: '{"confidence": {"$gte": 0.8}}' }, v('where'))),
      h('div', { class: 'field wide' }, h('button', { type: 'reset', class: 'quiet', id: 'f-clear' }, 'Clear filters'))));
  // The filters sit beside the results but belong to the form (form=).
  for (const c of filters.querySelectorAll('input, select, textarea, button')) c.setAttribute('form', 'search-form');
  const form = h('form', { id: 'search-form', role: 'search', 'aria-label': 'Search messages', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'query-row' },
      h('div', { class: 'field grow' }, h('label', { for: 'q' }, 'Query'), q,
        h('small', { id: 'q-hint' }, 'Plain words; empty lists the newest first. Press / to come back here.')),
      field('Mode', select('mode', 'mode', [['', 'hybrid'], ['semantic', 'semantic'], ['keyword', 'keyword']], v('mode'))),
      field('Profile', select('profile', 'profile', [['', 'default'], ...PROFILES.map((x) => [x, x])], v('profile')))));
  return { form, filters };
}

function scoreBars(scores) {
  return h('dl', { class: 'scores', 'aria-label': 'Score breakdown' },
    SCORE_BARS.map((k) => {
      const val = scores[k] || 0;
      const bar = h('span', { class: `bar bar-${k}`, 'aria-hidden': 'true' }, h('span', { class: 'fill' }));
      bar.firstChild.style.width = `${Math.max(0, Math.min(1, val)) * 100}%`;
      return h('div', { class: 'score' }, h('dt', {}, k), h('dd', {}, bar, h('span', { class: 'num' }, fmtNum(val))));
    }));
}

function resultItem(r, withScores) {
  const m = r.message;
  const text = r.snippet ? snippet(r.snippet) : shorten(m.content, 360);
  return h('li', { class: 'result' },
    h('article', { 'aria-labelledby': `r-${m.id}` },
      h('h2', { id: `r-${m.id}`, class: 'result-title' },
        h('a', { href: `#/message/${m.id}` }, `#${m.id}`), ' ',
        h('span', { class: 'chan' }, m.channel_id)),
      h('p', { class: 'meta' }, m.sender_id, m.sender_project_id ? `@${m.sender_project_id}` : '', ' · ', m.message_type,
        ' · confidence ', fmtNum(m.confidence), ' · ', timeEl(m.created_at),
        r.scores && r.scores.demoted ? h('span', { class: 'badge warn' }, 'demoted: breadcrumbs changed') : null,
        r.vector_missing ? h('span', { class: 'badge' }, 'no vector yet') : null),
      h('p', { class: 'text' }, text),
      withScores ? scoreBars(r.scores || {}) : null));
}

async function searchPage(view, r) {
  document.title = 'Search · cairn';
  const { form, filters } = searchForm(r.params);
  const status = h('p', { id: 'search-status', class: 'status', role: 'status' }, '');
  const notes = h('div', { id: 'search-notes', class: 'notes' });
  const results = h('ol', { id: 'results', class: 'results', 'aria-label': 'Results', 'aria-busy': 'false' });
  view.append(h('h1', {}, 'Search'), form,
    h('div', { class: 'search-body' }, h('aside', { class: 'filters-pane', 'aria-label': 'Filters' }, filters),
      h('section', { class: 'results-pane', 'aria-label': 'Results' }, status, notes, results)));

  let ctrl = null;
  let timer = 0;
  let seq = 0;
  const run = async () => {
    clearTimeout(timer);
    // A change event or a timer may fire after the page was left (a click
    // on a result blurs the query): this page no longer owns the address.
    if (!form.isConnected) return;
    let spec;
    let params;
    try {
      ({ spec, params } = specFromForm(form));
    } catch (e) {
      showError('Could not search', e);
      return;
    }
    lastSearchHash = '#/search' + (params.toString() ? '?' + params : '');
    history.replaceState(null, '', lastSearchHash);
    if (ctrl) ctrl.abort();
    ctrl = new AbortController();
    const mine = ++seq;
    results.setAttribute('aria-busy', 'true');
    status.textContent = 'Searching…';
    const t0 = performance.now();
    const prompts = tokenPrompts();
    try {
      const resp = await api('POST', '/search', spec, { signal: ctrl.signal });
      if (mine !== seq) return;
      const ms = performance.now() - t0;
      if (prompts === tokenPrompts()) searchTimes.push(ms); // not the time a person spent typing a token
      if (searchTimes.length > 200) searchTimes.shift();
      clearError();
      const withScores = Boolean(spec.query);
      results.replaceChildren(...resp.results.map((x) => resultItem(x, withScores)));
      results.dataset.query = spec.query || ''; // which search the list shows (tests and timings read it)
      const n = resp.results.length;
      status.textContent = `${n} result${n === 1 ? '' : 's'}` +
        (spec.query ? ` · ${resp.mode}, profile ${resp.profile}${resp.fusion ? ', fusion ' + resp.fusion : ''}` : ' · newest first') +
        ` · ${Math.round(ms)} ms`;
      notes.replaceChildren(...(resp.notes || []).map((x) => h('p', { class: 'note' }, x.message)));
      if (n === 0 && resp.below_floor > 0) {
        results.append(h('li', { class: 'empty' }, `No relevant results: ${resp.below_floor} found, all less likely relevant than the floor. Set Min relevance to 0 to see them.`));
      } else if (n === 0) results.append(h('li', { class: 'empty' }, 'Nothing found. Loosen a filter or try other words.'));
    } catch (e) {
      if (e.name === 'AbortError' || mine !== seq) return;
      status.textContent = 'The search failed.';
      showError('Could not search', e);
    } finally {
      if (mine === seq) results.setAttribute('aria-busy', 'false');
    }
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  };
  for (const x of [form, filters]) {
    x.addEventListener('input', soon);
    x.addEventListener('change', soon);
  }
  form.addEventListener('reset', () => setTimeout(run, 0));
  form.querySelector('#q').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') run();
  });
  form.querySelector('#q').focus();
  await run();
}

// ---- a message ---------------------------------------------------------

const CRUMB_KINDS = { files: 'file', commits: 'commit', issues: 'issue', prs: 'pr' };

function breadcrumbList(m) {
  const md = (m.metadata && m.metadata.breadcrumbs) || {};
  const check = m.breadcrumb_check;
  const marks = (check && check.marks) || [];
  const items = [];
  for (const [key, refs] of Object.entries(md)) {
    if (!Array.isArray(refs)) continue;
    for (const ref of refs) {
      const mark = marks.find((x) => x.ref === ref);
      const state = mark ? mark.state : check && check.status === 'stale' ? 'not checked at HEAD yet' : 'not checked';
      items.push(h('li', {},
        h('span', { class: 'kind' }, CRUMB_KINDS[key] || key), ' ', h('code', {}, ref), ' ',
        h('span', { class: `badge state-${mark ? mark.state : 'unknown'}` }, state),
        mark && mark.moved_to ? h('span', {}, ' → ', h('code', {}, mark.moved_to)) : null,
        mark && mark.reason ? h('small', {}, ' ', mark.reason) : null));
    }
  }
  if (!items.length) return h('p', { class: 'muted' }, 'No breadcrumbs.');
  const where = check ? (check.status === 'current' ? `checked at HEAD ${String(check.head || '').slice(0, 12)}` :
    `HEAD moved since the check at ${String(check.checked_at || '').slice(0, 12)}; a refresh is due`) : 'never checked (cairn check --breadcrumbs)';
  return [h('ul', { class: 'crumbs' }, items), h('p', { class: 'muted' }, where)];
}

function neighbourList(m, n) {
  const item = (x, current) => h('li', { class: current ? 'current' : '' },
    current ? h('strong', { 'aria-current': 'true' }, `#${x.id}`) : h('a', { href: `#/message/${x.id}` }, `#${x.id}`),
    ' ', h('span', { class: 'muted' }, `${x.sender_id} · ${fmtTime(x.created_at)}`), ' ', shorten(x.content, 140));
  return h('ol', { class: 'thread' },
    n.more_before ? h('li', { class: 'muted' }, '… older messages') : null,
    n.before.map((x) => item(x, false)), item(m, true), n.after.map((x) => item(x, false)),
    n.more_after ? h('li', { class: 'muted' }, '… newer messages') : null);
}

async function deleteMessage(m) {
  const ok = await confirmDialog(`Delete message #${m.id}?`, [
    h('p', {}, `From ${m.sender_id} in ${m.channel_id}:`),
    h('blockquote', {}, shorten(m.content, 300)),
    h('p', {}, 'It is removed from SQLite, the keyword index and the vectors, and its text from every file of the data dir. This cannot be undone.')],
  'Delete');
  if (!ok) return false;
  await api('DELETE', `/messages/${m.id}`);
  return true;
}

async function messagePage(view, r) {
  const id = r.arg;
  document.title = `Message #${id} · cairn`;
  view.append(h('p', { class: 'back' }, h('a', { href: lastSearchHash }, '← Back to search')), h('h1', {}, `Message #${id}`));
  focusHeading(view);
  let m;
  let n;
  try {
    [m, n] = await Promise.all([api('GET', `/messages/${encodeURIComponent(id)}`), api('GET', `/messages/${encodeURIComponent(id)}/neighbours?before=5&after=5`)]);
  } catch (e) {
    showError(`Could not open message #${id}`, e);
    return;
  }
  const md = { ...(m.metadata || {}) };
  const del = h('button', { type: 'button', class: 'danger', id: 'delete-message' }, 'Delete this message…');
  del.addEventListener('click', async () => {
    try {
      if (await deleteMessage(m)) {
        flash = `Message #${m.id} was deleted.`;
        location.hash = lastSearchHash;
      }
    } catch (e) {
      showError(`Could not delete message #${m.id}`, e);
    }
  });
  view.append(h('div', { class: 'message-layout' },
    h('div', { class: 'main-col' },
      h('section', { 'aria-labelledby': 'h-content' }, h('h2', { id: 'h-content' }, 'Content'), h('div', { class: 'content' }, m.content)),
      h('section', { 'aria-labelledby': 'h-crumbs' }, h('h2', { id: 'h-crumbs' }, 'Breadcrumbs'), breadcrumbList(m)),
      h('section', { 'aria-labelledby': 'h-mentions' }, h('h2', { id: 'h-mentions' }, 'Mentions'),
        m.mentions && m.mentions.length ? h('ul', { class: 'inline' }, m.mentions.map((a) => h('li', {}, h('a', { href: `#/search?senders=${encodeURIComponent(a)}` }, '@' + a))))
          : h('p', { class: 'muted' }, 'No mentions.')),
      h('section', { 'aria-labelledby': 'h-md' }, h('h2', { id: 'h-md' }, 'Metadata'),
        Object.keys(md).length ? h('pre', { class: 'json' }, JSON.stringify(md, null, 2)) : h('p', { class: 'muted' }, 'No metadata.'))),
    h('section', { class: 'side-col', 'aria-labelledby': 'h-facts' }, h('h2', { id: 'h-facts' }, 'Details'),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Channel'), h('dd', {}, h('a', { href: `#/search?channels=${encodeURIComponent(m.channel_id)}` }, m.channel_id)),
        h('dt', {}, 'Sender'), h('dd', {}, m.sender_id + (m.sender_project_id ? ` (project ${m.sender_project_id})` : '')),
        h('dt', {}, 'Type'), h('dd', {}, m.message_type),
        h('dt', {}, 'Confidence'), h('dd', {}, fmtNum(m.confidence)),
        h('dt', {}, 'Written'), h('dd', {}, timeEl(m.created_at)),
        h('dt', {}, 'Words'), h('dd', {}, String(m.word_count)),
        h('dt', {}, 'Content hash'), h('dd', {}, h('code', {}, String(m.content_hash).slice(0, 16) + '…'))),
      del),
    h('section', { class: 'wide', 'aria-labelledby': 'h-thread' }, h('h2', { id: 'h-thread' }, `In ${n.channel_id}`), neighbourList(m, n))));
}

// ---- channels and agents -----------------------------------------------

function table(caption, headers, rows, numeric = []) {
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((x, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : '' }, x)))),
    h('tbody', {}, rows.map((row) => h('tr', {}, row.map((c, i) => (i === 0 ? h('th', { scope: 'row' }, c) : h('td', { class: numeric.includes(i) ? 'num' : '' }, c)))))));
}

async function channelsPage(view) {
  document.title = 'Channels and agents · cairn';
  view.append(h('h1', {}, 'Channels and agents'));
  focusHeading(view);
  let cs;
  let as;
  try {
    [cs, as] = await Promise.all([api('GET', '/channels'), api('GET', '/agents')]);
  } catch (e) {
    showError('Could not list channels and agents', e);
    return;
  }
  const byLast = (a, b) => String(b).localeCompare(String(a));
  const channels = cs.results.slice().sort((a, b) => byLast(a.last_message_at || '', b.last_message_at || ''));
  const agents = as.results.slice().sort((a, b) => byLast(a.last_active, b.last_active));
  view.append(h('div', { class: 'two-col' },
    h('section', { class: 'table-wrap' }, table(`${channels.length} channels, most recently written first`,
      ['Channel', 'Type', 'Messages', 'Last message', 'Description'],
      channels.map((c) => [h('a', { href: `#/search?channels=${encodeURIComponent(c.id)}` }, c.id), c.channel_type,
        String(c.message_count), c.last_message_at ? timeEl(c.last_message_at) : '—', c.description || '']), [2])),
    h('section', { class: 'table-wrap' }, table(`${agents.length} agents, most recently active first`,
      ['Agent', 'Project', 'Messages', 'Last active', 'First message'],
      agents.map((a) => [h('a', { href: `#/search?senders=${encodeURIComponent(a.name)}` }, a.name), a.project_id || '—',
        String(a.message_count), timeEl(a.last_active), timeEl(a.created_at)]), [2]))));
}

// ---- stats -------------------------------------------------------------

const BYTE_PARTS = [['messages', 'messages table'], ['fts', 'keyword index (FTS5)'], ['sessions', 'imported sessions'],
  ['vectors', 'vectors'], ['models', 'models'], ['other', 'other']];

function meterRow(label, value, of, text) {
  const bar = h('span', { class: 'bar', 'aria-hidden': 'true' }, h('span', { class: 'fill' }));
  bar.firstChild.style.width = `${of > 0 ? Math.min(1, value / of) * 100 : 0}%`;
  return h('div', { class: 'score' }, h('dt', {}, label), h('dd', {}, bar, h('span', { class: 'num' }, text)));
}

function percentile(xs, p) {
  if (!xs.length) return 0;
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

async function statsPage(view, r) {
  document.title = 'Stats · cairn';
  const bucket = ['hour', 'day', 'week'].includes(r.params.get('bucket')) ? r.params.get('bucket') : 'day';
  const buckets = { hour: 48, day: 30, week: 26 }[bucket];
  view.append(h('h1', {}, 'Stats'));
  focusHeading(view);
  let st;
  let tl;
  try {
    [st, tl] = await Promise.all([api('GET', '/stats'), api('GET', `/stats/timeline?bucket=${bucket}&buckets=${buckets}`)]);
  } catch (e) {
    showError('Could not read the stats', e);
    return;
  }
  const b = st.bytes || {};
  const budget = st.storage_budget_bytes || 0;
  const emb = st.embedder;
  view.append(h('dl', { class: 'cards' },
    h('div', {}, h('dt', {}, 'Messages'), h('dd', {}, String(st.messages))),
    h('div', {}, h('dt', {}, 'Searches'), h('dd', {}, String(st.search.searches))),
    h('div', {}, h('dt', {}, 'Search latency (server, mean)'), h('dd', {}, `${fmtNum(st.search.avg_ms, 1)} ms`)),
    h('div', {}, h('dt', {}, 'Search round trip (this tab, p50 / p95)'),
      h('dd', {}, searchTimes.length ? `${Math.round(percentile(searchTimes, 0.5))} / ${Math.round(percentile(searchTimes, 0.95))} ms` : 'no search yet')),
    h('div', {}, h('dt', {}, 'Embedding cache hit rate'),
      h('dd', {}, emb ? `${fmtNum(emb.hit_rate * 100, 1)} %` : 'no embedder'),
      emb ? h('small', {}, `${emb.cache_hits} hits, ${emb.cache_misses} misses, ${emb.texts} texts embedded`) : null),
    h('div', {}, h('dt', {}, 'Waiting for a vector'), h('dd', {}, String((st.vectors && st.vectors.queued) || 0)))));

  // Messages over time.
  const start = new Date(tl.start).getTime();
  const labels = (tl.series[0] ? tl.series[0].counts : new Array(buckets).fill(0)).map((_, i) => {
    const d = new Date(start + i * tl.bucket_seconds * 1000);
    const p = (x) => String(x).padStart(2, '0');
    return bucket === 'hour' ? `${p(d.getHours())}:00` : `${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  });
  const series = tl.series.map((s) => ({ name: s.channel_type, counts: s.counts }));
  const chooser = h('nav', { 'aria-label': 'Bucket', class: 'inline' },
    ['hour', 'day', 'week'].map((x) => h('a', { href: `#/stats?bucket=${x}`, 'aria-current': x === bucket ? 'page' : undefined }, `per ${x}`)));
  const chartTable = table('Messages per bucket and channel type', ['Bucket', ...series.map((s) => s.name)],
    labels.map((l, i) => [l, ...series.map((s) => String(s.counts[i]))]), series.map((_, i) => i + 1));
  view.append(h('section', { 'aria-labelledby': 'h-time' },
    h('h2', { id: 'h-time' }, `Messages over time, per channel type (${buckets} ${bucket}s)`), chooser,
    series.length ? [stackedBars({ title: `Messages per ${bucket} and channel type`, labels, series }), legend(series.map((s) => s.name))]
      : h('p', { class: 'muted' }, 'No messages in this range.'),
    h('details', {}, h('summary', {}, 'The same as a table'), h('div', { class: 'table-wrap' }, chartTable))));

  // Bytes on disk.
  const of = budget || b.total || 1;
  view.append(h('section', { 'aria-labelledby': 'h-bytes' },
    h('h2', { id: 'h-bytes' }, 'Bytes on disk'),
    h('p', {}, budget ? `${fmtBytes(b.total)} of the ${fmtBytes(budget)} storage budget (gc.max_bytes): ${fmtNum((b.total / budget) * 100, 1)} %.`
      : `${fmtBytes(b.total)} in all; no storage budget is set (gc.max_bytes in config.toml), so parts are shown against the total.`),
    h('dl', { class: 'scores bytes' },
      meterRow('total', b.total, of, fmtBytes(b.total)),
      BYTE_PARTS.map(([k, label]) => meterRow(label, b[k] || 0, of, fmtBytes(b[k] || 0)))),
    b.vectors_to_messages_table ? h('p', { class: 'muted' },
      `Vectors take ${fmtNum(b.vectors_to_messages_table)}× the messages table (the design's budget is under 2×), ${Math.round(b.vector_bytes_per_message)} bytes per message.`) : null,
    (st.notes || []).map((x) => h('p', { class: 'note' }, x))));
}

// ---- curation ----------------------------------------------------------

async function curationPage(view) {
  document.title = 'Curation · cairn';
  view.append(h('h1', {}, 'Curation'));
  focusHeading(view);

  // Delete one message by id.
  const idInput = h('input', { id: 'del-id', name: 'id', type: 'number', min: '1', required: true, inputmode: 'numeric' });
  const delForm = h('form', { class: 'inline-form' }, field('Message id', idInput), h('button', { type: 'submit', class: 'danger' }, 'Delete…'));
  delForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const m = await api('GET', `/messages/${encodeURIComponent(idInput.value)}`);
      if (await deleteMessage(m)) {
        clearError();
        delStatus.textContent = `Message #${m.id} was deleted.`;
        idInput.value = '';
      }
    } catch (err) {
      showError(`Could not delete message #${idInput.value}`, err);
    }
  });
  const delStatus = h('p', { role: 'status', class: 'status' });
  view.append(h('section', { 'aria-labelledby': 'h-del' }, h('h2', { id: 'h-del' }, 'Delete a message'),
    h('p', {}, 'Or open a message from search and use its Delete button. You are shown the message and asked before anything is deleted.'),
    delForm, delStatus));

  // Retention: dry run first, then forget exactly what was listed.
  const out = h('div', { id: 'gc-plan' });
  const gcStatus = h('p', { role: 'status', class: 'status' });
  const dry = h('button', { type: 'button', id: 'gc-dry-run' }, 'Show what gc would forget (dry run)');
  view.append(h('section', { 'aria-labelledby': 'h-gc' }, h('h2', { id: 'h-gc' }, 'Retention (gc)'),
    h('p', {}, 'Runs the retention policies of config.toml. The dry run lists what would go and changes nothing; only the list you saw can then be forgotten.'),
    dry, gcStatus, out));
  const runDry = async () => {
    gcStatus.textContent = 'Running a dry run…';
    try {
      const plan = await api('POST', '/gc', { dry_run: true });
      clearError();
      showPlan(plan);
    } catch (e) {
      gcStatus.textContent = '';
      showError('Could not run the gc dry run', e);
    }
  };
  dry.addEventListener('click', runDry);
  function showPlan(plan) {
    const n = plan.messages.length;
    const s = plan.sessions.length;
    gcStatus.textContent = `The policies would forget ${n} message${n === 1 ? '' : 's'} and ${s} session${s === 1 ? '' : 's'}; ${plan.kept_forever} kept forever (pinned, decisions, policies).`;
    const parts = [];
    if (n) {
      parts.push(h('div', { class: 'table-wrap' }, table(`Messages gc would forget`, ['Id', 'Channel', 'Type', 'Confidence', 'Written', 'Why'],
        plan.messages.map((m) => [h('a', { href: `#/message/${m.id}` }, `#${m.id}`), m.channel_id, m.message_type, fmtNum(m.confidence),
          timeEl(m.created_at), `${m.reason} [${m.policy}]`]), [3])));
    }
    if (s) {
      parts.push(h('div', { class: 'table-wrap' }, table('Sessions gc would forget', ['Session', 'Last record', 'Why'],
        plan.sessions.map((x) => [x.id, timeEl(x.last_at), x.reason]))));
    }
    (plan.notes || []).forEach((x) => parts.push(h('p', { class: 'note' }, x)));
    if (n || s) {
      const go = h('button', { type: 'button', class: 'danger', id: 'gc-forget' }, `Forget these ${n} messages and ${s} sessions…`);
      go.addEventListener('click', async () => {
        const ok = await confirmDialog('Forget what the dry run listed?',
          h('p', {}, `${n} messages and ${s} sessions are deleted for good, and the space reclaimed. If gc would now forget anything else, nothing is deleted and you are asked to review again.`), 'Forget');
        if (!ok) return;
        gcStatus.textContent = 'Forgetting…';
        try {
          const rep = await api('POST', '/gc', { dry_run: false, expect_messages: plan.messages.map((m) => m.id), expect_sessions: plan.sessions.map((x) => x.id) });
          clearError();
          out.replaceChildren();
          gcStatus.textContent = `Forgot ${rep.messages.length} messages and ${rep.sessions.length} sessions; the data dir went from ${fmtBytes(rep.bytes_before)} to ${fmtBytes(rep.bytes_after)}.`;
        } catch (e) {
          gcStatus.textContent = '';
          // 409: the policies would now forget something else; show the new list.
          if (e instanceof ApiError && e.status === 409) await runDry();
          showError('gc did not run', e);
        }
      });
      parts.push(go);
    } else {
      parts.push(h('p', { class: 'muted' }, 'Nothing to forget under the current policies.'));
    }
    out.replaceChildren(...parts);
  }
}

// ---- start ---------------------------------------------------------------

document.getElementById('token-button').addEventListener('click', async () => {
  if (await askToken('Enter the token for this server.')) route();
});
document.getElementById('skip').addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});
document.addEventListener('keydown', (e) => {
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t.isContentEditable;
  if (e.key === '/' && !typing && !document.querySelector('dialog[open]')) {
    e.preventDefault();
    const q = document.getElementById('q');
    if (q) q.focus();
    else location.hash = lastSearchHash;
  }
});
window.addEventListener('hashchange', route);
route();
