/**
 * The cores a contended run kept busy (load/support/contended-busy.ts): the orders and coupons
 * benches set the reservation and issuing scripts' limit at one busy Redis core beside what the
 * bench's own process and the stores were busy, so each must be read from the right place, in
 * cores, and the limit worked as the calls over the Redis CPU seconds they took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busyCores, contendedBusy, type BusyRun } from '../../load/support/contended-busy';
import { shardsOf, type Shards } from '../../load/support/redis-shards';

let redis: Shards;
beforeAll(async () => {
  redis = await shardsOf(process.env.REDIS_URL!);
});
afterAll(() => redis.close());

/** Keeps this process busy until it has used `ms` of CPU, however long that takes on a loaded machine. */
function spin(ms: number): void {
  const start = process.cpuUsage();
  while (true) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1_000 >= ms) return;
  }
}

describe('the cores a contended run kept busy', () => {
  it("reads the bench's process from Node and a store's from /proc alike, in cores, and Redis's from INFO", async () => {
    // Prepare: this process stands in for the database, so /proc and process.cpuUsage read the same CPU
    const key = `contended-busy:${process.pid}`;
    await redis.client.set(key, 'x');

    // Act: half a second of this process's CPU, and enough Redis calls to show on any machine
    const run = await busyCores({ database: process.pid }, redis.shards, async () => {
      spin(500);
      for (let round = 0; round < 20; round++) {
        const pipeline = redis.client.pipeline();
        for (let i = 0; i < 1_000; i++) pipeline.get(key);
        await pipeline.exec();
      }
      return 'done';
    });

    // Assess: /proc counts in 10 ms ticks; Redis is shared with other test files, so only that it was counted is held
    expect(run.value).toBe('done');
    expect(run.busy.bench * run.seconds).toBeGreaterThanOrEqual(0.5);
    expect(Math.abs(run.busy.mariadb! - run.busy.bench)).toBeLessThan(0.05);
    expect(run.busy.machine).toBeGreaterThan(run.busy.bench - 0.05);
    expect(run.busy.redis).toBeGreaterThan(0);
  });

  it('reports no database when the twin names none', async () => {
    const run = await busyCores({}, redis.shards, async () => 'done');

    expect(run.busy.mariadb).toBeNull();
  });

  it("sets the script's limit at one busy core of Redis, and each design's measured rate against it", () => {
    // Prepare: two runs of the script, one three times as long as the other: 110,000 calls in 3.2 Redis CPU seconds
    const script = [
      { calls: 20_000, seconds: 1, busy: { redis: 0.5, mariadb: 0, bench: 1, machine: 1.5 } },
      { calls: 90_000, seconds: 3, busy: { redis: 0.9, mariadb: 0, bench: 0.8, machine: 1.7 } },
    ];
    const autocommit: { ratePerSecond: number; runs: BusyRun[] } = {
      ratePerSecond: 4_000,
      runs: [{ seconds: 2, busy: { redis: 0, mariadb: 0.4, bench: 0.2, machine: 0.6 } }],
    };

    // Act
    const busy = contendedBusy(script, ['autocommit'], () => autocommit);

    // Assess
    expect(busy.script_limit_per_s).toBe(34_375);
    expect(busy.ratios_at_script_limit).toEqual({ autocommit: 8.6 });
    expect(busy.busy_cores).toEqual({
      script: { redis: 0.8, mariadb: 0, bench: 0.85, machine: 1.65 },
      autocommit: { redis: 0, mariadb: 0.4, bench: 0.2, machine: 0.6 },
    });
  });

  it('refuses a limit from no Redis CPU at all', () => {
    expect(() =>
      contendedBusy([{ calls: 1, seconds: 1, busy: { redis: 0, mariadb: null, bench: 1, machine: 1 } }], [], () => ({ ratePerSecond: 1, runs: [] })),
    ).toThrow(/no Redis CPU/);
  });
});
