/**
 * The Redis floor of a reservation: EVALSHA of a script that does one DECR, with as many keys as
 * the reservation script, all in one slot, from as many calls in flight, through the functions' own
 * client as the script's calls go (it gathers the calls of one turn into one write, and Redis's
 * CPU per call about halves with that, in a scratch run). What Redis must spend per reservation
 * however the script were written (a script call and one write); the reservation script's Redis
 * CPU per call is set beside it, measured the same way.
 */
import { createHash } from 'node:crypto';
import { redis } from '../../shared/platform/clients/redis';
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

/** The one-DECR script's Redis CPU per call, with `keyCount` keys under the hash tag given. */
export async function oneDecrFloor(shards: Shard[], tag: string, keyCount: number, calls: number, concurrency: number) {
  const keys = Array.from({ length: keyCount }, (_, k) => `${tag}:floor:${k}`);
  const client = redis();
  await client.set(keys[0]!, calls * 2);
  // Loaded by an EVAL on the keys' own node (a cluster's SCRIPT LOAD goes to any one).
  await client.eval(ONE_DECR, keys.length, ...keys);
  const sha = createHash('sha1').update(ONE_DECR).digest('hex');
  return redisCpuPerCall(
    shards,
    calls,
    concurrency,
    () => client.evalsha(sha, keys.length, ...keys),
    `Redis floor: EVALSHA of one DECR, ${keyCount} keys, ${concurrency} in flight`,
  );
}
