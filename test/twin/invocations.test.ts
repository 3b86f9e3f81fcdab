import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { signedIn, surgeClient } from '../../infra/client/client';
import { BundleLambda } from '../../infra/twin/lambda/bundle-lambda';
import { invocationCounts, platformLines, type FunctionInvocations } from '../../infra/twin/lambda/invocations';
import { LocalLambda } from '../../infra/twin/lambda/lambda';
import { demoAccounts } from '../../infra/twin/seed';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { perRequest, snapshotInvocations } from '../../load/support/invocations';
import { until } from '../../shared/platform/wait';

const specOf = (id: string, memoryMb = 128, timeoutSeconds = 3): FunctionSpec => ({
  id,
  description: 'A function for the tests',
  trigger: { kind: 'http', method: 'GET', path: `/${id}` },
  memoryMb,
  timeoutSeconds,
  env: [],
});
const uniqueId = (name: string) => `${name}-${randomBytes(3).toString('hex')}`;
const countsOf = (id: string): FunctionInvocations | undefined => invocationCounts().functions[id];
const REQUEST_ID = '8f507cfc-1234-4697-b07a-ac58fc914c95';
/** Lambda's three lines for invocations of these durations, as the meter sizes them. */
const platformBytes = (durations: number[], memoryMb: number) =>
  durations.reduce((sum, d) => sum + Buffer.byteLength(platformLines(REQUEST_ID, d, memoryMb)), 0);

describe("Lambda's lines around an invocation", () => {
  it('are START, END and REPORT as Lambda writes them, with the duration billed rounded up to the millisecond', () => {
    const lines = platformLines(REQUEST_ID, 12.341, 512).split('\n');

    expect(lines).toEqual([
      `START RequestId: ${REQUEST_ID} Version: $LATEST`,
      `END RequestId: ${REQUEST_ID}`,
      `REPORT RequestId: ${REQUEST_ID}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 512 MB\tMax Memory Used: 100 MB\t`,
      '',
    ]);
    expect(lines.map((line) => Buffer.byteLength(`${line}\n`)).slice(0, 3)).toEqual([71, 52, 142]);
  });
});

describe('the twin meters what Lambda would bill and log, per function', () => {
  it('counts a source function’s invocations, billed milliseconds and Lambda’s own lines, not its output (measured in bundle mode)', async () => {
    // Prepare: two functions that write, interleaved
    const [a, b] = [uniqueId('meter-a'), uniqueId('meter-b')];
    const writer = (line: string) => async () => {
      for (let i = 0; i < 3; i += 1) {
        process.stdout.write(line);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { statusCode: 200 };
    };
    const lambdaA = new LocalLambda(specOf(a, 512), async () => writer('from a\n'));
    const lambdaB = new LocalLambda(specOf(b), async () => writer('from b, longer\n'));

    // Act
    await Promise.all([lambdaA.invoke({}), lambdaB.invoke({}), lambdaA.invoke({})]);

    // Assess: each invocation counted and billed, with Lambda's three lines and nothing it wrote
    const [countA, countB] = [countsOf(a)!, countsOf(b)!];
    expect(countA).toMatchObject({ invocations: 2, memory_mb: 512 });
    expect(countB).toMatchObject({ invocations: 1, memory_mb: 128 });
    expect(countA.duration_ms).toBeGreaterThanOrEqual(2 * 10);
    expect(countA.billed_ms).toBeGreaterThanOrEqual(Math.ceil(countA.duration_ms));
    expect(countA.billed_ms).toBeLessThanOrEqual(Math.ceil(countA.duration_ms) + 2);
    // Each REPORT line's digits depend on its own duration: sized here from the bounds of the two.
    expect(countA.log_bytes).toBeGreaterThanOrEqual(2 * platformBytes([10], 512));
    expect(countA.log_bytes).toBeLessThanOrEqual(2 * platformBytes([countA.duration_ms], 512));
    expect(countB.log_bytes).toBe(platformBytes([countB.duration_ms], 128));
  });

  it('bills a timed-out invocation its whole timeout', async () => {
    const id = uniqueId('meter-timeout');
    const lambda = new LocalLambda(specOf(id, 128, 1), async () => async () => new Promise(() => undefined));

    await expect(lambda.invoke({})).rejects.toThrow(/timed out/);

    expect(countsOf(id)).toMatchObject({ invocations: 1, duration_ms: 1_000, billed_ms: 1_000, log_bytes: platformBytes([1_000], 128) });
  });

  it('counts what a bundle’s worker thread writes, relayed to this process’s streams', async () => {
    // Prepare
    const id = uniqueId('meter-bundle');
    const lambda = new BundleLambda(specOf(id, 256), pathToFileURL(`${import.meta.dirname}/../fixtures/bundles/echo.mjs`).href, {});
    try {
      // Act
      await lambda.invoke({ print: 'out of the thread\n', printError: 'and its stderr\n' });

      // Assess: the thread's output reaches this process after its reply, so it is waited for
      const own = 'out of the thread\n'.length + 'and its stderr\n'.length;
      const counted = await until(
        async () => {
          const c = countsOf(id)!;
          return c.log_bytes >= own + platformBytes([0], 256) ? c : undefined;
        },
        30_000,
        "the thread's output counted",
      );
      expect(counted).toMatchObject({ invocations: 1, memory_mb: 256 });
      expect(counted!.billed_ms).toBe(Math.max(1, Math.ceil(counted!.duration_ms)));
      expect(counted!.log_bytes).toBe(own + platformBytes([counted!.duration_ms], 256));
    } finally {
      await lambda.stop();
    }
  });
});

describe('the twin serves its invocation counts, from both its processes', () => {
  let twin: Twin;
  const stateDir = `.local/test-invocations-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    twin = await startTwin({
      port: 0,
      smtpPort: 0,
      stateDir,
      database: 'surge_invocations',
      consumers: 'process',
      queuePrefix: 'invocations-',
      redisCluster: process.env.REDIS_CLUSTER === 'true',
    });
  }, 180_000);
  afterAll(async () => {
    await twin?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const snapshot = () => snapshotInvocations(twin);

  it('counts each invocation of a route in the gateway’s process, with its log bytes', async () => {
    // Prepare
    const before = await snapshot();

    // Act
    for (let i = 0; i < 5; i += 1) expect((await surgeClient(twin.url).GET('/health')).response.status).toBe(200);
    const after = await snapshot();

    // Assess: one invocation a request, at least a billed millisecond and Lambda's three lines each
    const { health } = perRequest(before, after, 5);
    expect(health).toMatchObject({ invocations: 1, memory_mb: 512 });
    expect(health!.billed_ms).toBeGreaterThanOrEqual(1);
    expect(health!.log_bytes).toBeGreaterThanOrEqual(platformBytes([0], 512));
    expect(after.gateway.pid).toBe(process.pid);
  });

  it('counts the writer’s invocations in the consumers’ process', async () => {
    // Prepare: an order, which the writer stores from the queue
    const signIn = async (role: 'admin' | 'user') => (await signedIn(twin.url, demoAccounts.find((a) => a.role === role)!)).client;
    const [admin, user] = [await signIn('admin'), await signIn('user')];
    const itemId = uniqueId('invocations');
    expect((await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 1, perUserLimit: 1 } })).response.status).toBeLessThan(
      300,
    );
    const before = await snapshot();

    // Act
    const order = await user.POST('/items/{itemId}/orders', {
      params: { path: { itemId }, header: { 'idempotency-key': randomBytes(8).toString('hex') } },
      body: { quantity: 1 },
    });
    const after = await until(
      async () => {
        const s = await snapshot();
        return (s.consumers?.functions['write-reservations']?.invocations ?? 0) > (before.consumers?.functions['write-reservations']?.invocations ?? 0)
          ? s
          : undefined;
      },
      60_000,
      "the writer's invocation counted",
    );

    // Assess: the order's function in the gateway's process, the writer in the consumers'
    expect(order.response.status).toBe(202);
    const figures = perRequest(before, after!, 1);
    expect(figures['create-order']).toMatchObject({ invocations: 1 });
    expect(figures['write-reservations']).toMatchObject({ invocations: 1, memory_mb: 512 });
    expect(figures['write-reservations']!.log_bytes).toBeGreaterThan(0);
    expect(after!.gateway.functions['write-reservations']).toBeUndefined();
    expect(after!.consumers!.pid).not.toBe(process.pid);
  });
});
