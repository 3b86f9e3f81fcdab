/**
 * The Redis floor of a reservation: EVALSHA of a script that does one DECR, with as many keys as
 * the reservation script, all in one slot, from as many calls in flight, through the functions' own
 * client as the script's calls go (it gathers the calls of one turn into one write, and Redis's
 * CPU per call about halves with that, in a scratch run). What Redis must spend per reservation
 * however the script were written (a script call and one write); the reservation script's Redis
 * CPU per call is set beside it, measured the same way.
 *
 * Both are measured in a second shape too, one connection per instance: a fleet of instances,
 * each with a connection of its own and one call on it at a time, as a Lambda instance serves one
 * request at a time. There nothing is gathered: Redis reads and answers each call alone.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../../shared/platform/redis/script';
import { connectRedis, redis, reportErrors } from '../../shared/platform/clients/redis';
import { inParallel } from './crowd';
import { redisCpuSeconds, type Shard } from './redis-shards';
import { round } from './round';

const ONE_DECR = "return redis.call('DECR', KEYS[1])";

/** Redis's CPU per call while `calls` calls ran, `concurrency` at a time; failures are counted, not timed apart. */
export async function redisCpuPerCall(shards: Shard[], calls: number, concurrency: number, call: (i: number) => Promise<unknown>, label: string) {
  const before = await redisCpuSeconds(shards);
  const failures = await inParallel(calls, concurrency, call, label);
  return { redis_ms_per_call: round((((await redisCpuSeconds(shards)) - before) * 1000) / calls, 4), failures };
}

/** Stand-ins for a fleet's instances: a connection each, made as a function makes its own. */
export interface Fleet {
  readonly connections: RedisClient[];
  close(): Promise<void>;
}

/**
 * The fleet's calls wait on one event loop, with the bench's other work, as no instance's do on
 * Lambda: a longer timeout than a function's, as connectRedis allows harnesses, so a stall of this
 * process is not counted as a failed call.
 */
const FLEET_COMMAND_TIMEOUT_MS = 10_000;

export async function fleetOf(instances: number): Promise<Fleet> {
  const connections = Array.from({ length: instances }, (_, k) => reportErrors(connectRedis('commands', FLEET_COMMAND_TIMEOUT_MS), `fleet ${k}`));
  await Promise.all(connections.map((connection) => connection.ping()));
  return { connections, close: async () => void (await Promise.all(connections.map((connection) => connection.quit()))) };
}

/** As redisCpuPerCall, with one call in flight on each of the fleet's connections. */
export async function redisCpuPerCallOnFleet(
  shards: Shard[],
  fleet: Fleet,
  calls: number,
  call: (connection: RedisClient, i: number) => Promise<unknown>,
  label: string,
) {
  const free = [...fleet.connections];
  return redisCpuPerCall(
    shards,
    calls,
    fleet.connections.length,
    async (i) => {
      const connection = free.pop()!;
      try {
        return await call(connection, i);
      } finally {
        free.push(connection);
      }
    },
    `${label}, ${fleet.connections.length} connections, one call on each`,
  );
}

/**
 * The one-DECR script's Redis CPU per call, with `keyCount` keys under the hash tag given: through
 * the functions' client, `concurrency` in flight, or, given a fleet, one call on each of its connections.
 */
export async function oneDecrFloor(shards: Shard[], tag: string, keyCount: number, calls: number, concurrency: number, fleet?: Fleet) {
  const keys = Array.from({ length: keyCount }, (_, k) => `${tag}:floor:${k}`);
  const client = redis();
  await client.set(keys[0]!, calls * 2);
  // Loaded by an EVAL on the keys' own node (a cluster's SCRIPT LOAD goes to any one).
  await client.eval(ONE_DECR, keys.length, ...keys);
  const sha = createHash('sha1').update(ONE_DECR).digest('hex');
  const label = `Redis floor: EVALSHA of one DECR, ${keyCount} keys`;
  return fleet
    ? redisCpuPerCallOnFleet(shards, fleet, calls, (connection) => connection.evalsha(sha, keys.length, ...keys), label)
    : redisCpuPerCall(shards, calls, concurrency, () => client.evalsha(sha, keys.length, ...keys), `${label}, ${concurrency} in flight`);
}
