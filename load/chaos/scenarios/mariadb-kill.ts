/**
 * mariadbd killed (kill -9) while the writer drains the sale's orders; the twin starts it again on
 * the same port and datadir, as RDS restarts a crashed instance, and InnoDB recovers what was
 * committed. Orders keep being acknowledged meanwhile: they wait in the queue and the outbox.
 */
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

export function run(options: ChaosOptions): Promise<ChaosReport> {
  return runScenario(
    {
      name: 'mariadb-kill',
      async fault(run) {
        const pid = run.pidOf('database');
        process.kill(pid!, 'SIGKILL');
        run.options.log(`mariadbd ${pid} killed`);
        run.options.log(`mariadbd started again as ${await run.restarted('database', pid)}`);
      },
    },
    options,
  );
}
