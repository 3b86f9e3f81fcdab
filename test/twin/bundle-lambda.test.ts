import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { BundleLambda, type BundleLambdaOptions } from '../../infra/twin/lambda/bundle-lambda';
import { Throttled } from '../../infra/twin/lambda/concurrency';
import { InitSlots } from '../../infra/twin/lambda/init-slots';
import { until } from '../../shared/platform/wait';
import { profilingEnv } from '../../load/support/cpu-profile';

const spec: FunctionSpec = {
  id: 'echo',
  description: 'test',
  trigger: { kind: 'http', method: 'GET', path: '/echo' },
  memoryMb: 128,
  timeoutSeconds: 1,
  env: [],
};
const bundle = (name: string) => pathToFileURL(`${import.meta.dirname}/../fixtures/bundles/${name}.mjs`).href;
type Echo = { thread: number; concurrent: number; env: string | null; missing: string | null; when: unknown };

/** The echo function on Managed Instances: `environments` of `slots` invocations each, with time to spare for a busy machine. */
const managedSpec = (slots: number, environments: number): FunctionSpec => ({
  ...spec,
  timeoutSeconds: 10,
  managedInstances: { perEnvironmentConcurrency: slots, minEnvironments: environments },
});

/** A channel the echo bundle's held invocations say they began on, settled once `count` have; release() lets them all end. */
const gateOf = (count: number) => {
  const name = `hold-${randomUUID()}`;
  const channel = new BroadcastChannel(name);
  let entered = 0;
  const allIn = new Promise<void>((resolve) => {
    channel.onmessage = (message) => (message as MessageEvent).data === 'entered' && ++entered === count && resolve();
  });
  return { name, allIn, release: () => (channel.postMessage('release'), channel.close()) };
};

let lambdas: BundleLambda[] = [];
const make = (
  name: string,
  instances?: number,
  env: Record<string, string> = { ECHO_NEED: 'set' },
  options: BundleLambdaOptions = {},
  of: FunctionSpec = spec,
) => {
  const lambda = new BundleLambda(of, bundle(name), env, { ...(instances ? { instances } : {}), ...options });
  lambdas.push(lambda);
  return lambda;
};

/** Each instance's init of the slow-init bundle, as it logged it: when it began and ended. */
const initsLogged = (log: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').map(Number) as [number, number]);

/** The most inits that were running at one moment. */
const mostAtOnce = (inits: [number, number][]) =>
  Math.max(...inits.map(([began]) => inits.filter(([otherBegan, otherEnded]) => otherBegan <= began && began < otherEnded).length));

const slowInit = (busyMs: number) => {
  const log = join(mkdtempSync(join(tmpdir(), 'surge-inits-')), 'inits.log');
  writeFileSync(log, '');
  return { log, env: { INIT_BUSY_MS: String(busyMs), INIT_LOG: log } };
};
afterEach(async () => {
  await Promise.all(lambdas.map((l) => l.stop()));
  lambdas = [];
});

describe("the twin's bundle runner", () => {
  it('gives a function only the environment it was given, and a result as JSON would carry it', async () => {
    const result = (await make('echo').invoke({})) as Echo;

    expect(result).toMatchObject({ env: 'set', missing: null, when: '1970-01-01T00:00:00.000Z' });
  });

  it('in the instance model, runs one event at a time per instance, at most the cap at once', async () => {
    // Prepare
    const lambda = make('echo', 3);

    // Act: the first three each hold their instance until all three run at once, so every instance the cap allows serves
    const meeting = { name: `meet-${randomUUID()}`, count: 3 };
    const results = (await Promise.all(Array.from({ length: 9 }, (_, i) => lambda.invoke(i < 3 ? { meet: meeting } : { sleepMs: 100 })))) as Echo[];

    // Assess
    expect(results.every((r) => r.concurrent === 1)).toBe(true);
    expect(new Set(results.map((r) => r.thread)).size).toBe(3);
    expect(lambda.coldStarts).toBe(3);
  });

  it('in the instance model, serves a managed function by its environments alone, started before traffic, each taking many at once', async () => {
    // Prepare: two environments of three invocations each, under a cap of ten instances
    const lambda = make('echo', 10, undefined, {}, managedSpec(3, 2));
    await lambda.warm();
    const warmed = lambda.coldStarts;
    const gate = gateOf(6);

    // Act: six held at once, every slot; a seventh while they hold
    const held = Array.from({ length: 6 }, () => lambda.invoke({ hold: gate.name }) as Promise<Echo>);
    await gate.allIn;
    const seventh = lambda.invoke({}).then(
      () => undefined,
      (error: unknown) => error,
    );
    gate.release();
    const results = await Promise.all(held);

    // Assess: no environment started for the load, three on each thread at once, the seventh throttled as Lambda does before it scales
    expect(warmed).toBe(2);
    expect(lambda.coldStarts).toBe(2);
    expect(new Set(results.map((r) => r.thread)).size).toBe(2);
    // Spread over the environments, not one filled first
    expect(results[0]!.thread).not.toBe(results[1]!.thread);
    // Three on each thread at once, counted as each entered: none leaves before all six are in. (Read
    // at release, a holder whose release came a turn after its neighbour's had finished saw 2: CI.)
    expect(results.map((r) => r.concurrent).sort()).toEqual([1, 1, 2, 2, 3, 3]);
    expect(await seventh).toBeInstanceOf(Throttled);
    expect(await lambda.invoke({})).toMatchObject({ env: 'set' });
  });

  it('fails every invocation a managed environment was running when it dies, and replaces it at once', async () => {
    // Prepare: one environment of three slots, two invocations held in it
    const lambda = make('echo', 10, undefined, {}, managedSpec(3, 1));
    await lambda.warm();
    const gate = gateOf(2);
    const held = Array.from({ length: 2 }, () =>
      lambda.invoke({ hold: gate.name }).then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    );
    await gate.allIn;

    // Act: the third crashes the environment's process
    const crash = lambda.invoke({ crash: true }).catch((error: Error) => error.message);

    // Assess: all three fail with it; a new environment starts without waiting for an invocation, and serves the next
    expect(await crash).toMatch(/Runtime exited/);
    expect(lambda.coldStarts).toBe(2);
    expect(await Promise.all(held)).toEqual([expect.stringMatching(/Runtime exited/), expect.stringMatching(/Runtime exited/)]);
    gate.release();
    expect(await lambda.invoke({})).toMatchObject({ env: 'set' });
    expect(lambda.coldStarts).toBe(2);
  });

  it('shares one instance among concurrent invocations outside the instance model', async () => {
    const results = (await Promise.all(Array.from({ length: 5 }, () => make('echo').invoke({ sleepMs: 100 })))) as Echo[];
    const shared = make('echo');
    const together = (await Promise.all(Array.from({ length: 5 }, () => shared.invoke({ sleepMs: 100 })))) as Echo[];

    expect(results.every((r) => r.concurrent === 1)).toBe(true);
    expect(Math.max(...together.map((r) => r.concurrent))).toBe(5);
  });

  it('fails an invocation that outlives its timeout, and replaces that instance', async () => {
    // Prepare
    const lambda = make('echo', 1);
    const first = (await lambda.invoke({})) as Echo;

    // Act
    const timedOut = lambda.invoke({ sleepMs: 2_000 });
    await expect(timedOut).rejects.toThrow(/Task timed out after 1.00 seconds/);
    const after = (await lambda.invoke({})) as Echo;

    // Assess
    expect(after.thread).not.toBe(first.thread);
    expect(lambda.coldStarts).toBe(2);
  });

  it('fails, never hangs, when the instance dies or its cold start fails', async () => {
    // Prepare
    const crashing = make('echo', 1);
    const broken = make('broken-import', 1);
    const exiting = make('exits-on-import');

    // Act and assess
    await expect(crashing.invoke({ crash: true })).rejects.toThrow(/Runtime exited/);
    expect(await crashing.invoke({})).toMatchObject({ env: 'set' });
    await expect(broken.invoke({})).rejects.toThrow(/cannot start: no such thing/);
    await expect(exiting.invoke({})).rejects.toThrow(/Runtime exited/);
  });

  it('starts at most a core’s worth of instances at once, however many invocations ask at once', async () => {
    // Prepare: a cold start that keeps a core busy, as a bundle's import does
    const { log, env } = slowInit(300);
    const lambda = make('slow-init', 8, env);

    // Act: the instances free first take the invocations; those still starting go on to be idle
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => lambda.invoke({})));
    await until(async () => initsLogged(log).length + lambda.initFailures >= 8, 60_000, 'every instance asked for ended its init');

    // Assess: every invocation answered, eight instances started, never more inits at once than cores
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(lambda.coldStarts).toBe(8);
    expect(lambda.initFailures).toBe(0);
    const inits = initsLogged(log);
    expect(inits).toHaveLength(8);
    expect(mostAtOnce(inits)).toBeLessThanOrEqual(availableParallelism());
  });

  it('holds each instance to the init limit from when its own init starts, not from when it was asked for', async () => {
    // Prepare: one init at a time, each well inside the limit (even with the thread's start on a
    // slow, busy machine), twelve of them well beyond it
    const { log, env } = slowInit(300);
    const lambda = make('slow-init', 12, env, { initSlots: new InitSlots(1), initTimeoutMs: 2_500 });

    // Act
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => lambda.invoke({})));
    await until(async () => initsLogged(log).length + lambda.initFailures >= 12, 60_000, 'every instance asked for ended its init');

    // Assess: none timed out, though the last began long after the limit had passed since it was asked for
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(lambda.initFailures).toBe(0);
    const inits = initsLogged(log);
    expect(inits).toHaveLength(12);
    expect(mostAtOnce(inits)).toBe(1);
    expect(Math.max(...inits.map(([began]) => began)) - Math.min(...inits.map(([began]) => began))).toBeGreaterThan(2_500);
  });

  it('does not count against the init limit the time an init waited for a core others held', async () => {
    // Prepare: every core kept busy twice over, and an init that gets a core only when none of them wants it
    const hogs = Array.from({ length: 2 * availableParallelism() }, () =>
      spawn(process.execPath, ['-e', 'process.stdout.write("spinning\\n"); for(;;){}'], { stdio: ['ignore', 'pipe', 'ignore'] }),
    );
    // Each hog's process takes a while to start: an init asked for before they spin has the cores to itself.
    await Promise.all(hogs.map((hog) => new Promise((spinning) => hog.stdout!.once('data', spinning))));
    // 60 ms of a core at nice 19 beside two busy loops per core takes seconds by the clock (8.5 s at the
    // weights' share, ~1.4 s at the most a run has given it: CI once saw 40 ms take 0.99 s); its own
    // time (starting the thread, reading the bundle, the CPU it gets) stays far below the limit on a
    // busy machine too. Its handler, too, runs beside the busy loops: the function's own timeout is not what is measured here.
    const initLimitMs = 500;
    const lambda = new BundleLambda(
      { ...spec, timeoutSeconds: 60 },
      bundle('starved-init'),
      { INIT_CPU_MS: '60' },
      { instances: 1, initTimeoutMs: initLimitMs },
    );
    lambdas.push(lambda);
    try {
      // Act
      const asked = performance.now();
      const result = await lambda.invoke({});
      const tookMs = performance.now() - asked;

      // Assess: it answered from an instance whose init took longer than the limit by the clock
      expect(result).toEqual({ spin: true });
      expect(lambda.initFailures).toBe(0);
      expect(tookMs).toBeGreaterThan(initLimitMs);
    } finally {
      for (const hog of hogs) hog.kill('SIGKILL');
    }
  });

  it('fails an init that never ends at the init limit, waiting or busy', async () => {
    // Prepare
    const waiting = make('hangs-on-import', 1, { HANG: 'wait' }, { initTimeoutMs: 1_000 });
    const spinning = make('hangs-on-import', 1, { HANG: 'spin' }, { initTimeoutMs: 1_000 });

    // Act and assess
    await expect(waiting.invoke({})).rejects.toThrow(/init timed out after 1 seconds/);
    await expect(spinning.invoke({})).rejects.toThrow(/init timed out after 1 seconds/);
    expect([waiting.initFailures, spinning.initFailures]).toEqual([1, 1]);
  });

  it('lets a stopped instance run what its thread runs at exit', async () => {
    // Prepare: an instance that has served once
    const log = join(mkdtempSync(join(tmpdir(), 'surge-exit-')), 'exit.log');
    writeFileSync(log, '');
    const lambda = make('logs-its-exit', 1, { EXIT_LOG: log });
    await lambda.invoke({});

    // Act
    await lambda.stop();

    // Assess
    expect(readFileSync(log, 'utf8')).toBe('exited\n');
  });

  it("gives an instance's thread the twin's preloads, though not its environment: a bench's profiler samples it", () => {
    // Prepare: a twin-like process started with the bench's profiling preload, running one instance
    const dir = mkdtempSync(join(tmpdir(), 'surge-instance-profile-'));
    const script = join(dir, 'run.mts');
    writeFileSync(
      script,
      `import { BundleLambda } from ${JSON.stringify(`${import.meta.dirname}/../../infra/twin/lambda/bundle-lambda.ts`)};
      const lambda = new BundleLambda(${JSON.stringify(spec)}, ${JSON.stringify(bundle('echo'))}, { ECHO_NEED: 'set' }, { instances: 1 });
      await lambda.invoke({});
      await lambda.stop();
      process.exit(0);`,
    );

    // Act
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...profilingEnv(dir) } });

    // Assess: the process's main thread and the instance's thread each wrote a profile
    expect(child.status, String(child.stderr)).toBe(0);
    const threads = readdirSync(dir).filter((f) => f.startsWith(`profile.${child.pid}.`) && f.endsWith('.cpuprofile'));
    expect(threads.length).toBeGreaterThanOrEqual(2);
    expect(threads.some((f) => !f.endsWith('.0.cpuprofile'))).toBe(true);
  });

  it('rejects what waits for an instance once stopped', async () => {
    const lambda = make('echo', 1);
    await lambda.warm();
    const busy = expect(lambda.invoke({ sleepMs: 300 })).rejects.toThrow(/Runtime exited/);
    const queued = expect(lambda.invoke({})).rejects.toThrow(/stopped/);

    await lambda.stop();

    await Promise.all([busy, queued]);
  });
});
