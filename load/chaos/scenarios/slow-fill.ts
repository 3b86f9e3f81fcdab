/**
 * The catalog when its fills go wrong, on stores of the scenario's own so it can break them:
 *
 * 1. Slow fills: a stampede of cache misses on one page (right after an admin write moved the
 *    version) while MySQL answers nothing for 6 s, then 11 s (a TCP proxy between the functions and
 *    MariaDB holds every byte), longer than the fill lease. Fills are counted in MariaDB's general
 *    log: at most one per lease period, as a lease that runs out hands the load to one waiter.
 * 2. A lost version bump: an admin write commits and bumps the version on the primary while
 *    replication is held back, then Redis fails over to the replica, which still has the old
 *    version and the entries filled under it. The catalog must not go on serving the list from
 *    before the write once the bump is repaired, and the seconds it served it are reported.
 */
import { randomBytes } from 'node:crypto';
import { startTwin, type Twin } from '../../../infra/twin/twin';
import { startDatabase, type Service } from '../../../infra/twin/services/services';
import { statementsDuring } from '../../../infra/twin/faults/query-log';
import { CATALOG_CACHE } from '../../../shared/catalog/cached-programs';
import { startRedisPair, type RedisPair } from '../../../infra/twin/faults/redis-pair';
import { redisCommand } from '../../../infra/twin/faults/redis-server';
import { startTcpProxy } from '../../../infra/twin/faults/tcp-proxy';
import type { ChaosOptions, ChaosReport } from '../report';

const STATE_DIR = '.local/chaos/slow-fill';
const DATABASE = 'surge_chaos';
const VERSION_KEY = '{catalog}:version';
/** How long MySQL holds its replies in each stampede: past one lease, then past two. */
const HOLDS_MS = [6_000, 11_000];
/** After the hold, for what the functions still had in flight (a timed-out invocation's loads) to reach MySQL. */
const SETTLE_MS = 3_000;
const SCALE = {
  full: { stampede: 1_000, readers: 8, observeMs: 20_000 },
  small: { stampede: 200, readers: 4, observeMs: 8_000 },
} as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface Answer {
  status: number;
  /** When the request went out and when its answer was in, ms on performance.now()'s clock. */
  sent: number;
  answered: number;
  body: string;
}

async function get(url: string): Promise<Answer> {
  const sent = performance.now();
  try {
    const res = await fetch(url);
    return { status: res.status, sent, body: await res.text(), answered: performance.now() };
  } catch {
    // No answer at all (the connection failed): counted as a 5xx, which is what a client makes of it.
    return { status: 599, sent, body: '', answered: performance.now() };
  }
}

const is5xx = (a: Answer) => a.status >= 500;

/** Where the scenario's stores are and the faults it can cause. */
interface Stage {
  twin: Twin;
  pair: RedisPair;
  database: Service;
  /** Between the functions and MariaDB. */
  mysqlNetwork: Awaited<ReturnType<typeof startTcpProxy>>;
  admin: (method: 'POST' | 'PUT', path: string, body: unknown) => Promise<{ id: number }>;
  stop(): Promise<void>;
}

async function stage(options: ChaosOptions): Promise<Stage> {
  // The twin reuses stores these name; this scenario's are its own, so it may break them.
  for (const name of ['REDIS_URL', 'DATABASE_URL', 'AWS_ENDPOINT_URL']) delete process.env[name];
  const pair = await startRedisPair();
  const database = await startDatabase(STATE_DIR, DATABASE);
  const mysqlNetwork = await startTcpProxy(Number(new URL(database.adminUrl).port));
  process.env.REDIS_URL = pair.url;
  process.env.DATABASE_URL = `mysql://root@127.0.0.1:${mysqlNetwork.port}/`;
  const twin = await startTwin({ port: 0, stateDir: STATE_DIR, database: DATABASE, consumers: 'off', smtpPort: 0, bundles: options.bundles });
  const signIn = await fetch(`${twin.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@surge.test', password: 'surge-admin-password' }),
  });
  const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
  return {
    twin,
    pair,
    database,
    mysqlNetwork,
    async admin(method, path, body) {
      const res = await fetch(`${twin.url}${path}`, { method, headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
      if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: number };
    },
    async stop() {
      await twin.stop();
      await Promise.all([pair.stop(), mysqlNetwork.close()]);
      await database.stop();
    },
  };
}

interface Stampede {
  hold_s: number;
  requests: number;
  ok: number;
  /** Answers 200 that list the program the admin write added. */
  fresh: number;
  http_5xx: number;
  http_503: number;
  db_fills: number;
  allowed_fills: number;
  p50_ms: number;
  max_ms: number;
}

/** An admin write moves the version, MySQL goes silent for holdMs, and `requests` readers miss at once. */
async function stampede(s: Stage, tag: string, holdMs: number, requests: number, log: ChaosOptions['log']): Promise<Stampede> {
  const title = `slow fill ${holdMs} ms ${tag}`;
  await s.admin('POST', '/programs', { title, careerTag: tag, type: 'workshop' });
  const page = `${s.twin.url}/programs?careerTag=${tag}&page=1&size=50`;
  log(`stampede: ${requests} misses while MySQL holds its replies for ${holdMs / 1000} s`);
  let answers: Answer[] = [];
  const fills = await statementsDuring(
    s.database.adminUrl,
    async () => {
      s.mysqlNetwork.pause();
      const resumed = sleep(holdMs).then(() => s.mysqlNetwork.resume());
      answers = await Promise.all(Array.from({ length: requests }, () => get(page)));
      await resumed;
      await sleep(SETTLE_MS);
    },
    'COUNT(*) OVER ()',
    `career_tag = '${tag}'`,
  );
  const ms = answers.map((a) => a.answered - a.sent).sort((a, b) => a - b);
  return {
    hold_s: holdMs / 1000,
    requests,
    ok: answers.filter((a) => a.status === 200).length,
    fresh: answers.filter((a) => a.status === 200 && a.body.includes(title)).length,
    http_5xx: answers.filter(is5xx).length,
    http_503: answers.filter((a) => a.status === 503).length,
    db_fills: fills.length,
    allowed_fills: Math.ceil(holdMs / CATALOG_CACHE.leaseMs),
    p50_ms: Math.round(ms[Math.floor(ms.length / 2)] ?? 0),
    max_ms: Math.round(ms.at(-1) ?? 0),
  };
}

interface LostBump {
  reads: number;
  /** Reads sent after the write had answered that still listed the program under its old title. */
  stale_answers: number;
  /** From the failover to the last stale answer, s. */
  staleness_s: number;
  /** From the failover until Redis held a version past the one it lost, s; -1 if it never did while watched. */
  repaired_s: number;
  stale_after_repair: number;
  lost_version: string;
  version_after: string;
  http_5xx: number;
  http_503: number;
}

/** A write whose bump the primary acknowledged and the failover then lost, read throughout by a hot catalog. */
async function lostBump(s: Stage, tag: string, readers: number, observeMs: number, log: ChaosOptions['log']): Promise<LostBump> {
  const before = `before the write ${tag}`;
  const after = `after the write ${tag}`;
  const { id } = await s.admin('POST', '/programs', { title: before, careerTag: `${tag}-renamed`, type: 'course' });
  const page = `${s.twin.url}/programs?careerTag=${tag}-renamed&page=1&size=50`;
  // The entry under the current version, on the replica too.
  await get(page);
  await s.pair.synced();

  const answers: Answer[] = [];
  let reading = true;
  const reads = Array.from({ length: readers }, async () => {
    while (reading) {
      answers.push(await get(page));
      await sleep(50);
    }
  });
  let repairedAt: number | undefined;
  let committed = Infinity;
  try {
    await sleep(300);
    log('lost bump: replication held, an admin write commits and bumps the version on the primary alone');
    s.pair.holdReplication();
    await s.admin('PUT', `/programs/${id}`, { title: after, careerTag: `${tag}-renamed`, type: 'course' });
    committed = performance.now();
    const lost = String(await redisCommand(s.pair.primary.port, 'GET', VERSION_KEY));
    // The hot catalog reads the new version before the failover.
    await sleep(1_000);
    log('lost bump: the primary is killed and the replica, without the bump, promoted');
    const failedOver = performance.now();
    await s.pair.failOver();
    const deadline = failedOver + observeMs;
    while (performance.now() < deadline) {
      const version = String(await redisCommand(s.pair.replica.port, 'GET', VERSION_KEY));
      if (repairedAt === undefined && BigInt(version) > BigInt(lost)) repairedAt = performance.now();
      await sleep(50);
    }
    reading = false;
    await Promise.all(reads);
    const afterWrite = answers.filter((a) => a.sent >= committed);
    const stale = afterWrite.filter((a) => a.status === 200 && a.body.includes(before));
    return {
      reads: afterWrite.length,
      stale_answers: stale.length,
      staleness_s: stale.length ? round((Math.max(...stale.map((a) => a.answered)) - failedOver) / 1000) : 0,
      repaired_s: repairedAt === undefined ? -1 : round((repairedAt - failedOver) / 1000),
      stale_after_repair: repairedAt === undefined ? stale.length : stale.filter((a) => a.sent >= repairedAt!).length,
      lost_version: lost,
      version_after: String(await redisCommand(s.pair.replica.port, 'GET', VERSION_KEY)),
      http_5xx: afterWrite.filter(is5xx).length,
      http_503: afterWrite.filter((a) => a.status === 503).length,
    };
  } finally {
    reading = false;
    await Promise.all(reads);
  }
}

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const scale = SCALE[options.scale];
  const tag = `chaos-${randomBytes(4).toString('hex')}`;
  const s = await stage(options);
  try {
    const stampedes: Stampede[] = [];
    for (const holdMs of HOLDS_MS) stampedes.push(await stampede(s, tag, holdMs, scale.stampede, options.log));
    const bump = await lostBump(s, tag, scale.readers, scale.observeMs, options.log);
    const invariants: Record<string, boolean> = {};
    for (const st of stampedes) {
      invariants[`fills_within_lease_${st.hold_s}s`] = st.db_fills <= st.allowed_fills;
      // Only an answer listing the program written before the stampede is a right one.
      invariants[`answers_fresh_${st.hold_s}s`] = st.fresh === st.ok;
      // A loader slower than the function may cost a retry-safe 503, never a timeout's 500.
      invariants[`no_5xx_but_503_${st.hold_s}s`] = st.http_5xx === st.http_503;
    }
    invariants.bump_repaired = bump.repaired_s >= 0;
    invariants.no_stale_after_repair = bump.repaired_s >= 0 && bump.stale_after_repair === 0;
    return {
      scenario: 'slow-fill',
      acknowledged: 0,
      confirmed_rows: 0,
      oversold: 0,
      lost_acknowledged: 0,
      duplicates: 0,
      rejected_acknowledged: 0,
      http_5xx: stampedes.reduce((n, st) => n + st.http_5xx, bump.http_5xx),
      http_503: stampedes.reduce((n, st) => n + st.http_503, bump.http_503),
      recovered_s: bump.repaired_s,
      invariants,
      lease_ms: CATALOG_CACHE.leaseMs,
      stampedes,
      lost_bump: bump,
    };
  } finally {
    await s.stop();
  }
}
