/**
 * Redis forgets its scripts mid-load (SCRIPT FLUSH), then, once load has met the flushed script
 * cache, restarts (an orderly stop and start from its append-only file, which keeps no scripts
 * either): every EVALSHA meets NOSCRIPT, and must be sent again as EVAL rather than answer a 500.
 */
import { until } from '../../../shared/platform/wait';
import { runScenario } from '../harness';
import type { ChaosRedis } from '../redis';
import type { ChaosOptions, ChaosReport } from '../report';

/** Only decides when to give up on a flush no script call met: the buyers released into it meet it within seconds. */
const MET_WITHIN_MS = 120_000;

/** Script calls Redis has answered NOSCRIPT since it started. */
async function noScriptReplies(redis: ChaosRedis): Promise<number> {
  const stats = String(await redis.command('INFO', 'errorstats'));
  return Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(stats)?.[1] ?? 0);
}

export function run(options: ChaosOptions): Promise<ChaosReport> {
  let metFlush = 0;
  return runScenario(
    {
      name: 'script-flush',
      // Buyers who arrive once the scripts are gone: the others may all have been served before.
      heldBack: 1 / 6,
      async fault({ redis, sale, options: { log } }) {
        const before = await noScriptReplies(redis);
        await redis.command('SCRIPT', 'FLUSH');
        sale!.release();
        log('scripts flushed; restarting once a script call has met the flush');
        // Not thrown: the report says no call met the flush (flush_met).
        await until(async () => (metFlush = (await noScriptReplies(redis)) - before) > 0, MET_WITHIN_MS, 'a script call answered NOSCRIPT').catch(
          (error: Error) => log(error.message),
        );
        await redis.stop();
        await redis.start();
        log('redis-server restarted');
      },
      // A flush no script call met proves nothing.
      assess: () => ({ invariants: { flush_met: metFlush > 0 }, extra: { noscript_replies_before_restart: metFlush } }),
    },
    options,
  );
}
