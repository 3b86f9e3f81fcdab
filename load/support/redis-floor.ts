/**
 * The Redis floor of a reservation: EVALSHA of a script that does one DECR, with as many keys as
 * the reservation script, all in one slot, from as many calls in flight. What Redis must spend per
 * reservation however the script were written (a script call and one write); the reservation
 * script's Redis CPU per call is set beside it, measured the same way.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { processCpuSeconds } from './cpu';
import { inParallel } from './crowd';
import { round } from './round';

const ONE_DECR = "return redis.call('DECR', KEYS[1])";

/** CPU milliseconds every Redis process of the twin (each node of a pair or cluster) has used so far. */
function redisCpuMs(pids: Record<string, number | undefined>): number {
  return Object.entries(pids)
    .filter(([name]) => name === 'redis' || name.startsWith('redis_'))
    .reduce((sum, [, pid]) => sum + processCpuSeconds(pid) * 1000, 0);
}

/** Redis's CPU per call while `calls` calls ran, `concurrency` at a time; failures are counted, not timed apart. */
export async function redisCpuPerCall(
  pids: Record<string, number | undefined>,
  calls: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
  label: string,
) {
  const before = redisCpuMs(pids);
  const failures = await inParallel(calls, concurrency, call, label);
  return { redis_ms_per_call: round((redisCpuMs(pids) - before) / calls, 4), failures };
}

/** The one-DECR script's Redis CPU per call, with `keyCount` keys under the hash tag given. */
export async function oneDecrFloor(
  client: Redis | Cluster,
  pids: Record<string, number | undefined>,
  tag: string,
  keyCount: number,
  calls: number,
  concurrency: number,
) {
  const keys = Array.from({ length: keyCount }, (_, k) => `${tag}:floor:${k}`);
  await client.set(keys[0]!, calls * 2);
  // Loaded by an EVAL on the keys' own node (a cluster's SCRIPT LOAD goes to any one).
  await client.eval(ONE_DECR, keys.length, ...keys);
  const sha = createHash('sha1').update(ONE_DECR).digest('hex');
  return redisCpuPerCall(
    pids,
    calls,
    concurrency,
    () => client.evalsha(sha, keys.length, ...keys),
    `Redis floor: EVALSHA of one DECR, ${keyCount} keys, ${concurrency} in flight`,
  );
}
