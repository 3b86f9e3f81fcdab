/**
 * The hot paths, driven the same way against any checkout's twin (load/compare.ts): only routes,
 * tables and seed helpers that round one's end (7ace490) and today share. Users, sessions and
 * inbox tokens are made by the checkout's own seed and session store, so each twin reads what it
 * wrote. Each path is one measured window (startCpuMeter) under its own name.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { createTransport } from 'nodemailer';
import type { Request } from 'autocannon';
import type { TwinInfo } from '../../infra/twin/twin-process';
import { until } from '../../shared/platform/wait';
import { startCpuMeter } from './cpu';
import { drive, type LoadResult } from './measure';
import { round } from './round';

export const HOT_PATHS = ['sessions', 'catalog', 'orders', 'mail'] as const;
export type HotPath = (typeof HOT_PATHS)[number];

export interface HotPathOptions {
  /** The checkout whose twin runs, for its seed and session store. */
  checkout: string;
  /** The seed module's path in it (moved between rounds). */
  seedModule: string;
  connections: number;
  durationS: number;
  buyers: number;
  mails: number;
  /** The orders path's item split into this many buckets (a hot item on a cluster); absent: whole, as round one's twin knows it. */
  buckets?: number;
  log(message: string): void;
}

interface Seed {
  insertUsers(databaseUrl: string, emails: string[], password: string): Promise<{ id: number; email: string; role: 'user' | 'admin' }[]>;
  insertInboxTokens(databaseUrl: string, userIds: number[]): Promise<string[]>;
}
interface SessionStore {
  createSession(user: { id: number; role: 'user' | 'admin'; email: string }): Promise<unknown>;
  cookieValue(handle: unknown): string;
}

const WARM_UP_S = 3;
const SESSION_USERS = 200;
const CATALOG_PATHS = ['backend', 'frontend', 'data', 'devops', 'design', 'product'].map((tag) => `/programs?careerTag=${tag}&page=1&size=20`);

const load = <T>(options: HotPathOptions, path: string) => import(pathToFileURL(join(options.checkout, path)).href) as Promise<T>;

async function crowd(twin: TwinInfo, options: HotPathOptions, count: number): Promise<string[]> {
  const seed = await load<Seed>(options, options.seedModule);
  const store = await load<SessionStore>(options, 'shared/sessions/store.ts');
  const tag = randomBytes(3).toString('hex');
  const users = await seed.insertUsers(
    twin.databaseUrl,
    Array.from({ length: count }, (_, i) => `hot-${tag}-${i}@surge.test`),
    `hot-${tag}-password`,
  );
  const cookies: string[] = [];
  for (let i = 0; i < users.length; i += 100) {
    cookies.push(...(await Promise.all(users.slice(i, i + 100).map(async (u) => `sid=${store.cookieValue(await store.createSession(u))}`))));
  }
  return cookies;
}

/** A steady load, warmed up unmeasured first. */
async function steady(twin: TwinInfo, options: HotPathOptions, name: HotPath, requests: { path: string; cookie?: () => string }[]): Promise<LoadResult> {
  const spec = (durationS: number) => ({
    url: twin.url,
    connections: options.connections,
    duration: durationS,
    requests: requests.map(
      (r): Request => ({
        method: 'GET',
        path: r.path,
        ...(r.cookie ? { setupRequest: (req: Request) => ({ ...req, headers: { cookie: r.cookie!() } }) } : {}),
      }),
    ),
  });
  await drive(spec(WARM_UP_S), `${name} (warm-up)`, options.log);
  const cpu = startCpuMeter(twin.pids, name);
  const run = await drive(spec(options.durationS), name, options.log);
  cpu.perRequest(run.requests);
  return run;
}

async function adminCookie(twin: TwinInfo): Promise<string> {
  const res = await fetch(`${twin.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@surge.test', password: 'surge-admin-password' }),
  });
  if (res.status !== 201) throw new Error(`admin sign-in: ${res.status}`);
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

/** Every buyer of the crowd orders one unit of a fresh item; measured until the writer has stored every accepted order. */
async function ordersRace(
  twin: TwinInfo,
  options: HotPathOptions,
  cookies: string[],
  measured: boolean,
): Promise<LoadResult & { accepted: number; stored: number }> {
  const itemId = `hot-${randomBytes(4).toString('hex')}`;
  const admin = await adminCookie(twin);
  const put = await fetch(`${twin.url}/items/${itemId}/stock`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', cookie: admin },
    body: JSON.stringify({ quantity: cookies.length, perUserLimit: 1, ...(options.buckets ? { buckets: options.buckets } : {}) }),
  });
  if (put.status !== 200) throw new Error(`PUT stock: ${put.status} ${await put.text()}`);
  const db = await createConnection({ uri: twin.databaseUrl });
  try {
    let next = 0;
    let accepted = 0;
    const cpu = measured ? startCpuMeter(twin.pids, 'orders') : undefined;
    const run = await drive(
      {
        url: twin.url,
        connections: options.connections,
        amount: cookies.length,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path: `/items/${itemId}/orders`,
            body: '{"quantity":1}',
            setupRequest: (req) => {
              const i = next++;
              return { ...req, headers: { 'content-type': 'application/json', cookie: cookies[i % cookies.length]!, 'idempotency-key': `${itemId}-${i}` } };
            },
            onResponse: (status) => {
              if (status === 202) accepted++;
            },
          },
        ],
      },
      measured ? 'orders' : 'orders (warm-up)',
      options.log,
    );
    const stored = async () =>
      Number(
        (await db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected')", [itemId]))[0][0]!.n,
      );
    await until(async () => (await stored()) >= accepted, 120_000, 'the orders stored', 50, { atDeadline: 'give up' });
    cpu?.perRequest(accepted || 1);
    return { ...run, accepted, stored: await stored() };
  } finally {
    await db.end();
  }
}

/** One new newsletter's issue to every reader at once over SMTP, measured until every issue is filed. */
async function mailRun(
  twin: TwinInfo,
  options: HotPathOptions,
  tokens: string[],
  measured: boolean,
): Promise<{ mails: number; filed: number; seconds: number }> {
  const tag = randomBytes(3).toString('hex');
  const db = await createConnection({ uri: twin.databaseUrl });
  const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true, pool: true, maxConnections: 20 });
  try {
    const issues = async () => Number((await db.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM issues'))[0][0]!.n);
    const before = await issues();
    const started = performance.now();
    const cpu = measured ? startCpuMeter(twin.pids, 'mail') : undefined;
    await Promise.all(
      tokens.map((token, i) =>
        smtp.sendMail({
          from: 'Hot Bits <news@hot.example>',
          to: `${token}@${twin.inboundDomain}`,
          subject: `Hot issue ${tag}`,
          html: `<h1>Issue ${i}</h1><p>The week in <b>bits</b>.</p>`,
          text: 'The week in bits.',
          list: { id: `hot-${tag}.bench.example` },
        }),
      ),
    );
    await until(async () => (await issues()) - before >= tokens.length, 180_000, 'every issue filed', 50, { atDeadline: 'give up' });
    cpu?.perRequest(tokens.length);
    return { mails: tokens.length, filed: (await issues()) - before, seconds: round((performance.now() - started) / 1000, 2) };
  } finally {
    smtp.close();
    await db.end();
  }
}

/** Drives one hot path against a running twin; what it returns goes into the comparison beside its CPU split. */
export async function driveHotPath(twin: TwinInfo, options: HotPathOptions, name: HotPath): Promise<Record<string, number>> {
  switch (name) {
    case 'sessions': {
      const cookies = await crowd(twin, options, SESSION_USERS);
      let next = 0;
      const run = await steady(twin, options, name, [{ path: '/me', cookie: () => cookies[next++ % cookies.length]! }]);
      return { rps: run.rps, p99_ms: run.p99_ms, errors: run.errors };
    }
    case 'catalog': {
      await Promise.all(CATALOG_PATHS.map((path) => fetch(`${twin.url}${path}`).then((r) => r.arrayBuffer())));
      const run = await steady(
        twin,
        options,
        name,
        CATALOG_PATHS.map((path) => ({ path })),
      );
      return { rps: run.rps, p99_ms: run.p99_ms, errors: run.errors };
    }
    case 'orders': {
      const cookies = await crowd(twin, options, options.buyers);
      // A warm-up of the measured shape on an item of its own: with 500 orders, the measured run still carried the first compilations.
      await ordersRace(twin, options, cookies, false);
      const run = await ordersRace(twin, options, cookies, true);
      return { rps: run.rps, p50_ms: run.p50_ms, p99_ms: run.p99_ms, accepted: run.accepted, stored: run.stored };
    }
    case 'mail': {
      const seed = await load<Seed>(options, options.seedModule);
      const users = await seed.insertUsers(
        twin.databaseUrl,
        Array.from({ length: options.mails }, (_, i) => `reader-${randomBytes(3).toString('hex')}-${i}@surge.test`),
        'reader-password-hot',
      );
      const tokens = await seed.insertInboxTokens(
        twin.databaseUrl,
        users.map((u) => u.id),
      );
      // A warm-up of the measured shape, to a newsletter of its own: with 50 mails, the measured run still carried the first compilations.
      await mailRun(twin, options, tokens, false);
      const run = await mailRun(twin, options, tokens, true);
      return { mails_per_s: round(run.filed / run.seconds, 1), mails: run.mails, filed: run.filed };
    }
  }
}
