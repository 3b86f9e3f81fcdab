/**
 * An operator repairing during the sale: `npm run reconcile -- <item> --repair` again 200 ms after
 * each run ends, from the first order to the last. A repair must never take a reservation in
 * flight for lost stock: a counter reset too high oversells (stored rejected), one too low undersells.
 */
import { runScenario } from '../harness';
import { reconcile } from '../reconcile';
import type { ChaosOptions, ChaosReport } from '../report';

const PAUSE_MS = 200;

export function run(options: ChaosOptions): Promise<ChaosReport> {
  const repairs = { runs: 0, counter_adjustments: 0, buyers_restored: 0, relayed: 0 };
  return runScenario(
    {
      name: 'repair-under-load',
      // Long enough at small scale for a few repairs (each run of the CLI takes about a second).
      scale: { small: { arrivalMs: 6_000 } },
      faultAfter: 0,
      async fault(run) {
        let over = false;
        void run.sale!.finished.then(() => (over = true));
        while (!over) {
          const line = await reconcile(run.env, run.options.kind, run.owner, ['--repair']);
          repairs.runs += 1;
          if (line?.adjusted) repairs.counter_adjustments += 1;
          repairs.buyers_restored += line?.buyersRestored ?? 0;
          repairs.relayed += line?.relayed ?? 0;
          await new Promise((r) => setTimeout(r, PAUSE_MS));
        }
      },
      // Nothing was lost, so a repair that moved a counter took a reservation in flight for drift.
      assess: () => ({ invariants: { no_counter_moved_without_loss: repairs.counter_adjustments === 0 }, extra: { repairs } }),
    },
    options,
  );
}
