/**
 * Every message delivered twice, out of order: the twin's event source mapping runs with its
 * deliver-twice fault switch (SURGE_DELIVER_TWICE=true), handing each batch to the writer twice,
 * each copy shuffled, the second up to half a second later. The fault lasts the whole sale.
 */
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  return runScenario(
    {
      name: 'duplicates',
      twinEnv: () => ({ SURGE_DELIVER_TWICE: 'true' }),
      faultAfter: 0,
      async fault(run) {
        await run.sale!.finished;
      },
    },
    options,
  );
}
