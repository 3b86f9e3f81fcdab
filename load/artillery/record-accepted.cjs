// Artillery processor of the reference scenarios: appends the id of every order answered 202, and
// every coupon answered 201, to SURGE_ACCEPTED_FILE, one per line, for `npm run audit`. One
// append per id: the file is opened for appending, so the workers' lines never overwrite each other.
const { appendFileSync } = require('node:fs');

function recordAccepted(_request, response, _context, _events, next) {
  if (response.statusCode === 202 || response.statusCode === 201) {
    const body = JSON.parse(response.body);
    appendFileSync(process.env.SURGE_ACCEPTED_FILE, `${body.orderId ?? body.couponId}\n`);
  }
  return next();
}

module.exports = { recordAccepted };
