/**
 * A cache failover that lost the last writes, made exact: the sale opens, the writer is paused
 * (SIGSTOP to the consumers' process), orders are acknowledged (202) and queued, then Redis goes
 * back to a copy of its files from before them (kill -9, the copy restored, started again) and the
 * writer resumes (SIGCONT). Those orders' outbox entries, stock and keys are gone; their messages
 * are not. Every one of them must still be stored, and found by GET /orders/{id}.
 */
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  let snapshot = '';
  let paused: number | undefined;
  let acknowledgedAtFault = 0;
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
      async fault({ redis, sale, options: { log } }) {
        acknowledgedAtFault = sale!.acknowledged.size;
        await redis.kill();
        redis.restore(snapshot);
        await redis.start();
        log('Redis back from the copy made before the orders');
        process.kill(paused!, 'SIGCONT');
        log(`consumers' process ${paused} resumed`);
      },
      // Every order acknowledged before the fault came after the copy: all of them were lost.
      lostReservations: () => acknowledgedAtFault,
    },
    options,
  );
}
