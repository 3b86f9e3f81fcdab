/**
 * The writer dies mid-batch: the consumers' process is killed (kill -9) mid-sale, and a fault point
 * (SURGE_FAULTS=writer-after-commit:0.3:first) kills it again, exactly between a batch's COMMIT and
 * its settle in Redis, on its first batch and on about a third of the others. The twin starts it
 * again each time, as Lambda does; the batches come back after their visibility timeout, or sooner
 * through the relay.
 */
import { readFileSync } from 'node:fs';
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  return runScenario(
    {
      name: 'writer-kill',
      // Its first batch too: a busy machine writes the sale in a few large batches, which a third alone may all miss.
      twinEnv: () => ({ SURGE_FAULTS: 'writer-after-commit:0.3:first' }),
      async fault(run) {
        // The fault point may just have killed it: then the one the twin starts next is killed.
        let pid = run.pidOf('consumers');
        for (;;) {
          try {
            process.kill(pid!, 'SIGKILL');
            break;
          } catch {
            pid = await run.restarted('consumers', pid);
          }
        }
        run.options.log(`consumers' process ${pid} killed`);
        run.options.log(`consumers' process started again as ${await run.restarted('consumers', pid)}`);
      },
      assess(run) {
        let firings = 0;
        try {
          firings = readFileSync(run.faultLog, 'utf8').split('\n').filter(Boolean).length;
        } catch {
          // No log: the point never fired.
        }
        return { invariants: { fault_point_fired: firings >= 1 } };
      },
    },
    options,
  );
}
