/**
 * The catalog: the cached hit path against the no-cache baseline and the ceiling, then a stampede
 * — 1,000 concurrent requests right after a version bump — counting MySQL queries at the server.
 */
import { statementsDuring } from '../../infra/twin/faults/query-log';
import type { Scenario } from '../support/scenario';
import { drive } from '../support/measure';
import { startCpuMeter } from '../support/cpu';
import { round } from '../support/round';
import { infoSum, shardsOf } from '../support/redis-shards';
import { demoAccounts } from '../../infra/twin/seed';
import { signedIn } from '../../infra/client/client';

const TAGS = ['backend', 'frontend', 'data', 'devops', 'design', 'product'];
const STAMPEDE = 1_000;
const BYTES_SAMPLE = 10_000;

export const catalog: Scenario = async ({ twin, connections, duration, log, againstCeiling }) => {
  const paths = TAGS.map((tag) => `/programs?careerTag=${tag}&page=1&size=20`);
  const requests = (prefix: string) => paths.map((path) => ({ method: 'GET' as const, path: `${prefix}${path}` }));
  // Warm every page the hit path will read.
  await Promise.all(paths.map((path) => fetch(`${twin.url}${path}`).then((r) => r.arrayBuffer())));

  // What Redis sends per hit: a hot page lives on one shard, whose network it exhausts first. It is
  // also the floor's shape, with the bytes of a page.
  const {
    result: counted,
    bytes,
    gets,
    mgets,
    shape,
  } = await redisDuring(twin.redisUrl, () =>
    drive({ url: twin.url, connections, amount: BYTES_SAMPLE, requests: requests('') }, 'GET /programs (cached), counting Redis bytes', log),
  );
  const redisBytesPerHit = round(bytes / counted.requests, 1);
  const pageBytes = await Promise.all(paths.map(async (path) => (await (await fetch(`${twin.url}${path}`)).arrayBuffer()).byteLength));
  const floorShape = { redisBytes: redisBytesPerHit, bodyBytes: round(pageBytes.reduce((sum, b) => sum + b, 0) / pageBytes.length, 0) };
  const {
    load: hit,
    ceiling,
    floor,
    cpuPerRequest,
    ceilingCpuPerRequest,
    floorCpuPerRequest,
  } = await againstCeiling({ url: twin.url, requests: requests('') }, 'GET /programs (cached)', floorShape);
  // A hit served from an instance's near copy costs one GET of the version; any other costs an MGET.
  const nearCopyHitRate = round(gets / Math.max(1, gets + mgets), 3);
  const noCacheCpu = startCpuMeter(twin.pids, 'no_cache');
  const baseline = await drive({ url: twin.url, connections, duration, requests: requests('/__baseline') }, 'GET /__baseline/programs (no cache)', log);
  noCacheCpu.perRequest(baseline.requests);

  const { client: admin } = await signedIn(twin.url, demoAccounts.find((a) => a.role === 'admin')!);
  log('stampede: bumping the catalog version, then 1,000 concurrent requests for one page');
  const bump = await admin.POST('/programs', { body: { title: `Stampede ${Date.now()}`, careerTag: 'backend', type: 'workshop' } });
  if (bump.response.status !== 201) throw new Error(`version bump failed: ${bump.response.status}`);
  let stampede!: Awaited<ReturnType<typeof drive>>;
  // The page's own query, as MariaDB's general log saw it: a count of every SELECT (Com_select) also
  // counted the twin's schedules, one of which runs every minute, and once said 2.
  const pageQueries = await statementsDuring(
    twin.databaseUrl,
    async () => (stampede = await drive({ url: `${twin.url}${paths[0]}`, connections: STAMPEDE, amount: STAMPEDE, timeout: 30 }, 'stampede', log)),
    'COUNT(*) OVER ()',
    'FROM programs',
    `career_tag = 'backend'`,
  );
  const dbQueries = pageQueries.length;

  return {
    load: hit,
    ceiling,
    ...(floor ? { floor } : {}),
    designs: {
      surge: { label: 'Surge: cached hit', load: hit },
      no_cache: { label: 'no cache (MySQL per request)', load: baseline },
      ceiling: { label: "the gateway's ceiling", load: ceiling },
    },
    baseline: { ...baseline },
    extra: {
      floor_shape: floorShape,
      floor_cpu_ms_per_request: floorCpuPerRequest,
      redis: shape,
      ratio_to_baseline: round(hit.rps / baseline.rps, 1),
      // No hit, however cheap, answers faster than the gateway alone: the highest ratio to no cache
      // this twin allows in this run (the product CPU of each design is in the comparison).
      ratio_to_baseline_bound: round(ceiling.rps / baseline.rps, 1),
      redis_bytes_out_per_hit: redisBytesPerHit,
      near_copy_hit_rate: nearCopyHitRate,
      cpu_ms_per_request: cpuPerRequest,
      ceiling_cpu_ms_per_request: ceilingCpuPerRequest,
      stampede: { requests: stampede.requests, ok: stampede.ok, p50_ms: stampede.p50_ms, p99_ms: stampede.p99_ms, db_queries: dbQueries },
    },
    invariants: {
      db_queries: { expected: 1, actual: dbQueries },
      stampede_ok: { expected: STAMPEDE, actual: stampede.ok },
      hit_errors: { expected: 0, actual: hit.errors },
    },
  };
};

/**
 * What `run` gives, and meanwhile the bytes Redis sent to all its clients and the GETs and MGETs
 * it served, summed over every master (the whole catalog lives on the one holding {catalog}).
 */
async function redisDuring<T>(redisUrl: string, run: () => Promise<T>): Promise<{ result: T; bytes: number; gets: number; mgets: number; shape: string }> {
  const redis = await shardsOf(redisUrl);
  const bytesSent = () => infoSum(redis.shards, 'stats', /total_net_output_bytes:(\d+)/);
  const calls = (command: string) => infoSum(redis.shards, 'commandstats', new RegExp(`cmdstat_${command}:calls=(\\d+)`));
  try {
    const [bytes, gets, mgets] = await Promise.all([bytesSent(), calls('get'), calls('mget')]);
    const result = await run();
    return { result, bytes: (await bytesSent()) - bytes, gets: (await calls('get')) - gets, mgets: (await calls('mget')) - mgets, shape: redis.shape };
  } finally {
    redis.close();
  }
}
