/**
 * Authenticated GET /me from many distinct signed-in users. Reports Redis round trips per request
 * (expected 1: load and sliding refresh in one script) and commands per request.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { insertUsers } from '../../infra/twin/seed';
import { signedIn } from '../../infra/client/client';
import { round } from '../support/round';
import { commandsProcessed, countRoundTrips } from '../support/redis-calls';
import { metricsCost } from '../support/metrics-cost';
import type { Scenario } from '../support/scenario';

const USERS = 200;
const SAMPLE_REQUESTS = 500;

async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

export const sessions: Scenario = async ({ twin, runtime, connections, duration, log, againstCeiling }) => {
  log(`signing in ${USERS} users`);
  const tag = randomBytes(4).toString('hex');
  const users = await insertUsers(twin.databaseUrl, Array.from({ length: USERS }, (_, i) => `bench-${tag}-${i}@surge.test`), `bench-${tag}`);
  const cookies = await inBatches(users, 8, async (u) => (await signedIn(twin.url, u)).cookie);

  const redis = new Redis(twin.redisUrl);
  try {
    let next = 0;
    const { load, ceiling, cpuPerRequest, ceilingCpuPerRequest } = await againstCeiling(
      {
        url: twin.url,
        requests: [{ method: 'GET', path: '/me', setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie: cookies[next++ % cookies.length]! } }) }],
      },
      'GET /me',
    );

    // Counted over samples of their own: the load above also ran unmeasured, to warm up.
    let sampleOk = 0;
    const sample = async () => {
      await inBatches(Array.from({ length: SAMPLE_REQUESTS }, (_, i) => cookies[i % cookies.length]!), 10, async (cookie) => {
        const res = await fetch(`${twin.url}/me`, { headers: { cookie } });
        await res.arrayBuffer();
        if (res.ok) sampleOk += 1;
      });
    };
    const commandsBefore = await commandsProcessed(redis);
    await sample();
    // The INFO calls themselves are two of those counted.
    const commands = (await commandsProcessed(redis)) - commandsBefore - 2;

    log(`counting round trips over ${SAMPLE_REQUESTS} requests with MONITOR`);
    const trips = await countRoundTrips(twin.redisUrl, sample);
    const tripsPerRequest = round(trips / SAMPLE_REQUESTS, 3);

    // GET /me records no metric: what is left to pay is the flush's check at the end of each invocation.
    let nextCookie = 0;
    const metrics = await metricsCost(twin, runtime, duration, async (url) => ({
      url,
      connections,
      requests: [{ method: 'GET', path: '/me', setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie: cookies[nextCookie++ % cookies.length]! } }) }],
    }), log);

    return {
      load,
      ceiling,
      designs: { surge: { label: 'Surge: GET /me', load }, ceiling: { label: "the gateway's ceiling", load: ceiling } },
      extra: {
        users: USERS,
        redis_round_trips_per_request: tripsPerRequest,
        redis_commands_per_request: round(commands / SAMPLE_REQUESTS, 3),
        cpu_ms_per_request: cpuPerRequest,
        ceiling_cpu_ms_per_request: ceilingCpuPerRequest,
        metrics_cost: metrics,
      },
      invariants: {
        redis_round_trips_per_request: { expected: 1, actual: tripsPerRequest },
        non_2xx: { expected: 0, actual: load.errors },
        sample_ok: { expected: 2 * SAMPLE_REQUESTS, actual: sampleOk },
      },
    };
  } finally {
    redis.disconnect();
  }
};
