// The console's one way to cairn: its own HTTP API under /api/cairn/v1.
// The token lives in this tab's sessionStorage and travels only in the
// Authorization header, never in a URL.

const PREFIX = '/api/cairn/v1';
const TOKEN_KEY = 'cairn.token';

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || '';
  }

  // readable is the text a person sees: what failed, the server's own
  // message, and the field it names.
  readable(what) {
    let text = `${what}: ${this.message}`;
    if (this.field && !this.message.includes(this.field)) text += ` (field ${this.field})`;
    if (this.status) text += ` [HTTP ${this.status} ${this.code}]`;
    return text;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// askToken opens the token dialog once for all requests waiting on it and
// resolves to whether a token was given.
let pending = null;
let prompts = 0;

// tokenPrompts counts the token dialogs shown so far.
export function tokenPrompts() {
  return prompts;
}

export function askToken(why) {
  if (pending) return pending;
  prompts++;
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  document.getElementById('token-why').textContent = why;
  input.value = '';
  // Cancel is a plain button: Enter in the field submits the form with its
  // one submit button, "Use token".
  document.getElementById('token-cancel').onclick = () => dialog.close('cancel');
  pending = new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      pending = null;
      const ok = dialog.returnValue === 'ok' && input.value !== '';
      if (ok) setToken(input.value);
      input.value = '';
      resolve(ok);
    }, { once: true });
  });
  dialog.showModal();
  input.focus();
  return pending;
}

// api sends one request and returns the decoded JSON answer; a 401 asks for
// the token and tries again; any other error is an ApiError.
export async function api(method, path, body, { signal } = {}) {
  for (;;) {
    const headers = { Accept: 'application/json' };
    const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let resp;
    try {
      resp = await fetch(PREFIX + path, {
        method, headers, signal, cache: 'no-store', credentials: 'omit',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, 'unreachable', `cairn did not answer (${e.message}); is cairn serve still running?`);
    }
    const text = await resp.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (resp.status === 401) {
      const why = t ? 'The server refused this token. Enter it again.' : 'This server asks for a token.';
      if (await askToken(why)) continue;
      throw new ApiError(401, 'unauthorized', 'no token given; use the Token button to enter one');
    }
    if (!resp.ok) {
      const msg = (data && data.message) || text.trim() || resp.statusText;
      throw new ApiError(resp.status, (data && data.error) || 'http_error', msg, data && data.field);
    }
    return data;
  }
}
