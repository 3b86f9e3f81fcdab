/**
 * Authenticated GET /me from many distinct signed-in users. Reports Redis round trips per request
 * (expected 1: the read and the sliding refresh written together) and commands per request.
 */
import { randomBytes } from 'node:crypto';
import type { Options } from 'autocannon';
import { Redis } from 'ioredis';
import { insertUsers } from '../../infra/twin/seed';
import { signedIn } from '../../infra/client/client';
import { redisBytesPerRequest } from '../support/floor';
import { drive } from '../support/measure';
import { round } from '../support/round';
import { commandsProcessed, readsProcessed } from '../support/redis-calls';
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
  const users = await insertUsers(
    twin.databaseUrl,
    Array.from({ length: USERS }, (_, i) => `bench-${tag}-${i}@surge.test`),
    `bench-${tag}`,
  );
  const cookies = await inBatches(users, 8, async (u) => (await signedIn(twin.url, u)).cookie);

  const redis = new Redis(twin.redisUrl);
  try {
    // One fixed request a user, each built once, as the floor's and the catalog's are: a request
    // built per call by setupRequest cost the load generator, which shares the two cores, ~1.8 µs
    // of CPU more a request than the floor's prebuilt one.
    const meRequests = cookies.map((cookie) => ({ method: 'GET' as const, path: '/me', headers: { cookie } }));
    const me: Pick<Options, 'url' | 'requests'> = { url: twin.url, requests: meRequests };
    // The floor's shape: what GET /me reads from Redis and answers, measured over a sample of its own.
    const { bytesPerRequest } = await redisBytesPerRequest(twin.redisUrl, () =>
      drive({ ...me, connections, amount: SAMPLE_REQUESTS }, 'GET /me, counting Redis bytes', log),
    );
    const bodyBytes = (await (await fetch(`${twin.url}/me`, { headers: { cookie: cookies[0]! } })).arrayBuffer()).byteLength;
    const floorShape = { redisBytes: bytesPerRequest, bodyBytes };
    const { load, ceiling, floor, cpuPerRequest, ceilingCpuPerRequest, floorCpuPerRequest } = await againstCeiling(me, 'GET /me', floorShape);

    // Counted over samples of their own: the load above also ran unmeasured, to warm up.
    let sampleOk = 0;
    const sample = async (inFlight: number) => {
      await inBatches(
        Array.from({ length: SAMPLE_REQUESTS }, (_, i) => cookies[i % cookies.length]!),
        inFlight,
        async (cookie) => {
          const res = await fetch(`${twin.url}/me`, { headers: { cookie } });
          await res.arrayBuffer();
          if (res.ok) sampleOk += 1;
        },
      );
    };
    // Redis counts a command once it has run and a read as it reads, so each count below takes in
    // one of its own two INFO calls: the first's command, the second's read.
    const commandsBefore = await commandsProcessed(redis);
    await sample(10);
    const commands = (await commandsProcessed(redis)) - commandsBefore - 1;

    log(`counting round trips over ${SAMPLE_REQUESTS} requests, one at a time, by the reads Redis made`);
    const readsBefore = await readsProcessed(redis);
    await sample(1);
    const trips = (await readsProcessed(redis)) - readsBefore - 1;
    // To two places: up to two reads of another client's in the window (the twin's own) are not the path's.
    const tripsPerRequest = round(trips / SAMPLE_REQUESTS, 2);

    // GET /me records no metric: what is left to pay is the flush's check at the end of each invocation.
    const metrics = await metricsCost(
      twin,
      runtime,
      duration,
      async (url) => ({
        url,
        connections,
        requests: meRequests,
      }),
      log,
    );

    return {
      load,
      ceiling,
      ...(floor ? { floor } : {}),
      designs: { surge: { label: 'Surge: GET /me', load }, ceiling: { label: "the gateway's ceiling", load: ceiling } },
      extra: {
        floor_shape: floorShape,
        floor_cpu_ms_per_request: floorCpuPerRequest,
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
