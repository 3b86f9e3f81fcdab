/**
 * Redis forgets its scripts mid-load (SCRIPT FLUSH), then restarts (an orderly stop and start from
 * its append-only file, which keeps no scripts either): every EVALSHA meets NOSCRIPT, and must be
 * sent again as EVAL rather than answer a 500.
 */
import { runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/** Load that meets the flushed script cache before the restart. */
const BETWEEN_MS = 300;

export function run(options: ChaosOptions): Promise<ChaosReport> {
  return runScenario(
    {
      name: 'script-flush',
      async fault({ redis, options: { log } }) {
        await redis.command('SCRIPT', 'FLUSH');
        log('scripts flushed');
        await new Promise((r) => setTimeout(r, BETWEEN_MS));
        await redis.stop();
        await redis.start();
        log('redis-server restarted');
      },
    },
    options,
  );
}
