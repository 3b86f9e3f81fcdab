/**
 * redis-server killed (kill -9) mid-sale and started again at once from its append-only file:
 * what it had not yet fsynced (up to a second of writes) is gone — reservations, their outbox
 * entries, the stock they took — while their orders may already be acknowledged and queued.
 */
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  return runScenario(
    {
      name: 'redis-kill',
      async fault({ redis, options: { log } }) {
        await redis.kill();
        log('redis-server killed; starting it again from its append-only file');
        await redis.start();
      },
    },
    options,
  );
}
