/**
 * ElastiCache's Multi-AZ failover mid-sale, with replication behind (infra/twin/faults/redis-pair.ts):
 * the twin's Redis is a primary and a real replica, reached through a stand-in for the primary
 * endpoint, and the functions wait for the replica to hold each reservation (REDIS_REPLICA_ACKS=1).
 * Once a third of the units are acknowledged, replication is held for --fault-s seconds (3 by
 * default, 1 at small scale), so the primary takes reservations the replica never gets; then the primary is killed,
 * the replica promoted, the endpoint repointed, as the DNS name is, and the node lost replaced.
 * What the replica lacks is gone, but none of it was acknowledged: those buyers were told 503 and
 * retry. No acknowledged order may be rejected, nor lost.
 */
import { startRedisPair } from '../../../infra/twin/faults/redis-pair';
import { redisCommand } from '../../../infra/twin/faults/redis-server';
import { round } from '../../support/round';
import { runScenario } from '../harness';
import { SALE_KINDS } from '../kinds';
import { holdersLost, lastHolders } from '../redis';
import type { ChaosOptions, ChaosReport } from '../report';

const HELD_S = { full: 3, small: 1 } as const;

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const pair = await startRedisPair();
  const heldS = options.faultSeconds ?? HELD_S[options.scale];
  let heldAt = 0;
  let failedOverAt = 0;
  let replacedAt = 0;
  let lost: string[] = [];
  try {
    return await runScenario(
      {
        name: 'redis-failover',
        // The pair replaces the harness's own Redis, which goes unused; the functions wait for its replica.
        twinEnv: () => ({ REDIS_URL: pair.url, REDIS_REPLICA_ACKS: '1' }),
        async fault({ owner, options: { kind, log } }) {
          await pair.synced();
          pair.holdReplication();
          heldAt = Date.now();
          log(`replication held for ${heldS} s: the replica gets none of what the primary takes meanwhile`);
          await new Promise((resolve) => setTimeout(resolve, heldS * 1000));
          // What the failover loses, by buyer: what the primary holds when it goes and the replica lacks.
          const holders = SALE_KINDS[kind].holders(owner);
          const onPrimary = (...args: (string | number)[]) => redisCommand(pair.primary.port, ...args);
          const onReplica = (...args: (string | number)[]) => redisCommand(pair.replica.port, ...args);
          lost = await holdersLost(onReplica, holders, await lastHolders(onPrimary, holders));
          failedOverAt = Date.now();
          await pair.failOver();
          replacedAt = Date.now();
          log(
            `primary killed, replica promoted, the endpoint repointed, the node lost replaced after ${round((replacedAt - failedOverAt) / 1000)} s: ${lost.length} reservations lost`,
          );
        },
        // Reservations the primary took that the replica lacked: none acknowledged, so none may be stored rejected.
        lostReservations: () => lost.length,
        assess(_, { ledger, attempts }) {
          const answered = (a: (typeof attempts)[number]) => a.startedAt + a.ms;
          const acknowledgedAfter = attempts.filter((a) => (a.status === 202 || a.status === 201) && answered(a) > failedOverAt).map(answered);
          const during = attempts.filter((a) => answered(a) >= heldAt && a.startedAt <= replacedAt);
          return {
            invariants: { no_acknowledged_rejected: ledger.rejectedAcknowledged === 0 },
            extra: {
              replication_held_s: round((failedOverAt - heldAt) / 1000),
              replacement_synced_s: round((replacedAt - failedOverAt) / 1000),
              // From the failover until the first acknowledgement after it: the promoted primary refuses writes until its new replica has synced.
              acknowledging_again_after_s: acknowledgedAfter.length ? round((Math.min(...acknowledgedAfter) - failedOverAt) / 1000) : null,
              answered_while_held_or_failing_over: during.length,
              '503_while_held_or_failing_over': during.filter((a) => a.status === 503).length,
            },
          };
        },
      },
      options,
    );
  } finally {
    await pair.stop();
  }
}
