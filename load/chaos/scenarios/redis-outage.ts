/**
 * redis-server stopped mid-sale for 30 s (5 s at small scale), then started again: while it is
 * away every order must answer a retry-safe 503 within a second, none may hang or answer 500, and
 * the buyers, retrying with their keys, must finish the sale once it is back.
 */
import { percentile, runScenario, tally } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/** The client's longest wait for Redis is 1 s (shared/clients/redis.ts): an answer within it is fast. */
const OUTAGE_P99_LIMIT_MS = 1_000;

export function run(options: ChaosOptions): Promise<ChaosReport> {
  const outageMs = options.scale === 'full' ? 30_000 : 5_000;
  const outage = { from: 0, to: 0 };
  return runScenario(
    {
      name: 'redis-outage',
      async fault({ redis, options: { log } }) {
        await redis.stop();
        outage.from = Date.now();
        log(`redis-server stopped for ${outageMs / 1000} s`);
        await new Promise((r) => setTimeout(r, outageMs));
        outage.to = Date.now();
        await redis.start();
      },
      assess(_, { attempts }) {
        // Asked and answered while Redis was away, start to finish.
        const away = attempts.filter((a) => a.startedAt >= outage.from && a.startedAt + a.ms <= outage.to);
        const p99 = percentile(away.map((a) => a.ms), 99);
        return {
          invariants: {
            outage_all_503: away.length > 0 && away.every((a) => a.status === 503),
            outage_p99_under_1s: p99 < OUTAGE_P99_LIMIT_MS,
            none_hung: attempts.every((a) => a.status !== 'timeout'),
          },
          extra: { outage: { s: outageMs / 1000, requests: away.length, statuses: tally(away), p99_ms: Math.round(p99), max_ms: Math.round(Math.max(0, ...away.map((a) => a.ms))) } },
        };
      },
    },
    options,
  );
}
