/**
 * `npm run smoke -- <base URL> [--admin-secret-file F | --admin-email E] [--item ID] [--deal ID]`
 *
 * Walks the API (docs/api.md) against any target, the twin or a deployed API: health, sign-up, sign-in,
 * /me, an order until it is confirmed, a coupon, a catalog page and its refresh after an admin
 * write, an inbound address, sign-out. Item and deal ids are fresh unless given (a sale's stock
 * cannot be set twice). Prints one JSON line of what passed and exits non-zero on a failure.
 * The admin defaults to the twin's demo admin; on AWS, pass the first admin's secret as a file
 * (`{"email","password"}`, as the AWS CLI prints it) or the password in SURGE_ADMIN_PASSWORD, so
 * it never stands on a command line, where `ps` shows it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { demoAccounts } from '../twin/seed';
import { apiCall, type ApiAnswer, type ApiCallOptions } from '../twin/api-client';
import { until } from '../../shared/platform/wait';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    'admin-email': { type: 'string' },
    'admin-secret-file': { type: 'string' },
    item: { type: 'string' },
    deal: { type: 'string' },
  },
});
const base = (positionals[0] ?? '').replace(/\/$/, '');
if (!/^https?:\/\//.test(base)) {
  process.stderr.write('usage: npm run smoke -- <base URL> [--admin-secret-file F | --admin-email E (password in SURGE_ADMIN_PASSWORD)] [--item ID] [--deal ID]\n');
  process.exit(2);
}
const demoAdmin = demoAccounts.find((a) => a.role === 'admin')!;
const admin: { email: string; password: string } = values['admin-secret-file']
  ? JSON.parse(readFileSync(values['admin-secret-file'], 'utf8'))
  : { email: values['admin-email'] ?? demoAdmin.email, password: process.env.SURGE_ADMIN_PASSWORD ?? demoAdmin.password };

const tag = randomBytes(4).toString('hex');
const itemId = values.item ?? `smoke-${tag}`;
const dealId = values.deal ?? `smoke-${tag}`;

const call = (method: string, path: string, options?: ApiCallOptions) => apiCall(base, method, path, options);

/** Fails the step with what the target answered, so the report says why. */
function expectStatus(answer: ApiAnswer, ...statuses: number[]): ApiAnswer {
  if (!statuses.includes(answer.status)) throw new Error(`answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer;
}

/** How long a step waits for what shows only some time after its answer (an order confirmed, a coupon listed), asked every EVENTUALLY_EVERY_MS. */
const EVENTUALLY_WITHIN_MS = 30_000;
const EVENTUALLY_EVERY_MS = 250;

const steps: { step: string; ok: boolean; ms: number; error?: string }[] = [];
const state: { user?: string; admin?: string; orderId?: string; programId?: number } = {};

async function step(name: string, run: () => Promise<void>): Promise<void> {
  const started = performance.now();
  try {
    await run();
    steps.push({ step: name, ok: true, ms: Math.round(performance.now() - started) });
  } catch (error) {
    steps.push({ step: name, ok: false, ms: Math.round(performance.now() - started), error: (error as Error).message });
  }
}

const email = `smoke-${tag}@surge.example`;
const password = `smoke ${randomBytes(12).toString('hex')}`;

await step('health', async () => {
  expectStatus(await call('GET', '/health'), 200);
});
await step('sign-up', async () => {
  expectStatus(await call('POST', '/users', { body: { email, password } }), 201);
});
await step('sign-in', async () => {
  state.user = expectStatus(await call('POST', '/sessions', { body: { email, password } }), 201).cookie;
  state.admin = expectStatus(await call('POST', '/sessions', { body: admin }), 201).cookie;
  if (!state.user || !state.admin) throw new Error('no session cookie');
});
await step('me', async () => {
  const me = expectStatus(await call('GET', '/me', { cookie: state.user! }), 200);
  if (me.body?.email !== email) throw new Error(`/me is ${JSON.stringify(me.body)}`);
});
await step('order confirmed', async () => {
  expectStatus(await call('PUT', `/items/${itemId}/stock`, { cookie: state.admin!, body: { quantity: 10, perUserLimit: 1 } }), 200);
  const order = expectStatus(await call('POST', `/items/${itemId}/orders`, { cookie: state.user!, body: { quantity: 1 }, headers: { 'idempotency-key': `smoke-${tag}` } }), 202);
  state.orderId = order.body.orderId;
  await until(async () => (await call('GET', `/orders/${state.orderId}`, { cookie: state.user! })).body?.status === 'confirmed', EVENTUALLY_WITHIN_MS, 'the order confirmed', EVENTUALLY_EVERY_MS);
});
await step('coupon', async () => {
  const now = Date.now();
  const deal = { title: 'Smoke deal', opensAt: new Date(now - 60_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString(), limit: 5 };
  expectStatus(await call('PUT', `/deals/${dealId}`, { cookie: state.admin!, body: deal }), 200);
  const coupon = expectStatus(await call('POST', `/deals/${dealId}/coupons`, { cookie: state.user! }), 201);
  await until(
    async () => JSON.stringify((await call('GET', '/me/coupons', { cookie: state.user! })).body).includes(coupon.body.couponId),
    EVENTUALLY_WITHIN_MS,
    'the coupon listed',
    EVENTUALLY_EVERY_MS,
  );
});
await step('catalog refresh', async () => {
  const title = `Smoke program ${tag}`;
  const page = () => call('GET', `/programs?careerTag=smoke-${tag}&page=1&size=20`);
  expectStatus(await page(), 200);
  const created = expectStatus(await call('POST', '/programs', { cookie: state.admin!, body: { title, careerTag: `smoke-${tag}`, type: 'course' } }), 201);
  state.programId = created.body.id;
  const listed = expectStatus(await page(), 200);
  if (!JSON.stringify(listed.body).includes(title)) throw new Error('the page did not show the new program right after the write');
  expectStatus(await call('PUT', `/programs/${state.programId}`, { cookie: state.admin!, body: { title: `${title} (renamed)`, careerTag: `smoke-${tag}`, type: 'course' } }), 200);
  if (!JSON.stringify((await page()).body).includes(`${title} (renamed)`)) throw new Error('the page did not show the change right after the write');
});
await step('inbound address', async () => {
  const address = expectStatus(await call('GET', '/me/inbox-address', { cookie: state.user! }), 200);
  if (!/^[^@\s]+@[^@\s]+$/.test(address.body?.address ?? '')) throw new Error(`no address: ${JSON.stringify(address.body)}`);
});
await step('sign-out', async () => {
  expectStatus(await call('DELETE', '/sessions/current', { cookie: state.user! }), 204);
  expectStatus(await call('GET', '/me', { cookie: state.user! }), 401);
});

const ok = steps.every((s) => s.ok);
process.stdout.write(`${JSON.stringify({ target: base, ok, item: itemId, deal: dealId, passed: steps.filter((s) => s.ok).length, failed: steps.filter((s) => !s.ok).length, steps })}\n`);
process.exitCode = ok ? 0 : 1;
