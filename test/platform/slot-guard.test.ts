import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import slotOf from 'cluster-key-slot';
import { CrossSlotError } from '../../shared/platform/redis/slot-guard';

/** Two keys of one hash tag (one slot), and one of another tag whose slot differs. */
function keys() {
  const run = randomBytes(4).toString('hex');
  const a = `{guard:${run}}:a`;
  let other = `{guard:${run}x}:c`;
  while (slotOf(other) === slotOf(a)) other = `{guard:${randomBytes(4).toString('hex')}}:c`;
  return { a, b: `{guard:${run}}:b`, other };
}

describe('the test-mode slot guard on the shared client', () => {
  it('lets commands, scripts, pipelines and transactions of one slot through', async () => {
    const { a, b } = keys();

    await redis().mset(a, '1', b, '2');
    const viaScript = await redis().eval("return redis.call('GET', KEYS[2])", 2, a, b);
    const piped = await redis().pipeline().get(a).get(b).exec();
    const transacted = await redis().multi().incr(a).incr(b).exec();

    expect(viaScript).toBe('2');
    expect(piped).toEqual([
      [null, '1'],
      [null, '2'],
    ]);
    expect(transacted).toEqual([
      [null, 2],
      [null, 3],
    ]);
  });

  it('refuses a multi-key command, a script call, a pipeline and a transaction across slots, sending none of it', async () => {
    const { a, other } = keys();

    const refusals = await Promise.allSettled([
      redis().mset(a, '1', other, '1'),
      redis().eval("redis.call('SET', KEYS[1], 1) return redis.call('SET', KEYS[2], 1)", 2, a, other),
      redis().pipeline().set(a, '1').set(other, '1').exec(),
      redis().multi().set(a, '1').set(other, '1').exec(),
    ]);

    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      expect((refusal as PromiseRejectedResult).reason).toBeInstanceOf(CrossSlotError);
    }
    expect(await redis().exists(a)).toBe(0);
    expect(await redis().exists(other)).toBe(0);
  });
});
