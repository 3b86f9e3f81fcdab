/**
 * ElastiCache's Multi-AZ failover mid-sale, with replication behind (test/support/redis-pair.ts):
 * the twin's Redis is a primary and a real replica, reached through a stand-in for the primary
 * endpoint. Replication is held for a while, so the primary acknowledges reservations the replica
 * never gets; then the primary is killed, the replica promoted and the endpoint repointed, as the
 * DNS name is. What the replica lacks (reservations, outbox entries, stock taken, keys) is gone,
 * while their orders were acknowledged and may be queued. Every acknowledged order must be stored.
 */
import { startRedisPair } from '../../../test/support/redis-pair';
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const lagMs = options.scale === 'full' ? 3_000 : 1_000;
  const pair = await startRedisPair();
  const failover = { acknowledgedAtHold: 0, acknowledgedAtFailover: 0 };
  try {
    return await runScenario(
      {
        name: 'redis-failover',
        // The pair replaces the harness's own Redis, which goes unused.
        twinEnv: () => ({ REDIS_URL: pair.url }),
        async fault({ sale, options: { log } }) {
          await pair.synced();
          pair.holdReplication();
          failover.acknowledgedAtHold = sale!.acknowledged.size;
          log(`replication held for ${lagMs / 1000} s`);
          await new Promise((r) => setTimeout(r, lagMs));
          failover.acknowledgedAtFailover = sale!.acknowledged.size;
          await pair.failOver();
          log('primary killed, replica promoted, the endpoint repointed');
        },
        // The writer stores most of them before the harness can look, though their reservations
        // (the stock they took) are gone: at most the orders acknowledged while replication was
        // held can have lost theirs, so at most that many units can be sold again and rejected.
        lostReservations: () => failover.acknowledgedAtFailover - failover.acknowledgedAtHold,
        assess: () => ({
          extra: {
            replication_lag_s: lagMs / 1000,
            // Orders acknowledged while only the primary knew of them: what the failover may have lost.
            acknowledged_while_held: failover.acknowledgedAtFailover - failover.acknowledgedAtHold,
          },
        }),
      },
      options,
    );
  } finally {
    await pair.stop();
  }
}
