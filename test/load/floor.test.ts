/**
 * A read path's floor (load/baselines/floor.ts, load/support/floor.ts) is what the benches hold
 * the path to, so it must be what it says: its key as large as the path reads, one GET of it, and
 * a body as large as the path answers; and the bytes a path reads are what Redis sent for it.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler } from '../../load/baselines/floor';
import { floorRequest, redisBytesPerRequest } from '../../load/support/floor';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent } from '../support/events';

const ask = async (path: string) => {
  const url = new URL(path, 'http://floor.test');
  const event = httpEvent('get-me', { path: url.pathname });
  event.queryStringParameters = Object.fromEntries(url.searchParams);
  return handler(event);
};

describe("a read path's floor", () => {
  it('reads a key of the size given, once, and answers a body of the size given', async () => {
    // Prepare
    const { path } = await floorRequest(process.env.REDIS_URL!, { redisBytes: 300, bodyBytes: 2_570 });
    const key = new URL(path, 'http://floor.test').searchParams.get('key')!;

    // Act
    const answer = await ask(path);
    const { bytesPerRequest } = await redisBytesPerRequest(process.env.REDIS_URL!, async () => {
      for (let i = 0; i < 200; i++) await ask(path);
      return { requests: 200 };
    });

    // Assess: the value and its RESP framing ($292\r\n…\r\n) are the 300 bytes. Redis's byte count is
    // the whole server's, which other test files share, so only its floor is held here.
    expect(answer.statusCode).toBe(200);
    expect(answer.body!.length).toBe(2_570);
    expect(await redis().strlen(key)).toBe(292);
    expect(bytesPerRequest).toBeGreaterThanOrEqual(300);
  });

  it('answers 404, not an empty floor, for a key the bench did not set', async () => {
    // Act
    const answer = await ask(`/__baseline/floor?key=bench:floor:missing-${randomBytes(4).toString('hex')}&body=100`);

    // Assess
    expect(answer.statusCode).toBe(404);
  });
});
