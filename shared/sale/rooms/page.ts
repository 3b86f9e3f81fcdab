import { createHash } from 'node:crypto';

/*
 * The waiting page: one HTML document, its style and script inline, that signs a buyer in (or up)
 * on the page itself, polls the buyer's place (GET /items/{id}/queue/me) at the interval each
 * answer names, joins, claims the pass when the turn comes and orders with it: under one
 * Idempotency-Key per pass, kept with the pass and the order placed in localStorage, so a double
 * click, a reload or a retry after a 503 places one order, and a reload after ordering shows that
 * order's status. Refusals are said in a buyer's words, by their error codes. It fetches nothing but the API beside it, which its
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
button:focus-visible, input:focus-visible { outline: 3px solid #f9ab00; outline-offset: 2px; }
button:disabled { opacity: .6; cursor: progress; }
input { font: inherit; padding: .3rem .5rem; }
label { display: grid; gap: .2rem; }
#summary { font-size: 1.3rem; font-weight: 600; }
.sold-out #summary { color: #b3261e; }
[hidden] { display: none; }
`;

const SCRIPT = `
'use strict';
const item = document.body.dataset.item;
const api = new URL('../items/' + encodeURIComponent(item) + '/', location.href);
const $ = (id) => document.getElementById(id);
// Kept across reloads and tabs: the pass, the one Idempotency-Key of each pass, and the order placed.
const stored = {
  get: (name) => localStorage.getItem('surge:' + name + ':' + item),
  set: (name, value) => localStorage.setItem('surge:' + name + ':' + item, value),
  drop: (name) => localStorage.removeItem('surge:' + name + ':' + item),
};
// The next reading of the place (or of the order placed), and the next sending of an order a busy
// answer turned away: apart, so that a reading answered meanwhile does not cancel the order's.
let timer;
let orderTimer;
let ordering = false;
let pass = stored.get('pass');
// What the last readings said: the interval they asked for, and by when (ms) the turn must be
// claimed and the pass used; no busy wait runs past them.
let refreshSeconds = null;
let claimBy = null;
let passExpiresAt = null;
// Busy answers in a row to each kind of call, each waited out longer than the last.
const busyInARow = {};

/** What a refusal means to a buyer, by the API's error code. */
const WORDS = {
  PASS_REQUIRED: 'Your pass had expired or was already used, so no order was placed.',
  PASS_EXPIRED: 'Your pass expired before an order used it; its unit went to the next in line.',
  SOLD_OUT: 'Sold out: the last unit went just before your order.',
  LIMIT_EXCEEDED: 'You already hold as many of this item as one buyer may.',
  NOT_ON_SALE: 'This item is not on sale.',
  PLACE_LOST: 'Your turn came and passed while this page was away: your place is lost.',
  INVALID_CREDENTIALS: 'That email and password do not match an account.',
  EMAIL_TAKEN: 'An account with that email exists: sign in instead.',
  VALIDATION_FAILED: 'Check your email address; a new account needs a password of at least 12 characters, without the email in it.',
  RATE_LIMITED: 'Too many tries; wait a minute and try again.',
};
const STATUS = {
  pending: 'is placed and being confirmed…',
  confirmed: 'is confirmed. Thank you!',
  rejected: 'could not be honoured: no unit was left for it. You have not been charged.',
  cancelled: 'was cancelled: no unit was taken.',
};
/**
 * Answers that say "later": no answer at all, a 429 or a 5xx. API Gateway's own (its throttle's
 * 429, the 500 of an invocation that failed or was throttled) carry no error code; the API's 503
 * one this page has no words for.
 */
const BUSY = 'The shop is busy right now; try again in a few seconds.';
const busy = (status) => status === 0 || status === 429 || status >= 500;
const words = (r, otherwise) => (r.body && r.body.error && WORDS[r.body.error.code]) || (busy(r.status) ? BUSY : otherwise);

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
async function call(method, path, headers, body, base) {
  const response = await fetch(new URL(path, base || api), {
    method,
    credentials: 'same-origin',
    headers: Object.assign({ accept: 'application/json' }, body ? { 'content-type': 'application/json' } : {}, headers),
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = await response.json().catch(() => ({}));
  return { status: response.status, body: answer, retryAfter: Number(response.headers.get('retry-after')) || 0 };
}
/** A call whose failure to get any answer is an answer of status 0. */
const answerOf = (request) => request.catch(() => ({ status: 0, body: {}, retryAfter: 0 }));
/**
 * Seconds until a call of this kind is sent again after the busy answer r: its Retry-After where
 * it gives one, else 1, 2, then 4 s as busy answers to the kind follow each other; either way up
 * to half as long again at random, since API Gateway's throttle names no time and the pages one
 * burst turned away would otherwise come back in the same second, into the same throttle. Never
 * later than a second before \`deadline\` (ms): the pass's end, or the turn's grace.
 */
function backOff(kind, r, deadline) {
  busyInARow[kind] = (busyInARow[kind] || 0) + 1;
  const seconds = (r.retryAfter || Math.min(4, 2 ** (busyInARow[kind] - 1))) * (1 + Math.random() / 2);
  return deadline ? Math.min(seconds, Math.max(1, (deadline - Date.now()) / 1000 - 1)) : seconds;
}
/** A call of this kind was answered: its next busy answer is waited out from the start again. */
function answered(kind) {
  busyInARow[kind] = 0;
}
function later(seconds, then) {
  clearTimeout(timer);
  timer = setTimeout(then || poll, Math.max(1, seconds) * 1000);
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
  else if (s.state === 'holding') {
    // While an order waits to be sent again, the summary says so, not that the pass is ready.
    if (orderTimer === undefined) say('Your pass is ready until ' + new Date(s.passExpiresAt).toLocaleTimeString() + '.');
  }
  else if (s.state === 'lost') say(WORDS.PLACE_LOST);
  else say('Your pass expired before an order used it.');
  show('order', s.state === 'holding' && pass !== null);
  passExpiresAt = s.passExpiresAt ? Date.parse(s.passExpiresAt) : null;
}
/** The order this browser placed for the item: its status, asked again until it is final. */
async function followOrder() {
  const orderId = stored.get('order');
  show('figures', false);
  show('order', false);
  show('join', false);
  show('hint', false);
  try {
    const r = await call('GET', '../../orders/' + encodeURIComponent(orderId));
    if (busy(r.status)) return later(backOff('order status', r), followOrder);
    answered('order status');
    if (r.status === 404 || r.status === 401) {
      stored.drop('order');
      return poll();
    }
    if (r.status !== 200) return later(5, followOrder);
    say('Your order ' + orderId + ' ' + STATUS[r.body.status]);
    if (r.body.status === 'pending') later(2, followOrder);
  } catch {
    later(backOff('order status', { retryAfter: 0 }), followOrder);
  }
}
/** Claims the pass of a turn come; the seconds until the next reading of the place. */
async function claim() {
  const r = await call('POST', 'queue/pass');
  if (r.status === 200) {
    pass = r.body.token;
    passExpiresAt = Date.parse(r.body.expiresAt);
    stored.set('pass', pass);
  } else if (r.status === 410) {
    say(WORDS.PASS_EXPIRED);
  }
  if (busy(r.status)) return backOff('claim', r, claimBy);
  answered('claim');
  return 1;
}
async function poll() {
  if (stored.get('order')) return followOrder();
  try {
    const r = await call('GET', 'queue/me');
    if (busy(r.status)) {
      say('The queue is busy; trying again shortly.');
      return later(Math.min(backOff('place', r), refreshSeconds || Infinity));
    }
    answered('place');
    show('signin', r.status === 401);
    if (r.status === 401) return say('Sign in to take your place in the queue.');
    if (r.status === 404) {
      show('join', true);
      return say('Join the queue to get a place.');
    }
    if (r.status !== 200) {
      say('The queue could not be read; trying again shortly.');
      return later(5);
    }
    show('join', false);
    refreshSeconds = r.body.refreshSeconds;
    claimBy = r.body.claimBy ? Date.parse(r.body.claimBy) : null;
    if (r.body.state === 'admitted' || (r.body.state === 'holding' && pass === null)) {
      return later(await claim());
    }
    render(r.body);
    later(r.body.refreshSeconds);
  } catch {
    say('No connection; trying again shortly.');
    later(Math.min(backOff('place', { retryAfter: 0 }), refreshSeconds || Infinity));
  }
}
/** Sends the order of this pass, under the one key the pass has: a double click, a reload or a retry after a 503 places one order. */
async function order() {
  if (ordering || !pass) return;
  clearTimeout(orderTimer);
  orderTimer = undefined;
  ordering = true;
  $('order').disabled = true;
  let key = stored.get('key:' + pass);
  if (!key) {
    key = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
    stored.set('key:' + pass, key);
  }
  const r = await answerOf(call('POST', 'orders', { 'idempotency-key': key, 'waiting-room-pass': pass }, { quantity: 1 }));
  ordering = false;
  if (r.status === 202) {
    stored.set('order', r.body.orderId);
    return followOrder();
  }
  if (busy(r.status)) {
    const seconds = backOff('order', r, passExpiresAt);
    say('The shop is busy; sending your order again in ' + Math.ceil(seconds) + ' s. It will not be placed twice.');
    orderTimer = setTimeout(order, seconds * 1000);
    return;
  }
  answered('order');
  $('order').disabled = false;
  if (r.status === 401) return poll();
  if (r.status === 403) {
    pass = null;
    stored.drop('pass');
    show('order', false);
  }
  say(words(r, 'The order could not be placed.'));
  // The refusal stays in view until the next reading of the buyer's place.
  later(5);
}
$('join').addEventListener('click', async () => {
  const r = await answerOf(call('POST', 'queue'));
  if (r.status === 200 || r.status === 201) return poll();
  say(words(r, 'Could not join; try again.'));
});
$('order').addEventListener('click', order);
async function signIn(path) {
  const credentials = { email: $('email').value, password: $('password').value };
  const r = await answerOf(call('POST', path, {}, credentials, location.href));
  if (r.status === 201) {
    $('password').value = '';
    return poll();
  }
  say(words(r, 'Could not sign in; try again.'));
}
$('signin').addEventListener('submit', (event) => {
  event.preventDefault();
  signIn('../sessions');
});
$('signup').addEventListener('click', () => signIn('../users'));
poll();
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** What the page may load: its own inline style and script (by hash), and the API it calls on its own origin. */
export const WAITING_PAGE_POLICY = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src ${hash(STYLE)}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A whole page: the head every page here shares (its style inline), the title, and the body given. */
const page = (title: string, body: string, bodyAttributes = '') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body${bodyAttributes}>
${body}
</body>
</html>
`;

/** The page of an item that has no waiting room (or no such item): it says so, and scripts nothing. */
export function noRoomPage(itemId: string): string {
  const item = escape(itemId);
  return page(
    `No waiting room: ${item}`,
    `<main>
<h1>No waiting room for ${item}</h1>
<p id="summary">There is no waiting room for this item: it has none now, or there is no such item. Check the link you followed.</p>
</main>`,
  );
}

export function waitingPage(itemId: string): string {
  const item = escape(itemId);
  return page(
    `Waiting room: ${item}`,
    `<main>
<h1>Waiting room for ${item}</h1>
<p id="summary" role="status" aria-live="polite">Finding your place…</p>
<dl id="figures" hidden>
<dt>Your place</dt><dd id="position"></dd>
<dt>Ahead of you</dt><dd id="ahead"></dd>
<dt>Estimated wait</dt><dd id="wait"></dd>
<dt>Chance of a unit</dt><dd id="odds"></dd>
<dt>Sold out</dt><dd id="sold"></dd>
</dl>
<form id="signin" hidden>
<p><label>Email <input id="email" type="email" autocomplete="username" required></label></p>
<p><label>Password <input id="password" type="password" autocomplete="current-password" required></label></p>
<p><button type="submit">Sign in</button> <button id="signup" type="button">Create an account</button></p>
</form>
<p><button id="join" type="button" hidden>Join the queue</button> <button id="order" type="button" hidden>Order one now</button></p>
<p id="hint">This page checks your place by itself; keep it open. If it is closed when your turn comes, the place is kept only for a short grace.</p>
</main>
<script>${SCRIPT}</script>`,
    ` data-item="${item}"`,
  );
}
