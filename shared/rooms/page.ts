import { createHash } from 'node:crypto';

/*
 * The waiting page: one HTML document, its style and script inline, that polls the buyer's place
 * (GET /items/{id}/queue/me) at the interval each answer names, joins, claims the pass when the
 * turn comes and orders with it. It fetches nothing but the API beside it, which its
 * Content-Security-Policy holds it to (the inline parts by their hashes). Paths are relative, so
 * it works under a stage's prefix too.
 */

const STYLE = `
body { font: 1.125rem/1.5 system-ui, sans-serif; margin: 0; color: #1a1a1a; background: #fafafa; }
main { max-width: 34rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1.2rem; }
dt { font-weight: 600; }
dd { margin: 0; }
button { font: inherit; padding: .5rem 1.2rem; border: 2px solid #0b57d0; border-radius: .4rem; background: #0b57d0; color: #fff; cursor: pointer; }
button:focus-visible { outline: 3px solid #f9ab00; outline-offset: 2px; }
#summary { font-size: 1.3rem; font-weight: 600; }
.sold-out #summary { color: #b3261e; }
[hidden] { display: none; }
`;

const SCRIPT = `
'use strict';
const item = document.body.dataset.item;
const api = new URL('../items/' + encodeURIComponent(item) + '/', location.href);
const $ = (id) => document.getElementById(id);
let timer;
let pass = sessionStorage.getItem('pass:' + item);

function say(text) {
  if ($('summary').textContent !== text) $('summary').textContent = text;
}
function show(id, visible) {
  $(id).hidden = !visible;
}
function duration(seconds) {
  if (seconds === null) return 'unknown';
  if (seconds < 60) return seconds + ' s';
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? minutes + ' min' : Math.floor(minutes / 60) + ' h ' + (minutes % 60) + ' min';
}
async function call(method, path, headers) {
  const response = await fetch(new URL(path, api), { method, credentials: 'same-origin', headers: Object.assign({ accept: 'application/json' }, headers) });
  const body = await response.json().catch(() => ({}));
  return { status: response.status, body, retry: Number(response.headers.get('retry-after')) || 5 };
}
function later(seconds) {
  clearTimeout(timer);
  timer = setTimeout(poll, Math.max(1, seconds) * 1000);
}
function render(s) {
  document.body.classList.toggle('sold-out', s.soldOut);
  show('figures', true);
  $('position').textContent = s.position.toLocaleString();
  $('ahead').textContent = s.ahead.toLocaleString();
  $('wait').textContent = s.admitted ? 'none: it is your turn' : duration(s.estimatedWaitSeconds);
  $('odds').textContent = Math.round(s.odds * 100) + ' %';
  $('sold').textContent = s.soldOut ? 'Yes' : 'No';
  const opens = new Date(s.opensAt);
  const before = opens > new Date();
  if (s.soldOut && !s.admitted) say('Sold out: every unit is sold or held by a pass.');
  else if (s.state === 'waiting') say(before ? 'You are in the queue. The sale opens at ' + opens.toLocaleTimeString() + '; places are drawn at random until then.' : 'You are in the queue.');
  else if (s.state === 'admitted') say('It is your turn: getting your pass…');
  else if (s.state === 'holding') say('Your pass is ready until ' + new Date(s.passExpiresAt).toLocaleTimeString() + '.');
  else if (s.state === 'lost') say('Your turn came and passed while this page was away: your place is lost.');
  else say('Your pass is used or has expired.');
  show('order', s.state === 'holding' && pass !== null);
}
async function claim() {
  const r = await call('POST', 'queue/pass');
  if (r.status === 200) {
    pass = r.body.token;
    sessionStorage.setItem('pass:' + item, pass);
  }
}
async function poll() {
  try {
    const r = await call('GET', 'queue/me');
    if (r.status === 401) return say('Sign in first, then open this page again.');
    if (r.status === 404) {
      show('join', true);
      return say('Join the queue to get a place.');
    }
    if (r.status !== 200) {
      say('The queue is busy; trying again shortly.');
      return later(r.retry);
    }
    show('join', false);
    if (r.body.state === 'admitted' || (r.body.state === 'holding' && pass === null)) {
      await claim();
      return later(1);
    }
    render(r.body);
    later(r.body.refreshSeconds);
  } catch {
    say('No connection; trying again shortly.');
    later(5);
  }
}
$('join').addEventListener('click', async () => {
  const r = await call('POST', 'queue');
  if (r.status === 200 || r.status === 201) return poll();
  say(r.body.error ? r.body.error.message : 'Could not join; try again.');
});
$('order').addEventListener('click', async () => {
  const key = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const response = await fetch(new URL('orders', api), {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, 'waiting-room-pass': pass },
    body: JSON.stringify({ quantity: 1 }),
  });
  const body = await response.json().catch(() => ({}));
  say(response.status === 202 ? 'Ordered: order ' + body.orderId + ' is on its way.' : body.error ? body.error.message : 'The order failed; try again.');
});
poll();
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** What the page may load: its own inline style and script (by hash), and the API it calls on its own origin. */
export const WAITING_PAGE_POLICY = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src ${hash(STYLE)}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function waitingPage(itemId: string): string {
  const item = escape(itemId);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waiting room: ${item}</title>
<style>${STYLE}</style>
</head>
<body data-item="${item}">
<main>
<h1>Waiting room for ${item}</h1>
<p id="summary" role="status" aria-live="polite">Finding your place…</p>
<dl id="figures" hidden>
<dt>Your place</dt><dd id="position"></dd>
<dt>Ahead of you</dt><dd id="ahead"></dd>
<dt>Estimated wait</dt><dd id="wait"></dd>
<dt>Chance of a unit</dt><dd id="odds"></dd>
<dt>Sold out</dt><dd id="sold"></dd>
</dl>
<p><button id="join" type="button" hidden>Join the queue</button> <button id="order" type="button" hidden>Order one now</button></p>
<p>This page checks your place by itself; keep it open. If it is closed when your turn comes, the place is kept only for a short grace.</p>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
