import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/table';
import { FunctionError, LocalLambda, type Handler } from '../../infra/local/lambda';

const spec = (timeoutSeconds: number): FunctionSpec => ({
  id: 'probe',
  description: 'A function for the tests',
  trigger: { kind: 'http', method: 'GET', path: '/probe' },
  memoryMb: 128,
  timeoutSeconds,
  env: [],
});

const lambdaOf = (timeoutSeconds: number, handler: Handler) => new LocalLambda(spec(timeoutSeconds), async () => handler);
const pendingTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('functions run in the twin as Lambda runs them', () => {
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
    const lambda = lambdaOf(0.05, () => new Promise(() => undefined));

    const failure = await lambda.invoke({}).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(FunctionError);
    expect((failure as Error).message).toBe('Task timed out after 0.05 seconds');
  });

  it('leaves no timer behind once an invocation ends, however it ends', async () => {
    const answers = lambdaOf(60, async () => 'ok');
    const throws = lambdaOf(60, async () => Promise.reject(new Error('no')));
    const before = pendingTimers();

    await Promise.all(Array.from({ length: 100 }, () => answers.invoke({})));
    await Promise.all(Array.from({ length: 100 }, () => throws.invoke({}).catch(() => undefined)));

    expect(pendingTimers()).toBe(before);
  });
});
