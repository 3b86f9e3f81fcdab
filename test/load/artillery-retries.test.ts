/**
 * The reference scenarios' buyers (load/artillery/reference.cjs) against a target whose answers go
 * missing or say "come back later": each sends its request again, an order under the same
 * Idempotency-Key, and records the id of whichever answer accepted it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INTERNAL_SERVER_ERROR } from '../../infra/twin/events/gateway';

type Step = (context: { vars: Record<string, unknown> }, events: { emit(kind: string, name: string, value?: number): void }) => Promise<void>;
const { placeOrder, askForCoupon } = createRequire(import.meta.url)('../../load/artillery/reference.cjs') as { placeOrder: Step; askForCoupon: Step };
type Ask = (
  name: string,
  context: { vars: Record<string, unknown> },
  events: { emit(kind: string, name: string, value?: number): void },
  request: { method: string; path: string; ceilinged?: boolean },
) => Promise<{ status: number }>;
const { askWithRetries } = createRequire(import.meta.url)('../../load/artillery/ask.cjs') as { askWithRetries: Ask };

interface Seen {
  at: number;
  idempotencyKey: string | undefined;
  from: string | undefined;
  userAgent: string | undefined;
}

let server: Server | undefined;
let seen: Seen[] = [];
let accepted: string;

/** A target that answers the n-th request as `answer` says; 'lose' keeps it unanswered. */
async function target(answer: (n: number, res: ServerResponse) => 'lose' | void): Promise<string> {
  server = createServer((req: IncomingMessage, res) => {
    req.resume();
    seen.push({
      at: performance.now(),
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      from: req.socket.remoteAddress,
      userAgent: req.headers['user-agent'],
    });
    answer(seen.length, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Runs one virtual user's step as Artillery would, with the scenario's variables; returns the counters it emitted. */
async function buyer(step: Step, url: string): Promise<Record<string, number>> {
  const counters: Record<string, number> = {};
  const events = { emit: (kind: string, name: string, value = 1) => void (kind === 'counter' && (counters[name] = (counters[name] ?? 0) + value)) };
  await step({ vars: { target: url, cookie: 'sid=buyer', timeoutSeconds: 1, attempts: 4, connections: 5 } }, events);
  return counters;
}

const recorded = () => readFileSync(accepted, 'utf8').split('\n').filter(Boolean);

beforeEach(() => {
  accepted = join(mkdtempSync(join(tmpdir(), 'surge-artillery-')), 'accepted.txt');
  writeFileSync(accepted, '');
  Object.assign(process.env, { SURGE_ACCEPTED_FILE: accepted, SURGE_ITEM: 'ref-item', SURGE_DEAL: 'ref-deal' });
  seen = [];
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('a reference run’s buyer', () => {
  it('says who it is (the prod web ACL blocks a request without a User-Agent), and to a loopback target comes from as many addresses as connections', async () => {
    // Prepare
    const url = await target((n, res) => json(res, 202, { orderId: `order-${n}`, status: 'pending' }));

    // Act: ten buyers over the scenario's five connections.
    await Promise.all(Array.from({ length: 10 }, () => buyer(placeOrder, url)));

    // Assess
    expect(new Set(seen.map((s) => s.userAgent))).toEqual(new Set(['Surge load test (Artillery)']));
    expect(new Set(seen.map((s) => s.from)).size).toBe(5);
    expect(seen.every((s) => s.from?.startsWith('127.0.'))).toBe(true);
  });

  it('sends an order left unanswered again under the same Idempotency-Key, and records what the retry learnt', async () => {
    // Prepare: the first answer never comes, as one past the client's timeout on a slow target
    const url = await target((n, res) => (n === 1 ? 'lose' : json(res, 202, { orderId: 'order-1', status: 'pending' })));

    // Act
    const counters = await buyer(placeOrder, url);

    // Assess
    expect(seen).toHaveLength(2);
    expect(seen[1]!.idempotencyKey).toBe(seen[0]!.idempotencyKey);
    expect(recorded()).toEqual(['order-1']);
    expect(counters).toMatchObject({
      'order.answered_after_retry': 1,
      'order.retries': 1,
      'order.retries_after.ETIMEDOUT': 1,
      'order.timeouts': 1,
      'http.codes.202': 1,
    });
  });

  it('comes back after a 503 no sooner than its Retry-After says', async () => {
    const url = await target((n, res) =>
      n === 1 ? json(res, 503, { error: { code: 'UNAVAILABLE' } }, { 'retry-after': '1' }) : json(res, 202, { orderId: 'order-2' }),
    );

    const counters = await buyer(placeOrder, url);

    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(1_000);
    expect(seen[1]!.idempotencyKey).toBe(seen[0]!.idempotencyKey);
    expect(recorded()).toEqual(['order-2']);
    expect(counters).toMatchObject({ 'order.answered_after_retry': 1, 'order.retries_after.503': 1, 'http.codes.503': 1 });
  });

  it("sends an order API Gateway answered 500 again under the same Idempotency-Key: the order route's function has a ceiling", async () => {
    // Prepare: API Gateway's own 500, as to an invocation Lambda throttled past the function's ceiling.
    const url = await target((n, res) =>
      n === 1 ? void res.writeHead(500, { 'content-type': 'application/json' }).end(INTERNAL_SERVER_ERROR) : json(res, 202, { orderId: 'order-3' }),
    );

    // Act
    const counters = await buyer(placeOrder, url);

    // Assess
    expect(seen).toHaveLength(2);
    expect(seen[1]!.idempotencyKey).toBe(seen[0]!.idempotencyKey);
    expect(recorded()).toEqual(['order-3']);
    expect(counters).toMatchObject({ 'order.answered_after_retry': 1, 'order.retries_after.500': 1, 'http.codes.500': 1 });
  });

  it("takes API Gateway's 500 as the answer on a route whose function has no ceiling: there only a fault gives it", async () => {
    // Prepare
    const url = await target((_, res) => void res.writeHead(500, { 'content-type': 'application/json' }).end(INTERNAL_SERVER_ERROR));
    const events = { emit: () => undefined };

    // Act
    const answer = await askWithRetries('status', { vars: { target: url, timeoutSeconds: 1, attempts: 4, connections: 5 } }, events, {
      method: 'GET',
      path: '/items/ref-item/queue/me',
    });

    // Assess
    expect(answer.status).toBe(500);
    expect(seen).toHaveLength(1);
  });

  it("ends the buyer at a function's own 500, which no one said may be sent again", async () => {
    // Prepare
    const url = await target((_, res) => json(res, 500, { error: { code: 'INTERNAL', message: 'Internal error' } }));

    // Act
    const failure = await buyer(placeOrder, url).catch((error: NodeJS.ErrnoException) => error);

    // Assess
    expect(failure).toMatchObject({ code: 'unexpected_500' });
    expect(seen).toHaveLength(1);
    expect(recorded()).toEqual([]);
  });

  it('records the coupon a lost answer issued, as the retry’s 409 ALREADY_ISSUED names it', async () => {
    const url = await target((n, res) =>
      n === 1
        ? 'lose'
        : json(res, 409, { error: { code: 'ALREADY_ISSUED', message: 'You already hold a coupon of this deal', details: { couponId: 'coupon-1' } } }),
    );

    const counters = await buyer(askForCoupon, url);

    expect(recorded()).toEqual(['coupon-1']);
    expect(counters).toMatchObject({ 'coupon.answered_after_retry': 1 });
  });

  it('fails, having tried a bounded number of times, when no answer ever comes', async () => {
    const url = await target(() => 'lose');

    const failure = await buyer(placeOrder, url).catch((error: NodeJS.ErrnoException) => error);

    expect(failure).toMatchObject({ code: 'ETIMEDOUT' });
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((s) => s.idempotencyKey)).size).toBe(1);
    expect(recorded()).toEqual([]);
  });

  it('takes a first answer of 202 or 409 as it comes, without retrying', async () => {
    const url = await target((n, res) => json(res, 409, { error: { code: 'SOLD_OUT' } }));

    const counters = await buyer(placeOrder, url);

    expect(seen).toHaveLength(1);
    expect(recorded()).toEqual([]);
    expect(counters['order.retries']).toBeUndefined();
  });
});
