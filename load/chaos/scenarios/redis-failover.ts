/**
 * ElastiCache's Multi-AZ failover mid-sale, with replication behind (infra/twin/redis-pair.ts):
 * the twin's Redis is a primary and a real replica, reached through a stand-in for the primary
 * endpoint. Replication is held from the sale's first order, so the primary acknowledges
 * reservations the replica never gets; then the primary is killed, the replica promoted and the
 * endpoint repointed, as the DNS name is. What the replica lacks (reservations, outbox entries,
 * stock taken, keys) is gone, while their orders were acknowledged and may be queued. Every
 * acknowledged order must be stored.
 */
import { startRedisPair } from '../../../infra/twin/redis-pair';
import { redisCommand } from '../../../infra/twin/redis-server';
import { round } from '../../support/round';
import { runScenario } from '../harness';
import { SALE_KINDS } from '../kinds';
import { holdersLost, lastHolders } from '../redis';
import type { ChaosOptions, ChaosReport } from '../report';

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const pair = await startRedisPair();
  const onPrimary = (...args: (string | number)[]) => redisCommand(pair.primary.port, ...args);
  const onReplica = (...args: (string | number)[]) => redisCommand(pair.replica.port, ...args);
  let heldAt = 0;
  let acknowledgedAtFault: number[] = [];
  let lost: string[] = [];
  try {
    return await runScenario(
      {
        name: 'redis-failover',
        // The pair replaces the harness's own Redis, which goes unused.
        twinEnv: () => ({ REDIS_URL: pair.url }),
        // Held before the first order rather than mid-sale: on a busy machine the answers lag so
        // far behind Redis that, by the time a third are acknowledged, every unit may be taken,
        // and a failover then would lose nothing.
        async beforeSale({ options: { log } }) {
          await pair.synced();
          pair.holdReplication();
          heldAt = Date.now();
          log('replication held: the replica has the sessions and the sale, and will get none of its orders');
        },
        async fault({ sale, owner, options: { kind, log } }) {
          acknowledgedAtFault = [...sale!.acknowledged.values()].map((buyer) => buyer.userId);
          // What the failover loses, by buyer: what the primary holds when it goes and the replica lacks.
          const holders = SALE_KINDS[kind].holders(owner);
          lost = await holdersLost(onReplica, holders, await lastHolders(onPrimary, holders));
          await pair.failOver();
          log(`primary killed, replica promoted, the endpoint repointed: ${lost.length} reservations lost`);
        },
        // The writer stores most of their orders before the harness can look, though their
        // reservations (the stock they took) are gone: each is a unit that may be sold again and rejected.
        lostReservations: () => lost.length,
        assess(_, { fault }) {
          const lostBuyers = new Set(lost.map(Number));
          return {
            // Every order acknowledged before the failover was reserved on the primary alone: the count of what was lost holds each.
            invariants: { lost_each_acknowledged_before_fault: acknowledgedAtFault.every((buyer) => lostBuyers.has(buyer)) },
            extra: { replication_held_s: round((fault.to - heldAt) / 1000), acknowledged_at_fault: acknowledgedAtFault.length },
          };
        },
      },
      options,
    );
  } finally {
    await pair.stop();
  }
}
