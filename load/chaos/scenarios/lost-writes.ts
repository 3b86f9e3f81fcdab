/**
 * A cache failover that lost the last writes, made exact: the sale opens, the writer is paused
 * (SIGSTOP to the consumers' process), orders are acknowledged (202) and queued, then Redis goes
 * back to a copy of its files from before them (kill -9, the copy restored, started again) and the
 * writer resumes (SIGCONT). Those orders' outbox entries, stock and keys are gone; their messages
 * are not. Every one of them must still be stored, and found by GET /orders/{id}.
 */
import { runScenario } from '../harness';
import { SALE_KINDS } from '../kinds';
import { holdersLost, lastHolders } from '../redis';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  let snapshot = '';
  let paused: number | undefined;
  let acknowledgedAtFault: number[] = [];
  let lost: string[] = [];
  return runScenario(
    {
      name: 'lost-writes',
      async beforeSale(run) {
        paused = run.pidOf('consumers');
        process.kill(paused!, 'SIGSTOP');
        // Every write Redis has answered is in its files, fsynced or not: the sessions and the sale are in the copy.
        snapshot = run.redis.snapshot();
        run.options.log(`consumers' process ${paused} paused; Redis's files copied`);
      },
      async fault({ redis, sale, owner, options: { kind, log } }) {
        acknowledgedAtFault = [...sale!.acknowledged.values()].map((buyer) => buyer.userId);
        // What the restore loses, by buyer: every reservation Redis holds when it goes and the copy
        // lacks. More than those acknowledged so far: reservations made meanwhile, and those whose
        // answer is still on its way (on a busy machine, many), are lost as well.
        const holders = SALE_KINDS[kind].holders(owner);
        const went = await lastHolders(redis.command, holders);
        await redis.kill();
        redis.restore(snapshot);
        await redis.start();
        lost = await holdersLost(redis.command, holders, went);
        log(`Redis back from the copy made before the orders: ${lost.length} reservations lost`);
        process.kill(paused!, 'SIGCONT');
        log(`consumers' process ${paused} resumed`);
      },
      lostReservations: () => lost.length,
      assess() {
        const lostBuyers = new Set(lost.map(Number));
        return {
          // Every order acknowledged before the fault came after the copy: the count of what was lost holds each.
          invariants: { lost_each_acknowledged_before_fault: acknowledgedAtFault.every((buyer) => lostBuyers.has(buyer)) },
          extra: { acknowledged_at_fault: acknowledgedAtFault.length },
        };
      },
    },
    options,
  );
}
