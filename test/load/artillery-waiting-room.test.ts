/**
 * The waiting-room scenario's buyer (load/artillery/waiting-room.cjs) against a target that plays
 * the room: it polls at the interval each answer names, claims its pass at its turn and orders
 * with it, stops at sold out, retries what it may, and counts what the run's invariants read.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

type Step = (context: { vars: Record<string, unknown> }, events: { emit(kind: string, name: string, value?: number): void }) => Promise<void>;
const { waitInRoom } = createRequire(import.meta.url)('../../load/artillery/waiting-room.cjs') as { waitInRoom: Step };

interface Seen {
  at: number;
  route: string;
  headers: IncomingHttpHeaders;
}

let server: Server | undefined;
let seen: Seen[] = [];
let accepted: string;

/** A target that answers each request as `answer` says, given its route (`POST /queue`, …) and how many of that route came before. */
async function room(answer: (route: string, n: number, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    const route = `${req.method} ${req.url!.replace('/items/room-item', '')}`;
    seen.push({ at: performance.now(), route, headers: req.headers });
    answer(route, seen.filter((s) => s.route === route).length, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const waiting = (soldOut = false) => ({ state: 'waiting', soldOut, refreshSeconds: 1 });

/** Runs one virtual user as Artillery would, the shares set as given; returns the counters it emitted. */
async function buyer(
  url: string,
  shares: { rogueShare?: number; neverOrdersShare?: number; stopsPollingShare?: number } = {},
): Promise<Record<string, number>> {
  const counters: Record<string, number> = {};
  const events = { emit: (kind: string, name: string, value = 1) => void (kind === 'counter' && (counters[name] = (counters[name] ?? 0) + value)) };
  const vars = {
    target: url,
    cookie: 'sid=buyer',
    timeoutSeconds: 1,
    attempts: 4,
    connections: 5,
    giveUpSeconds: 60,
    rogueShare: 0,
    neverOrdersShare: 0,
    stopsPollingShare: 0,
    ...shares,
  };
  await waitInRoom({ vars }, events);
  return counters;
}

const recorded = () => readFileSync(accepted, 'utf8').split('\n').filter(Boolean);

beforeEach(() => {
  accepted = join(mkdtempSync(join(tmpdir(), 'surge-artillery-room-')), 'accepted.txt');
  writeFileSync(accepted, '');
  Object.assign(process.env, { SURGE_ACCEPTED_FILE: accepted, SURGE_ITEM: 'room-item', SURGE_ROOM_OPENS_AT: new Date(Date.now() + 60_000).toISOString() });
  seen = [];
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('a waiting-room run’s buyer', () => {
  it('polls at the interval each answer names until admitted, then orders once with its pass, and records the order', async () => {
    // Prepare: two answers say wait, the third admits; a status read answered 503 is asked again after its Retry-After
    const url = await room((route, n, res) => {
      if (route === 'POST /queue') return json(res, 201, { position: 7 });
      if (route === 'GET /queue/me' && n === 2) return json(res, 503, { error: { code: 'UNAVAILABLE' } }, { 'retry-after': '0' });
      if (route === 'GET /queue/me') return json(res, 200, n < 4 ? waiting() : { state: 'admitted', soldOut: false, refreshSeconds: 1 });
      if (route === 'POST /queue/pass') return json(res, 200, { token: 'AAAAAAAAAAAAAAAAAAAAAA', expiresAt: new Date().toISOString() });
      json(res, 202, { orderId: 'order-1', status: 'pending' });
    });

    // Act
    const counters = await buyer(url);

    // Assess
    expect(seen.map((s) => s.route)).toEqual([
      'POST /queue',
      'GET /queue/me',
      'GET /queue/me',
      'GET /queue/me',
      'GET /queue/me',
      'POST /queue/pass',
      'POST /orders',
    ]);
    const reads = seen.filter((s) => s.route === 'GET /queue/me');
    expect(reads[1]!.at - reads[0]!.at).toBeGreaterThanOrEqual(990);
    const order = seen.at(-1)!.headers;
    expect(order['waiting-room-pass']).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(order['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(recorded()).toEqual(['order-1']);
    expect(counters).toMatchObject({
      'room.joins': 1,
      'room.joins_before_opening': 1,
      'room.status_reads': 3,
      'room.admitted': 1,
      'room.passes': 1,
      'room.orders_accepted': 1,
      'status.retries_after.503': 1,
    });
  });

  it('stops polling once told the room is sold out, and counts a place lost at the claim as lost while polling', async () => {
    const soldOut = await room((route, n, res) => (route === 'POST /queue' ? json(res, 200, { position: 3 }) : json(res, 200, waiting(n > 1))));
    expect(await buyer(soldOut)).toMatchObject({ 'room.status_reads': 2, 'room.sold_out_seen': 1 });
    server!.closeAllConnections();
    server!.close();

    seen = [];
    const lost = await room((route, _n, res) =>
      route === 'POST /queue'
        ? json(res, 201, { position: 1 })
        : route === 'GET /queue/me'
          ? json(res, 200, { state: 'admitted', soldOut: false, refreshSeconds: 1 })
          : json(res, 409, { error: { code: 'PLACE_LOST' } }),
    );
    expect(await buyer(lost)).toMatchObject({ 'room.admitted': 1, 'room.lost_while_polling': 1 });
    expect(recorded()).toEqual([]);
  });

  it('as a rogue, orders without a valid pass first: a 403 is counted refused, a 202 counted accepted and recorded for the audit', async () => {
    const refusing = await room((route, _n, res) =>
      route === 'POST /orders' ? json(res, 403, { error: { code: 'PASS_REQUIRED' } }) : json(res, 409, { error: { code: 'SOLD_OUT' } }),
    );
    expect(await buyer(refusing, { rogueShare: 1 })).toMatchObject({ 'room.rogue_orders_refused': 1, 'room.joins_sold_out': 1 });
    server!.closeAllConnections();
    server!.close();

    const accepting = await room((route, _n, res) =>
      route === 'POST /orders' ? json(res, 202, { orderId: 'rogue-1' }) : json(res, 409, { error: { code: 'SOLD_OUT' } }),
    );
    expect(await buyer(accepting, { rogueShare: 1 })).toMatchObject({ 'room.rogue_orders_accepted': 1 });
    expect(recorded()).toEqual(['rogue-1']);
  });
});
