// Artillery processor of the waiting-room scenario: each virtual user is one buyer of
// load/scenarios/waiting-room.ts (`npm run bench -- waiting-room`), against any target. It joins
// SURGE_ITEM's room once, polls its status at the interval each answer names until its state is not
// `waiting` (or the room is sold out: nothing in this run gives units back), claims its pass when
// admitted and orders with it. A share never orders (their passes expire) and a share stops polling
// after joining (their places are lost at their turn); a few first order without a pass or with a
// forged one, which must answer 403 PASS_REQUIRED. Every request is retried as a real client does
// (ask.cjs); accepted order ids go to SURGE_ACCEPTED_FILE for `npm run audit`.
//
// Counted as Artillery counters room.<what> (load/run-artillery.mjs holds the room's invariants to
// them): joins (joins_before_opening, joins_sold_out), status_reads, admitted, passes,
// passes_unused, orders_accepted, pass_holders_refused, rogue_orders_refused,
// rogue_orders_accepted, lost_while_polling, stopped_polling, sold_out_seen.
const { randomBytes, randomUUID } = require('node:crypto');
const { askWithRetries, unexpected, recordAccepted } = require('./ask.cjs');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const errorCode = (answer) => JSON.parse(answer.body || '{}').error?.code;

/** One buyer's life in the room; an answer no buyer should get ends it as an error. */
async function waitInRoom(context, events) {
  const vars = context.vars;
  const count = (what) => events.emit('counter', `room.${what}`, 1);
  const item = `/items/${encodeURIComponent(process.env.SURGE_ITEM)}`;
  const ask = (name, method, path, headers = {}, body) =>
    askWithRetries(name, context, events, {
      method,
      path: `${item}${path}`,
      headers: { cookie: vars.cookie, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body && JSON.stringify(body),
      // The order route's function has a ceiling: past it API Gateway answers 500 (ask.cjs).
      ceilinged: path === '/orders',
    });

  if (Math.random() < Number(vars.rogueShare)) {
    // Half without a pass, half with a token of the right shape that the room never issued.
    const forged = Math.random() < 0.5 ? { 'waiting-room-pass': randomBytes(16).toString('base64url') } : {};
    const rogue = await ask('rogue_order', 'POST', '/orders', { 'idempotency-key': randomUUID(), ...forged }, { quantity: 1 });
    if (rogue.status === 202) {
      count('rogue_orders_accepted');
      recordAccepted(JSON.parse(rogue.body).orderId);
    } else if (rogue.status === 403 && errorCode(rogue) === 'PASS_REQUIRED') count('rogue_orders_refused');
    else throw unexpected(rogue, '403 PASS_REQUIRED');
  }

  const joined = await ask('join', 'POST', '/queue');
  if (joined.status === 409 && errorCode(joined) === 'SOLD_OUT') return count('joins_sold_out');
  if (joined.status !== 201 && joined.status !== 200) throw unexpected(joined, '201, 200 or 409 SOLD_OUT');
  count('joins');
  if (Date.now() < Date.parse(process.env.SURGE_ROOM_OPENS_AT)) count('joins_before_opening');
  if (Math.random() < Number(vars.stopsPollingShare)) return count('stopped_polling');

  const giveUpAt = Date.parse(process.env.SURGE_ROOM_OPENS_AT) + Number(vars.giveUpSeconds) * 1000;
  for (;;) {
    const read = await ask('status', 'GET', '/queue/me');
    if (read.status !== 200) throw unexpected(read, '200');
    count('status_reads');
    const status = JSON.parse(read.body);
    if (status.state === 'lost') return count('lost_while_polling');
    if (status.state === 'admitted') break;
    if (status.state !== 'waiting') throw unexpected(read, 'waiting, admitted or lost before its claim');
    if (status.soldOut) return count('sold_out_seen');
    if (Date.now() > giveUpAt) throw Object.assign(new Error(`still waiting ${vars.giveUpSeconds} s after the opening`), { code: 'gave_up_waiting' });
    await sleep(status.refreshSeconds * 1000);
  }
  count('admitted');

  const claim = await ask('claim', 'POST', '/queue/pass');
  if (claim.status === 409 && errorCode(claim) === 'PLACE_LOST') return count('lost_while_polling');
  if (claim.status !== 200) throw unexpected(claim, '200');
  count('passes');
  if (Math.random() < Number(vars.neverOrdersShare)) return count('passes_unused');
  const order = await ask('order', 'POST', '/orders', { 'idempotency-key': randomUUID(), 'waiting-room-pass': JSON.parse(claim.body).token }, { quantity: 1 });
  if (order.status !== 202) {
    count('pass_holders_refused');
    throw unexpected(order, '202');
  }
  count('orders_accepted');
  recordAccepted(JSON.parse(order.body).orderId);
}

module.exports = { waitInRoom };
