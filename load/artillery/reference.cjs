// Artillery processor of the reference scenarios: each virtual user asks once, as a real client
// does, retrying what it may (ask.cjs): an order with the same Idempotency-Key, which the API
// answers with the order it already made; a coupon request as it was, which the API answers with
// the coupon the user already holds (409 ALREADY_ISSUED, its id in details). The id of every order
// accepted (202) and coupon issued (201, or held after a lost answer) is appended to
// SURGE_ACCEPTED_FILE for `npm run audit`, whichever attempt learnt it.
const { randomUUID } = require('node:crypto');
const { askWithRetries, unexpected, recordAccepted } = require('./ask.cjs');

/** One order of quantity 1 for SURGE_ITEM, under one Idempotency-Key however often it is sent; 202 and 409 are answers. */
async function placeOrder(context, events) {
  const answer = await askWithRetries('order', context, events, {
    method: 'POST',
    path: `/items/${encodeURIComponent(process.env.SURGE_ITEM)}/orders`,
    headers: { cookie: context.vars.cookie, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ quantity: 1 }),
    ceilinged: true,
  });
  if (answer.status === 202) return recordAccepted(JSON.parse(answer.body).orderId);
  if (answer.status !== 409) throw unexpected(answer, '202 or 409');
}

/** One coupon of SURGE_DEAL; 201 and 409 are answers, and a 409 ALREADY_ISSUED after a lost answer names the coupon that answer issued. */
async function askForCoupon(context, events) {
  const answer = await askWithRetries('coupon', context, events, {
    method: 'POST',
    path: `/deals/${encodeURIComponent(process.env.SURGE_DEAL)}/coupons`,
    headers: { cookie: context.vars.cookie },
    ceilinged: true,
  });
  if (answer.status === 201) return recordAccepted(JSON.parse(answer.body).couponId);
  if (answer.status !== 409) throw unexpected(answer, '201 or 409');
  const { error } = JSON.parse(answer.body);
  if (answer.retried && error.code === 'ALREADY_ISSUED') recordAccepted(error.details.couponId);
}

module.exports = { placeOrder, askForCoupon };
