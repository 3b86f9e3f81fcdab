import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { entryFile, type FunctionSpec } from '../../functions/table';

export type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** A function that failed as Lambda reports it: an error thrown by the handler, or a timeout. */
export class FunctionError extends Error {
  override name = 'FunctionError';
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

function contextFor(spec: FunctionSpec, deadline: number): Context {
  const functionName = `surge-${spec.id}`;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(spec.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local-twin',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Runs table functions in-process as Lambda would: the module is imported once (its cold start),
 * each invocation gets a fresh context, and one that outlives its timeout fails as a timeout.
 */
export class LocalLambda {
  private handler?: Promise<Handler>;

  constructor(
    readonly spec: FunctionSpec,
    private readonly load: () => Promise<Handler> = async () => {
      const mod = (await import(pathToFileURL(resolve(entryFile(spec))).href)) as { handler?: Handler };
      if (typeof mod.handler !== 'function') throw new Error(`${entryFile(spec)} exports no handler`);
      return mod.handler;
    },
  ) {}

  warm(): Promise<Handler> {
    this.handler ??= this.load();
    return this.handler;
  }

  async invoke(event: unknown): Promise<unknown> {
    const handler = await this.warm();
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const context = contextFor(this.spec, Date.now() + timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([handler(event, context), timedOut]);
    } catch (error) {
      if (error instanceof FunctionError) throw error;
      throw new FunctionError((error as Error)?.message ?? String(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
