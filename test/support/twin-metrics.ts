import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAccounts } from '../../infra/twin/seed';
import type { MetricsSnapshot } from '../../infra/twin/lambda/emf';
import { METRICS_PATH } from '../../infra/twin/routes';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { signedIn } from '../../infra/client/client';
import { until } from '../../shared/platform/wait';

/**
 * The EMF lines the functions print reach the twin's GET /__twin/metrics, summed as CloudWatch
 * would: from the API's functions in the twin's process and from the writer in the consumers'
 * process, whether the functions run from their sources or as their bundles (in worker threads).
 * One mode per test file, so one twin per process as `npm start` runs it: a second twin started
 * in the same process after the first stopped did not see its writer's lag.
 */
export function describeTwinMetrics(mode: 'sources' | 'bundles'): void {
  const bundles = mode === 'bundles';
  describe(`the twin collects the metrics its functions print (${mode})`, () => {
    let twin: Twin;
    const stateDir = `.local/test-metrics-${mode}-${randomBytes(3).toString('hex')}`;

    beforeAll(async () => {
      // On the tests' cluster the twin's bundles must be told so, as they get only their rows' environment.
      twin = await startTwin({
        port: 0,
        smtpPort: 0,
        stateDir,
        database: `surge_metrics_${mode}`,
        bundles,
        consumers: 'process',
        queuePrefix: `metrics-${mode}-`,
        redisCluster: process.env.REDIS_CLUSTER === 'true',
      });
    }, 180_000);
    afterAll(async () => {
      await twin?.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });

    const signIn = async (role: 'user' | 'admin') => {
      const account = demoAccounts.find((a) => a.role === role)!;
      return (await signedIn(twin.url, account)).client;
    };
    const snapshot = async () => (await (await fetch(`${twin.url}${METRICS_PATH}`)).json()) as MetricsSnapshot;
    const metric = (s: MetricsSnapshot, name: string) => s.metrics.find((m) => m.name === name);

    it('counts an accepted order, a sold-out one, and the writer lag of the one stored', async () => {
      // Prepare: one unit, which the buyer may take twice
      const [admin, user] = [await signIn('admin'), await signIn('user')];
      const itemId = `metrics-${randomBytes(3).toString('hex')}`;
      expect((await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 1, perUserLimit: 2 } })).response.status).toBeLessThan(
        300,
      );
      const order = () =>
        user.POST('/items/{itemId}/orders', {
          params: { path: { itemId }, header: { 'idempotency-key': randomBytes(8).toString('hex') } },
          body: { quantity: 1 },
        });

      // Act
      const accepted = await order();
      const soldOut = await order();
      // Each instance holds its counts up to METRICS_FLUSH_MS (shared/platform/metrics.ts): waited for, not slept on.
      const answered = (await until(
        async () => {
          const s = await snapshot();
          return metric(s, 'orders.accepted') && metric(s, 'orders.soldOut') ? s : undefined;
        },
        60_000,
        "the API's order counts in /__twin/metrics",
      ))!;
      await until(async () => metric(await snapshot(), 'orders.writerLag') !== undefined, 60_000, 'the writer lag in /__twin/metrics');

      // Assess: the API's counts are there once its instance has printed them, the writer's once it has stored and printed
      expect(accepted.response.status).toBe(202);
      expect(soldOut).toMatchObject({ response: { status: 409 }, error: { error: { code: 'SOLD_OUT' } } });
      const dimensions = { service: 'surge' };
      expect(metric(answered, 'orders.accepted')).toMatchObject({ namespace: 'Surge', unit: 'Count', dimensions, samples: 1, sum: 1 });
      expect(metric(answered, 'orders.soldOut')).toMatchObject({ namespace: 'Surge', unit: 'Count', dimensions, samples: 1, sum: 1 });
      const s = await snapshot();
      const lag = metric(s, 'orders.writerLag')!;
      expect(lag).toMatchObject({ namespace: 'Surge', unit: 'Milliseconds', dimensions, samples: 1 });
      expect(lag.sum).toBeGreaterThanOrEqual(0);
      expect(lag.sum).toBeLessThan(20_000);
      // At least the API's line (its counts held together) and the writer's, from the consumers' process.
      expect(s.recent.length).toBeGreaterThanOrEqual(2);
    });
  });
}
