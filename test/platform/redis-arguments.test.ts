import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';

/** Keys of one hash tag of this run's own. */
const TAG = `{redis-arguments-${randomBytes(4).toString('hex')}}`;

// ioredis flattens every command's arguments one level; the patch (infra/patches) skips the flattening
// when none is an array, so both kinds of call are held to what ioredis documents.
describe("the shared Redis client's command arguments", () => {
  it('flattens an array among the arguments one level', async () => {
    // Prepare
    const key = `${TAG}:set`;

    // Act
    await redis().sadd(key, ['a', 'b', 'c']);

    // Assess
    expect((await redis().smembers(key)).sort()).toEqual(['a', 'b', 'c']);
  });

  it('sends arguments of no array as they are: strings, numbers and buffers', async () => {
    // Prepare
    const key = `${TAG}:list`;

    // Act
    await redis().rpush(key, 'x', 7, Buffer.from('z'));

    // Assess
    expect(await redis().lrange(key, 0, -1)).toEqual(['x', '7', 'z']);
  });
});
