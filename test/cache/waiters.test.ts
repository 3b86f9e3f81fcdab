import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FillWaiters } from '../../shared/cache/waiters';
import { connectRedis } from '../../shared/platform/clients/redis';
import { until } from '../../shared/platform/wait';

const clients: Redis[] = [];
const client = (role: 'commands' | 'subscriber' = 'subscriber') => {
  const redis = connectRedis(role);
  clients.push(redis);
  return redis;
};

afterAll(() => {
  for (const redis of clients) redis.disconnect();
});

describe('fill waiters', () => {
  it('wakes a crowd of waiters a slice at a time, the event loop turning between slices', async () => {
    // Prepare: 200 callers of one instance wait on one fill's channel.
    const waiters = new FillWaiters(() => client());
    const channel = `{test-${randomBytes(5).toString('hex')}}:filled`;
    const CALLERS = 200;
    let subscribed = 0;
    const resumed: string[] = [];
    const waiting = Array.from({ length: CALLERS }, async (_, n) => {
      const entry = await waiters.wait(channel, 30_000, async () => {
        subscribed += 1;
        return false;
      });
      // The first caller to resume asks for the loop's next turn. The last caller resumes later anyway (it unsubscribes first).
      if (resumed.length === 0) setImmediate(() => resumed.push('a turn of the loop'));
      resumed.push(`caller ${n}`);
      return entry;
    });
    await until(async () => subscribed === CALLERS, 30_000, 'every caller subscribed', 10);

    // Act: a fill publishes its entry.
    await client('commands').spublish(channel, 'v1:2:the value');
    const entries = await Promise.all(waiting);

    // Assess: every caller has the entry, and the loop turned before half the crowd was woken.
    waiters.close();
    expect(entries).toEqual(Array.from({ length: CALLERS }, () => '1:2:the value'));
    const turn = resumed.indexOf('a turn of the loop');
    expect(turn).toBeGreaterThan(0);
    expect(turn).toBeLessThan(CALLERS / 2);
  });
});
