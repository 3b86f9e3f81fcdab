import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { BundleLambda } from '../../infra/local/bundle-lambda';

const spec: FunctionSpec = { id: 'echo', description: 'test', trigger: { kind: 'http', method: 'GET', path: '/echo' }, memoryMb: 128, timeoutSeconds: 1, env: [] };
const bundle = (name: string) => pathToFileURL(`${import.meta.dirname}/../fixtures/bundles/${name}.mjs`).href;
type Echo = { thread: number; concurrent: number; env: string | null; missing: string | null; when: unknown };

let lambdas: BundleLambda[] = [];
const make = (name: string, instances?: number) => {
  const lambda = new BundleLambda(spec, bundle(name), { ECHO_NEED: 'set' }, instances ? { instances } : {});
  lambdas.push(lambda);
  return lambda;
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

    // Act
    const results = (await Promise.all(Array.from({ length: 9 }, () => lambda.invoke({ sleepMs: 100 })))) as Echo[];

    // Assess
    expect(results.every((r) => r.concurrent === 1)).toBe(true);
    expect(new Set(results.map((r) => r.thread)).size).toBe(3);
    expect(lambda.coldStarts).toBe(3);
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

  it('rejects what waits for an instance once stopped', async () => {
    const lambda = make('echo', 1);
    const busy = expect(lambda.invoke({ sleepMs: 300 })).rejects.toThrow(/Runtime exited/);
    const queued = expect(lambda.invoke({})).rejects.toThrow(/stopped/);

    await lambda.stop();

    await Promise.all([busy, queued]);
  });
});
