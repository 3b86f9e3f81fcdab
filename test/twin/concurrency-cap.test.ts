import { afterEach, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { capped } from '../../infra/twin/lambda/concurrency';
import { startGateway, type Gateway } from '../../infra/twin/events/gateway';
import { routeThrottleBucket } from '../../infra/twin/events/route-throttle';
import { until } from '../../shared/platform/wait';

const spec = (concurrencyCap?: number): FunctionSpec => ({
  id: 'capped-test',
  description: 'A function the test holds open',
  trigger: { kind: 'http', method: 'POST', path: '/held' },
  memoryMb: 128,
  timeoutSeconds: 3,
  env: [],
  ...(concurrencyCap ? { concurrencyCap } : {}),
});

/** A function whose invocations stay in flight until released, counting how many run at once. */
function heldFunction() {
  const releases: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const invoke = async (n: number) => {
    running += 1;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => releases.push(resolve));
    running -= 1;
    return { statusCode: 200, body: JSON.stringify({ n }) };
  };
  const releaseAll = async () => {
    while (releases.length) releases.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { invoke, releaseAll, held: () => releases.length, most: () => most };
}

describe("the twin's concurrency caps and route throttles", () => {
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('answers a route whose function is at its cap 429 {"message":"Too Many Requests"} where no route throttle is applied (source mode), in the throttle’s stead', async () => {
    // Prepare
    const fn = heldFunction();
    const invoke = capped(spec(2), () => fn.invoke(0), 'refuse');
    // A throttle that would refuse the third request, which source mode does not apply.
    const throttle = { rateLimit: 0.001, burstLimit: 2 };
    gateway = await startGateway([{ method: 'POST', path: '/held', invoke, throttle }], 0, () => undefined);
    const post = () => fetch(`${gateway!.url}/held`, { method: 'POST' });

    // Act
    const inFlight = [post(), post()];
    await until(async () => fn.held() >= 2, 10_000, 'both requests in the function', 5);
    const refused = await post();
    await fn.releaseAll();
    const served = await Promise.all(inFlight);
    const afterwards = post();
    await until(async () => fn.held() >= 1, 10_000, 'the request after in the function', 5);
    await fn.releaseAll();

    // Assess
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ message: 'Too Many Requests' });
    expect(served.map((r) => r.status)).toEqual([200, 200]);
    expect((await afterwards).status).toBe(200);
  });

  it('answers a function at its cap with API Gateway’s 500 where the route’s throttle is applied (bundles), as AWS answers a throttled Lambda', async () => {
    // Prepare
    const fn = heldFunction();
    const invoke = capped(spec(2), () => fn.invoke(0), 'refuse');
    const throttle = { rateLimit: 1_000, burstLimit: 10 };
    gateway = await startGateway([{ method: 'POST', path: '/held', invoke, throttle }], 0, () => undefined, { routeThrottles: true });
    const post = () => fetch(`${gateway!.url}/held`, { method: 'POST' });

    // Act
    const inFlight = [post(), post()];
    await until(async () => fn.held() >= 2, 10_000, 'both requests in the function', 5);
    const throttledByLambda = await post();
    await fn.releaseAll();
    await Promise.all(inFlight);

    // Assess
    expect(throttledByLambda.status).toBe(500);
    expect(await throttledByLambda.json()).toEqual({ message: 'Internal Server Error' });
  });

  it('answers past a route’s throttle 429 {"message":"Too Many Requests"} without invoking its function, as API Gateway’s stage does', async () => {
    // Prepare: a burst of three, refilled once a thousand seconds
    const fn = heldFunction();
    const throttle = { rateLimit: 0.001, burstLimit: 3 };
    gateway = await startGateway([{ method: 'POST', path: '/held', invoke: () => fn.invoke(0), throttle }], 0, () => undefined, { routeThrottles: true });
    const post = () => fetch(`${gateway!.url}/held`, { method: 'POST' });

    // Act
    const burst = [post(), post(), post()];
    await until(async () => fn.held() >= 3, 10_000, 'the burst in the function', 5);
    const past = await Promise.all([post(), post()]);
    await fn.releaseAll();
    const served = await Promise.all(burst);

    // Assess
    expect(served.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(past.map((r) => r.status)).toEqual([429, 429]);
    expect(await past[0]!.json()).toEqual({ message: 'Too Many Requests' });
    expect(fn.most()).toBe(3);
  });

  it('refills a route’s bucket at its rate, up to its burst', () => {
    // Prepare
    let now = 0;
    const bucket = routeThrottleBucket({ rateLimit: 2, burstLimit: 2 }, () => now);

    // Act
    const takes = (n: number) => Array.from({ length: n }, () => bucket.take());
    const first = takes(3);
    now = 500;
    const halfASecondOn = takes(2);
    now = 60_000;
    const aMinuteOn = takes(3);

    // Assess
    expect(first).toEqual([true, true, false]);
    expect(halfASecondOn).toEqual([true, false]);
    expect(aMinuteOn).toEqual([true, true, false]);
  });

  it('makes an asynchronous invocation past the cap wait its turn, losing none', async () => {
    // Prepare
    const fn = heldFunction();
    const invoke = capped(spec(3), (n: number) => fn.invoke(n), 'wait');

    // Act
    const all = Array.from({ length: 10 }, (_, n) => invoke(n));
    await until(async () => fn.held() >= 3, 10_000, 'three invocations in the function', 5);
    const heldAtOnce = fn.held();
    let done = 0;
    all.forEach((p) => p.then(() => (done += 1)));
    while (done < 10) await fn.releaseAll();

    // Assess
    expect(heldAtOnce).toBe(3);
    expect(fn.most()).toBe(3);
    expect((await Promise.all(all)).map((r) => JSON.parse(r.body).n)).toEqual([...Array(10).keys()]);
  });

  it('leaves a function without a cap alone', () => {
    const invoke = async () => 1;

    expect(capped(spec(), invoke, 'refuse')).toBe(invoke);
  });
});
