/**
 * redis-server stopped mid-sale for 30 s (5 s at small scale) and until a request has been answered
 * while it was away, then started again: while it is away every order must answer a retry-safe 503
 * within a second of the time an answer takes on this machine anyway, none may hang or answer 500,
 * and the buyers, retrying with their keys, must finish the sale once it is back.
 */
import { until } from '../../../shared/platform/wait';
import { percentile, runScenario, tally } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/**
 * The function's longest wait for Redis is 1 s (shared/platform/clients/redis.ts): Redis away may add at most
 * that to an answer. The rest of an answer's time is the machine's (the gateway, the client, other
 * work beside them), measured in the same run as the p99 of the answers before the fault.
 */
const REDIS_WAIT_LIMIT_MS = 1_000;
/** Only decides when to give up on an outage no request met: the buyers released into it meet it within seconds. */
const MET_WITHIN_MS = 120_000;

export function run(options: ChaosOptions): Promise<ChaosReport> {
  const outageMs = options.scale === 'full' ? 30_000 : 5_000;
  const outage = { from: 0, to: 0 };
  return runScenario(
    {
      name: 'redis-outage',
      // Buyers who arrive once Redis is away: the others may all have been served before it stopped.
      heldBack: 1 / 6,
      async fault({ redis, sale, options: { log } }) {
        await redis.stop();
        outage.from = Date.now();
        sale!.release();
        log(`redis-server stopped for ${outageMs / 1000} s and until a request has been answered meanwhile`);
        const met = async () => Date.now() - outage.from >= outageMs && sale!.attempts.some((a) => a.startedAt >= outage.from);
        // Not thrown: the report says no request met the outage (outage_all_503).
        await until(met, MET_WITHIN_MS, 'a request answered while Redis was away').catch((error: Error) => log(error.message));
        outage.to = Date.now();
        await redis.start();
      },
      assess(_, { attempts }) {
        // Asked and answered while Redis was away, start to finish.
        const away = attempts.filter((a) => a.startedAt >= outage.from && a.startedAt + a.ms <= outage.to);
        const p99 = percentile(
          away.map((a) => a.ms),
          99,
        );
        const before = attempts.filter((a) => a.startedAt + a.ms < outage.from);
        const normalP99 = percentile(
          before.map((a) => a.ms),
          99,
        );
        return {
          invariants: {
            outage_all_503: away.length > 0 && away.every((a) => a.status === 503),
            outage_p99_within_1s_of_normal: p99 < normalP99 + REDIS_WAIT_LIMIT_MS,
            none_hung: attempts.every((a) => a.status !== 'timeout'),
          },
          extra: {
            outage: {
              s: outageMs / 1000,
              requests: away.length,
              statuses: tally(away),
              p99_ms: Math.round(p99),
              normal_p99_ms: Math.round(normalP99),
              max_ms: Math.round(Math.max(0, ...away.map((a) => a.ms))),
            },
          },
        };
      },
    },
    options,
  );
}
