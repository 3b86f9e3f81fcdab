import { randomBytes } from 'node:crypto';
import type { Request } from 'autocannon';
import { demoAccounts, insertUsers } from '../../infra/twin/seed';
import { drive, type LoadResult } from './measure';
import { currentTimeline } from './timeline';
import { twinEnvironment } from '../../infra/twin/running';
import type { BenchTwin, TwinInfo } from './twin';
import { cookieValue, createSession } from '../../shared/sessions/store';
import { MAX_BUYERS_PER_REQUEST } from '../../shared/sessions/load-test-buyers';
import { redis } from '../../shared/platform/clients/redis';
import { db } from '../../shared/platform/clients/mysql';
import { signedIn } from '../../infra/client/client';

/** Points the shared modules this bench imports (session store, scripts, baselines) at the twin. */
export function pointAtTwin(twin: TwinInfo, extra: Record<string, string> = {}): void {
  Object.assign(process.env, twinEnvironment(twin), extra);
}

/** Closes the shared modules' own clients, so the bench exits once the twin is gone. */
export async function releaseSharedClients(): Promise<void> {
  redis().disconnect();
  await db().end();
}

/**
 * A setup call made as a well-behaved client makes it: a 503 or a 429 (retry-safe, with a
 * Retry-After) is sent again after the time it names, for up to a minute. Cold instances of
 * Lambda's instance model, all starting on two cores, answer some. The measured load never retries:
 * it counts them.
 */
export async function fetchAnswered(url: string, init?: RequestInit): Promise<Response> {
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(url, init);
    if ((response.status !== 503 && response.status !== 429) || Date.now() > giveUpAt) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
  }
}

/** The demo admin's session cookie, signed in over HTTP. */
export async function adminCookie(twin: TwinInfo): Promise<string> {
  return (await signedIn(twin.url, demoAccounts.find((a) => a.role === 'admin')!)).cookie;
}

export async function adminPut(twin: TwinInfo, cookie: string, path: string, payload: unknown): Promise<void> {
  const res = await fetch(`${twin.url}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(payload),
  });
  if (res.status !== 200) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

/**
 * Distinct users, each with a live session: inserted into MySQL in one statement and signed in
 * through the session store (signing 10,000 users in over HTTP would spend minutes hashing).
 */
export async function signedInCrowd(twin: TwinInfo, count: number): Promise<{ ids: number[]; cookies: string[] }> {
  const tag = randomBytes(3).toString('hex');
  const users = await insertUsers(
    twin.databaseUrl,
    Array.from({ length: count }, (_, i) => `crowd-${tag}-${i}@surge.test`),
    `crowd-${tag}`,
  );
  // A bounded number at once: thousands sent together queue behind each other in Redis, and on a
  // busy machine the last outwait the client's 1 s command timeout.
  const cookies: string[] = new Array(users.length);
  const failed = await inParallel(users.length, SESSIONS_IN_FLIGHT, async (i) => (cookies[i] = `sid=${cookieValue(await createSession(users[i]!))}`));
  if (failed) throw new Error(`${failed} of ${users.length} sessions could not be created`);
  return { ids: users.map((u) => u.id), cookies };
}

const SESSIONS_IN_FLIGHT = 100;

/**
 * Distinct users, each with a live session, created by the twin itself (`POST
 * /admin/load-tests/buyers`, where load tests are allowed): the sessions are written by the
 * release that twin runs, in its format, where signedInCrowd writes this checkout's.
 */
export async function signedInCrowdByTwin(twin: TwinInfo, count: number): Promise<{ ids: number[]; cookies: string[] }> {
  const admin = await adminCookie(twin);
  const buyers: { userId: number; cookie: string }[] = [];
  while (buyers.length < count) {
    const response = await fetchAnswered(`${twin.url}/admin/load-tests/buyers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin },
      body: JSON.stringify({ count: Math.min(count - buyers.length, MAX_BUYERS_PER_REQUEST) }),
    });
    if (response.status !== 201) throw new Error(`POST /admin/load-tests/buyers: ${response.status} ${await response.text()}`);
    buyers.push(...((await response.json()) as { buyers: { userId: number; cookie: string }[] }).buyers);
  }
  return { ids: buyers.map((b) => b.userId), cookies: buyers.map((b) => b.cookie) };
}

/**
 * An autocannon request ordering one unit of an item for the next member of a crowd: the crowd's
 * cookies in turn, each order its own Idempotency-Key (`<keyPrefix>-<n>`). `counter` is shared with
 * whatever else reads which member is next.
 */
export function orderRequest(itemId: string, cookies: string[], keyPrefix: string, counter = { next: 0 }): Request {
  return {
    method: 'POST',
    path: `/items/${itemId}/orders`,
    body: '{"quantity":1}',
    setupRequest: (req) => {
      const i = counter.next++;
      return { ...req, headers: { 'content-type': 'application/json', cookie: cookies[i % cookies.length]!, 'idempotency-key': `${keyPrefix}-${i}` } };
    },
  };
}

export interface RaceResult {
  load: LoadResult;
  statuses: Record<string, number>;
  /** The id each successful answer named (order id, coupon id). */
  ids: string[];
}

/**
 * Every member of the crowd sends one POST, as fast as the machine allows. With `remaining`, what
 * is left of the stock is sampled into the run's timeline while the race runs.
 */
export async function race(
  twin: BenchTwin,
  options: {
    path: string;
    cookies: string[];
    connections: number;
    body?: string;
    idempotencyPrefix?: string;
    idField: string;
    remaining?: () => Promise<number>;
  },
  label: string,
  log: (message: string) => void,
): Promise<RaceResult> {
  let next = 0;
  const statuses: Record<string, number> = {};
  const ids: string[] = [];
  const count = options.cookies.length;
  const timeline = currentTimeline();
  const driven = drive(
    {
      url: twin.url,
      connections: options.connections,
      amount: count,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          path: options.path,
          ...(options.body ? { body: options.body } : {}),
          setupRequest: (req) => {
            const i = next++ % count;
            const headers: Record<string, string> = { cookie: options.cookies[i]! };
            if (options.body) headers['content-type'] = 'application/json';
            if (options.idempotencyPrefix) headers['idempotency-key'] = `${options.idempotencyPrefix}-${i}`;
            return { ...req, headers };
          },
          onResponse: (status, body) => {
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status >= 200 && status < 300) ids.push(JSON.parse(body)[options.idField]);
          },
        },
      ],
    },
    label,
    log,
  );
  const load = await (timeline && options.remaining ? timeline.sampleStock(label, options.remaining, driven) : driven);
  return { load, statuses, ids };
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { value, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

/**
 * Runs fn(0..count-1) with `concurrency` in flight; returns how many failed. With a label, each
 * call's latency goes to the run's timeline as a phase of its own (a closed loop, as autocannon's).
 */
export async function inParallel(count: number, concurrency: number, fn: (i: number) => Promise<unknown>, label?: string): Promise<number> {
  const phase = label ? currentTimeline()?.startPhase(label, 'closed', `in-process, ${concurrency} in flight`) : undefined;
  let next = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const start = performance.now();
        await fn(i).catch(() => (failures += 1));
        phase?.answer(performance.now() - start);
      }
    }),
  );
  phase?.end();
  return failures;
}

/** SQS calls the twin made so far, counted by the emulator, by action; with the messages sent and the requests SQS would bill (a request per 64 KB chunk). */
export async function emulatorCalls(twin: BenchTwin): Promise<Record<string, number>> {
  const stats = (await (await fetch(`${twin.emulatorUrl}/__twin/stats`)).json()) as {
    calls: Record<string, number>;
    messagesSent: number;
    sqsBilledRequests: number;
  };
  return { ...stats.calls, messages_sent: stats.messagesSent, sqs_billed_requests: stats.sqsBilledRequests };
}

/**
 * How reservations reached the writer while `run` ran: SQS messages per reservation (the twin's
 * shared instance packs concurrent ones together; Lambda's instance model sends each alone) and
 * the writer's batches (one DeleteMessageBatch per batch its event source mapping handed it).
 */
export async function handOffShape<T>(
  twin: BenchTwin,
  reservations: (result: T) => number,
  run: () => Promise<T>,
): Promise<{ result: T; messages_per_reservation: number; writer_batches: number }> {
  const before = await emulatorCalls(twin);
  const result = await run();
  const after = await emulatorCalls(twin);
  const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
  return {
    result,
    messages_per_reservation: Math.round((delta('messages_sent') / Math.max(1, reservations(result))) * 1000) / 1000,
    writer_batches: delta('DeleteMessageBatch'),
  };
}
