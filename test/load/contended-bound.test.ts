/**
 * What bounds a contended run (load/support/contended-bound.ts): the benches set the reservation
 * and issuing scripts' limit at Redis's one core beside the rate the bench's own process drove, so
 * the cores must be read from the right processes and the limit worked from Redis's CPU per call.
 */
import { describe, expect, it } from 'vitest';
import { busyCores, contendedBounds } from '../../load/support/contended-bound';
import { redis } from '../../shared/platform/clients/redis';

const redisPid = async () => Number(/process_id:(\d+)/.exec(await redis().info('server'))![1]);

describe('what bounds a contended run', () => {
  it("reads the cores Redis and the bench's process were busy, and none of a store it was not given", async () => {
    // Prepare
    const pid = await redisPid();
    const key = `contended-bound:${process.pid}`;
    await redis().set(key, 'x');

    // Act: enough calls for Redis's CPU to pass /proc's 10 ms ticks on any machine
    const run = await busyCores({ redis: pid }, async () => {
      for (let round = 0; round < 100; round++) {
        const pipeline = redis().pipeline();
        for (let i = 0; i < 1_000; i++) pipeline.get(key);
        await pipeline.exec();
      }
      return 'done';
    });

    // Assess: Redis is shared with other test files, so only that it was counted is held
    expect(run.value).toBe('done');
    expect(run.busy.redis).toBeGreaterThan(0);
    expect(run.busy.bench).toBeGreaterThan(0);
    expect(run.busy.mariadb).toBe(0);
  });

  it("sets the script's limit at one busy core of Redis, and each design's rate against it", () => {
    // Prepare: two runs of the script, one three times as long as the other
    const script = {
      redisMsPerCall: 0.025,
      runs: [
        { seconds: 1, busy: { redis: 0.5, mariadb: 0, bench: 1 } },
        { seconds: 3, busy: { redis: 0.9, mariadb: 0, bench: 0.8 } },
      ],
    };
    const baselines: Record<'autocommit', { ratePerSecond: number; runs: { seconds: number; busy: { redis: number; mariadb: number; bench: number } }[] }> = {
      autocommit: { ratePerSecond: 4_000, runs: [{ seconds: 2, busy: { redis: 0, mariadb: 0.4, bench: 0.2 } }] },
    };

    // Act
    const bound = contendedBounds(script, ['autocommit'], (name) => baselines[name]);

    // Assess
    expect(bound.script_limit_per_s).toBe(40_000);
    expect(bound.ratios_at_script_limit).toEqual({ autocommit: 10 });
    expect(bound.busy_cores).toEqual({ script: { redis: 0.8, mariadb: 0, bench: 0.85 }, autocommit: { redis: 0, mariadb: 0.4, bench: 0.2 } });
  });
});
