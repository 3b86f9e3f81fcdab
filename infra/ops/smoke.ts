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
import { expectData, expectStatus, signedIn, surgeClient, type SurgeClient } from '../client/client';
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
  process.stderr.write(
    'usage: npm run smoke -- <base URL> [--admin-secret-file F | --admin-email E (password in SURGE_ADMIN_PASSWORD)] [--item ID] [--deal ID]\n',
  );
  process.exit(2);
}
const demoAdmin = demoAccounts.find((a) => a.role === 'admin')!;
const admin: { email: string; password: string } = values['admin-secret-file']
  ? JSON.parse(readFileSync(values['admin-secret-file'], 'utf8'))
  : { email: values['admin-email'] ?? demoAdmin.email, password: process.env.SURGE_ADMIN_PASSWORD ?? demoAdmin.password };

const tag = randomBytes(4).toString('hex');
const itemId = values.item ?? `smoke-${tag}`;
const dealId = values.deal ?? `smoke-${tag}`;

/** How long a step waits for what shows only some time after its answer (an order confirmed, a coupon listed), asked every EVENTUALLY_EVERY_MS. */
const EVENTUALLY_WITHIN_MS = 30_000;
const EVENTUALLY_EVERY_MS = 250;

const steps: { step: string; ok: boolean; ms: number; error?: string }[] = [];
/** The two sessions the steps after sign-in call as. */
const state: { user?: SurgeClient; admin?: SurgeClient } = {};

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

const api = surgeClient(base);

await step('health', async () => {
  expectStatus(await api.GET('/health'), 200);
});
await step('sign-up', async () => {
  expectStatus(await api.POST('/users', { body: { email, password } }), 201);
});
await step('sign-in', async () => {
  state.user = (await signedIn(base, { email, password })).client;
  state.admin = (await signedIn(base, admin)).client;
});
await step('me', async () => {
  const me = expectData(await state.user!.GET('/me'), 200);
  if (me.email !== email) throw new Error(`/me is ${JSON.stringify(me)}`);
});
await step('order confirmed', async () => {
  expectStatus(await state.admin!.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 10, perUserLimit: 1 } }), 200);
  const { orderId } = expectData(
    await state.user!.POST('/items/{itemId}/orders', { params: { path: { itemId }, header: { 'idempotency-key': `smoke-${tag}` } }, body: { quantity: 1 } }),
    202,
  );
  await until(
    async () => (await state.user!.GET('/orders/{orderId}', { params: { path: { orderId } } })).data?.status === 'confirmed',
    EVENTUALLY_WITHIN_MS,
    'the order confirmed',
    EVENTUALLY_EVERY_MS,
  );
});
await step('coupon', async () => {
  const now = Date.now();
  const deal = { title: 'Smoke deal', opensAt: new Date(now - 60_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString(), limit: 5 };
  expectStatus(await state.admin!.PUT('/deals/{dealId}', { params: { path: { dealId } }, body: deal }), 200);
  const coupon = expectData(await state.user!.POST('/deals/{dealId}/coupons', { params: { path: { dealId } } }), 201);
  await until(
    async () => (await state.user!.GET('/me/coupons')).data?.coupons.some((listed) => listed.couponId === coupon.couponId),
    EVENTUALLY_WITHIN_MS,
    'the coupon listed',
    EVENTUALLY_EVERY_MS,
  );
});
await step('catalog refresh', async () => {
  const title = `Smoke program ${tag}`;
  const careerTag = `smoke-${tag}`;
  const titles = async () =>
    expectData(await api.GET('/programs', { params: { query: { careerTag, page: 1, size: 20 } } }), 200).items.map((program) => program.title);
  // Read once before the write, so the page is cached and the reads after it show whether the write refreshed it.
  await titles();
  const created = expectData(await state.admin!.POST('/programs', { body: { title, careerTag, type: 'course' } }), 201);
  if (!(await titles()).includes(title)) throw new Error('the page did not show the new program right after the write');
  expectStatus(
    await state.admin!.PUT('/programs/{id}', { params: { path: { id: created.id } }, body: { title: `${title} (renamed)`, careerTag, type: 'course' } }),
    200,
  );
  if (!(await titles()).includes(`${title} (renamed)`)) throw new Error('the page did not show the change right after the write');
});
await step('inbound address', async () => {
  const { address } = expectData(await state.user!.GET('/me/inbox-address'), 200);
  if (!/^[^@\s]+@[^@\s]+$/.test(address)) throw new Error(`no address: ${JSON.stringify(address)}`);
});
await step('sign-out', async () => {
  expectStatus(await state.user!.DELETE('/sessions/current'), 204);
  expectStatus(await state.user!.GET('/me'), 401);
});

const ok = steps.every((s) => s.ok);
process.stdout.write(
  `${JSON.stringify({ target: base, ok, item: itemId, deal: dealId, passed: steps.filter((s) => s.ok).length, failed: steps.filter((s) => !s.ok).length, steps })}\n`,
);
process.exitCode = ok ? 0 : 1;
