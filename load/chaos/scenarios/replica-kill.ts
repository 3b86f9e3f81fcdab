/**
 * The replica lost mid-sale, not the primary (infra/twin/faults/redis-pair.ts): once a third of the units
 * are acknowledged the replica is killed, and replaced --fault-s seconds later (3 by default, 1 at
 * small scale; minutes on AWS), as ElastiCache replaces a node. The rule while no replica holds
 * anything is the strict one: no reservation is acknowledged (WAIT finds no replica; the primary's
 * min-replicas-to-write refuses writes), every order is told 503 and retried, and orders flow again
 * once the replacement has synced. Nothing acknowledged may be rejected or lost; nothing may be
 * acknowledged while there is no replica.
 */
import { startRedisPair } from '../../../infra/twin/faults/redis-pair';
import { round } from '../../support/round';
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

const ALONE_S = { full: 3, small: 1 } as const;

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const pair = await startRedisPair();
  const aloneS = options.faultSeconds ?? ALONE_S[options.scale];
  let killedAt = 0;
  let replacingAt = 0;
  let replacedAt = 0;
  try {
    return await runScenario(
      {
        name: 'replica-kill',
        twinEnv: () => ({ REDIS_URL: pair.url, REDIS_REPLICA_ACKS: '1' }),
        async fault({ options: { log } }) {
          await pair.killReplica();
          killedAt = Date.now();
          log(`replica killed: the primary is alone for ${aloneS} s`);
          await new Promise((resolve) => setTimeout(resolve, aloneS * 1000));
          replacingAt = Date.now();
          await pair.replaceReplica();
          replacedAt = Date.now();
          log(`replica replaced and synced after ${round((replacedAt - killedAt) / 1000)} s`);
        },
        // The primary keeps everything it took: nothing is lost in Redis.
        lostReservations: () => 0,
        assess(_, { ledger, attempts }) {
          const answered = (a: (typeof attempts)[number]) => a.startedAt + a.ms;
          const acknowledging = (a: (typeof attempts)[number]) => a.status === 202 || a.status === 201;
          // Alone: from the kill until the replacement begins to sync; a reservation it holds may stand from then on.
          const alone = attempts.filter((a) => a.startedAt > killedAt && answered(a) < replacingAt);
          const acknowledgedAfter = attempts.filter((a) => acknowledging(a) && answered(a) > replacedAt).map(answered);
          return {
            invariants: {
              no_acknowledged_rejected: ledger.rejectedAcknowledged === 0,
              none_acknowledged_without_a_replica: alone.filter(acknowledging).length === 0,
            },
            extra: {
              alone_s: round((replacingAt - killedAt) / 1000),
              replacement_synced_s: round((replacedAt - replacingAt) / 1000),
              answered_while_alone: alone.length,
              '503_while_alone': alone.filter((a) => a.status === 503).length,
              acknowledging_again_after_s: acknowledgedAfter.length ? round((Math.min(...acknowledgedAfter) - replacedAt) / 1000) : null,
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
