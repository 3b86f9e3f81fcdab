import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { demoAccounts, demoDeal, demoItem } from '../../infra/twin/seed';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { parseSessionCookie, sessionKey } from '../../shared/sessions/store';
import { requestsTo, type FuzzRequest, type Operation, type Principal } from '../support/fuzz/requests';
import { watchStoreWrites, type StoreWrites } from '../support/fuzz/store-writes';

/*
 * Property-based fuzzing of every route, from the document the twin serves: valid requests and
 * mutations of them (test/support/fuzz/requests.ts), as a buyer, an admin and nobody, through the
 * twin's gateway, which holds every answer to the document (infra/openapi/contract-under-test.ts)
 * and answers 500 for one that breaks it. The properties:
 *   - no 5xx;
 *   - every 4xx carries a JSON error body: Surge's {"error":{code,message}}, or API Gateway's {"message"};
 *     or, where the document gives the route an HTML page for that status (the waiting page's 404), that page;
 *   - a refused request writes nothing but what the document says it counts: the rate and lockout
 *     counters, and the sliding of the caller's own session.
 * `npm run fuzz -- --runs N --seed S` runs it longer (test/fuzz.mjs); in `npm test` each route gets
 * a few runs, and the routes whose every call costs a password hash or creates accounts fewer.
 */

const RUNS = Number(process.env.SURGE_FUZZ_RUNS ?? 6);
/** When to give up: a second a request on a machine four times slower than the fastest, busy besides. */
const GIVE_UP_MS = Math.max(180_000, RUNS * 40 * 1_000);
const SEED = Number(process.env.SURGE_FUZZ_SEED ?? randomBytes(4).readUInt32BE() >>> 1);
/** Each call hashes a password (sign-in, sign-up) or creates accounts (the load-test buyers). */
const COSTLY = new Set(['create-session', 'create-user', 'create-load-test-buyers']);
/** Ends the caller's sessions: fuzzed last, and the principals signed in again after. */
const ENDS_SESSIONS = new Set(['delete-current-session', 'delete-all-sessions']);

/**
 * Writes a refused request may make, as `<event> <key>`: the rate and lockout counters; on an item
 * split into buckets the stock an order moves between them before it finds too little in all (a
 * move keeps the item's stock whole: docs/api.md, "One hot item beyond one shard"); and a waiting
 * room's advance, which any route of the room may run at most once a second a room, checkpointing
 * its frontier and dropping expired passes (docs/waiting-room.md, "A read writes nothing").
 */
const MAY_WRITE_WHEN_REFUSED = [
  /^\S+ .*:rate:/,
  /^\S+ \{ip:[^}]+\}:/,
  /^\S+ \{item:[^}#]+#\d+\.\d+\}:(sale|moves|moved-in:.+)$/,
  /^\S+ \{item:[^}]+\}:(room|turns)$/,
  /^zremrangebyscore \{item:[^}]+\}:passes$/,
];

/**
 * Tables an answer of these codes may write: ALREADY_ISSUED names the coupon the buyer holds, and
 * one still on its way to the writer is promised to it first, on the ledger (docs/api.md, "A retry").
 */
const TABLES_WRITTEN_BY: Record<string, string[]> = { ALREADY_ISSUED: ['reservation_ledger'] };

/**
 * Keys an answer of these codes may write: ALREADY_ISSUED of a coupon still on its way sets its
 * holder again, the same value, so that the WAIT after it covers the coupon (coupon-issue-5.lua).
 */
const KEYS_WRITTEN_BY: Record<string, RegExp[]> = { ALREADY_ISSUED: [/^hset \{deal:[^}]+\}:holders$/] };

const errorCodeOf = (answer: Answer) => {
  try {
    return String((JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code ?? '');
  } catch {
    return '';
  }
};

interface Answer {
  status: number;
  type: string;
  body: string;
}

function send(base: string, fuzz: FuzzRequest, cookie: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = {
      ...fuzz.headers,
      ...(cookie ? { cookie } : {}),
      ...(fuzz.body !== undefined ? { 'content-length': String(Buffer.byteLength(fuzz.body)) } : {}),
    };
    const req = request(`${base}${fuzz.target}`, { method: fuzz.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(fuzz.body);
  });
}

/** Whether a 4xx's body is an error body: Surge's, or API Gateway's own; or the HTML page the document declares for the status. */
function isErrorBody(answer: Answer, operation: Operation): boolean {
  if (answer.type.startsWith('text/html')) return operation.responses?.[String(answer.status)]?.content?.['text/html'] !== undefined;
  try {
    const body = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown }; message?: unknown };
    return (typeof body.error?.code === 'string' && typeof body.error.message === 'string') || typeof body.message === 'string';
  } catch {
    return false;
  }
}

describe('every route, fuzzed from the document', () => {
  let twin: Twin;
  let writes: StoreWrites;
  const stateDir = `.local/test-fuzz-${randomBytes(3).toString('hex')}`;
  const cookies: Partial<Record<Principal, string>> = {};
  /** Requests sent, by route and status, for the summary. */
  const counts = new Map<string, number>();
  /** The first request and answer of each route and status, printed by a longer run (npm run fuzz). */
  const samples = new Map<string, string>();

  const signIn = async () => {
    for (const [as, role] of [
      ['buyer', 'user'],
      ['admin', 'admin'],
    ] as const) {
      const account = demoAccounts.find((a) => a.role === role)!;
      const res = await fetch(`${twin.url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: account.email, password: account.password }),
      });
      cookies[as] = res.headers.getSetCookie()[0]!.split(';')[0];
    }
  };
  /** The Redis keys of the principals' own sessions, which a use slides. */
  const ownSessionKeys = () => Object.values(cookies).map((cookie) => sessionKey(parseSessionCookie(cookie!.slice(cookie!.indexOf('=') + 1))!));

  beforeAll(async () => {
    twin = await startTwin({
      port: 0,
      smtpPort: 0,
      stateDir,
      database: 'surge_fuzz',
      consumers: 'off',
      schedules: false,
      durableRedis: false,
      queuePrefix: 'fuzz-',
    });
    await signIn();
    writes = await watchStoreWrites(twin.redisUrl, twin.databaseUrl);
    console.info(`fuzz: seed ${SEED}, ${RUNS} runs a route (SURGE_FUZZ_SEED=${SEED} repeats it)`);
  }, 300_000);
  afterAll(async () => {
    await writes?.close();
    await twin?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
    const byStatus = new Map<string, number>();
    for (const [key, n] of counts) byStatus.set(key.split(' ').pop()!, (byStatus.get(key.split(' ').pop()!) ?? 0) + n);
    const routes = new Set([...counts.keys()].map((key) => key.split(' ').slice(0, 2).join(' ')));
    console.info(
      `fuzz: ${total} requests to ${routes.size} routes; by status ${[...byStatus]
        .sort()
        .map(([status, n]) => `${status} ×${n}`)
        .join(', ')}`,
    );
    console.info(`fuzz: by route and status: ${[...counts].map(([key, n]) => `${key} ×${n}`).join('; ')}`);
    if (process.env.SURGE_FUZZ_RUNS) console.info(`fuzz: a sample of each:\n${[...samples].map(([key, sample]) => `${key}: ${sample}`).join('\n')}`);
  });

  it(
    'covers every route of the table, answering none with a 5xx, every refusal with its error body, and storing nothing refused but counters',
    async () => {
      // Prepare: the document as a client reads it, and its operations, the session-ending last.
      const document = (await (await fetch(`${twin.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
      };
      const operations: Operation[] = Object.entries(document.paths)
        .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ ...operation, method, path })))
        .sort((a, b) => Number(ENDS_SESSIONS.has(a.operationId)) - Number(ENDS_SESSIONS.has(b.operationId)));
      const known = { itemId: [demoItem.id], dealId: [demoDeal.id], programId: ['1', '2', '120'] };
      const fuzzed = new Set<string>();

      // Act and Assess, request by request.
      for (const operation of operations) {
        const runs = COSTLY.has(operation.operationId) ? Math.max(1, Math.ceil(RUNS / 4)) : RUNS;
        // Each route's first request is a valid one, as whom its access asks for: every route's success path is reached.
        const [valid] = fc.sample(requestsTo(operation, document, known, false), { numRuns: 1, seed: SEED });
        await fc.assert(
          fc.asyncProperty(requestsTo(operation, document, known), async (fuzz) => {
            await writes.since();
            const answer = await send(twin.url, fuzz, fuzz.as === 'nobody' ? undefined : cookies[fuzz.as]);
            const written = await writes.since();
            const key = `${operation.method.toUpperCase()} ${operation.path} ${answer.status}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
            const what = `${fuzz.method} ${fuzz.target.slice(0, 200)} as ${fuzz.as} (${fuzz.mutation}) answered ${answer.status}: ${answer.body.slice(0, 400)}`;
            if (!samples.has(key))
              samples.set(
                key,
                `${fuzz.method} ${fuzz.target.slice(0, 80)} as ${fuzz.as} (${fuzz.mutation}) ${fuzz.body?.slice(0, 80) ?? ''} → ${answer.body.slice(0, 160)}`,
              );

            expect(answer.status, what).toBeLessThan(500);
            if (answer.status >= 400) {
              expect(isErrorBody(answer, operation), `${what}: not an error body`).toBe(true);
              const own = new Set(ownSessionKeys());
              const mayWrite = [...MAY_WRITE_WHEN_REFUSED, ...(KEYS_WRITTEN_BY[errorCodeOf(answer)] ?? [])];
              const stored = written.keys.filter((event) => !mayWrite.some((allowed) => allowed.test(event)) && !own.has(event.slice(event.indexOf(' ') + 1)));
              const allowedTables = TABLES_WRITTEN_BY[errorCodeOf(answer)] ?? [];
              const tables = written.tables.filter((table) => !allowedTables.includes(table));
              expect({ keys: stored, tables }, `${what}: a refused request stored this`).toEqual({ keys: [], tables: [] });
            }
            if (ENDS_SESSIONS.has(operation.operationId) && answer.status < 300) await signIn();
          }),
          { numRuns: runs, seed: SEED, endOnFailure: true, examples: [[valid!]] },
        );
        fuzzed.add(operation.operationId);
      }

      const routes = functions.filter((spec) => spec.trigger.kind === 'http').map((spec) => spec.id);
      expect([...fuzzed].sort()).toEqual(routes.sort());
    },
    GIVE_UP_MS,
  );
});
