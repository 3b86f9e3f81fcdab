import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { FunctionError, LocalLambda, type Handler } from '../../infra/twin/lambda/lambda';

const spec = (timeoutSeconds: number): FunctionSpec => ({
  id: 'probe',
  description: 'A function for the tests',
  trigger: { kind: 'http', method: 'GET', path: '/probe' },
  memoryMb: 128,
  timeoutSeconds,
  env: [],
});

const lambdaOf = (timeoutSeconds: number, handler: Handler) => new LocalLambda(spec(timeoutSeconds), async () => handler);

describe('functions run in the twin as Lambda runs them', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers with the handler’s result and a context that counts down from the timeout', async () => {
    // Prepare
    let seen: Context | undefined;
    const lambda = lambdaOf(3, async (_event, context) => {
      seen = context;
      return { statusCode: 200 };
    });

    // Act
    const result = await lambda.invoke({});

    // Assess
    expect(result).toEqual({ statusCode: 200 });
    expect(seen!.functionName).toBe('surge-probe');
    expect(seen!.getRemainingTimeInMillis()).toBeGreaterThan(0);
    expect(seen!.getRemainingTimeInMillis()).toBeLessThanOrEqual(3_000);
  });

  it('reports a thrown error as a function error carrying the cause', async () => {
    const cause = new Error('boom');
    const lambda = lambdaOf(3, async () => Promise.reject(cause));

    const failure = await lambda.invoke({}).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(FunctionError);
    expect(failure).toMatchObject({ message: 'boom', cause });
  });

  it('fails an invocation that outlives its timeout, as a timeout', async () => {
    vi.useFakeTimers();
    const lambda = lambdaOf(2, () => new Promise(() => undefined));

    const failure = lambda.invoke({}).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_999);
    const early = await Promise.race([failure, 'still running']);
    await vi.advanceTimersByTimeAsync(1);

    expect(early).toBe('still running');
    expect(await failure).toBeInstanceOf(FunctionError);
    expect(((await failure) as Error).message).toBe('Task timed out after 2.00 seconds');
  });

  it('leaves no timer behind once an invocation ends, however it ends', async () => {
    vi.useFakeTimers();
    const answers = lambdaOf(60, async () => 'ok');
    const throws = lambdaOf(60, async () => Promise.reject(new Error('no')));

    await Promise.all(Array.from({ length: 100 }, () => answers.invoke({})));
    await Promise.all(Array.from({ length: 100 }, () => throws.invoke({}).catch(() => undefined)));

    expect(vi.getTimerCount()).toBe(0);
  });
});
