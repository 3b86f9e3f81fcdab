import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { entryFile, type FunctionSpec } from '../../../functions/table';
import { FunctionMeter } from './invocations';

export type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** A function that failed as Lambda reports it: an error thrown by the handler, or a timeout. */
export class FunctionError extends Error {
  override name = 'FunctionError';
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

/** A Lambda-like invocation context; methods live on the prototype so each invocation allocates little. */
class LocalContext implements Context {
  callbackWaitsForEmptyEventLoop = true;
  readonly functionName: string;
  readonly functionVersion = '$LATEST';
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB: string;
  readonly awsRequestId = randomUUID();
  readonly logGroupName: string;
  readonly logStreamName = 'local-twin';

  constructor(
    spec: FunctionSpec,
    private readonly deadline: number,
  ) {
    this.functionName = `surge-${spec.id}`;
    this.invokedFunctionArn = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${this.functionName}`;
    this.memoryLimitInMB = String(spec.memoryMb);
    this.logGroupName = `/aws/lambda/${this.functionName}`;
  }

  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  done(): void {}
  fail(): void {}
  succeed(): void {}
}

/**
 * Runs table functions in-process as Lambda would: the module is imported once (its cold start),
 * each invocation gets a fresh context, and one that outlives its timeout fails as a timeout.
 * Each invocation is metered as Lambda bills it (see invocations.ts), its output included.
 */
export class LocalLambda {
  private handler?: Promise<Handler>;
  private readonly meter: FunctionMeter;

  constructor(
    readonly spec: FunctionSpec,
    private readonly load: () => Promise<Handler> = async () => {
      const mod = (await import(pathToFileURL(resolve(entryFile(spec))).href)) as { handler?: Handler };
      if (typeof mod.handler !== 'function') throw new Error(`${entryFile(spec)} exports no handler`);
      return mod.handler;
    },
  ) {
    this.meter = new FunctionMeter(spec.id, spec.memoryMb);
  }

  warm(): Promise<Handler> {
    this.handler ??= this.load();
    return this.handler;
  }

  async invoke(event: unknown): Promise<unknown> {
    const handler = this.loaded ?? (this.loaded = await this.warm());
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const context = new LocalContext(this.spec, Date.now() + timeoutMs);
    const began = performance.now();
    // Metered once, when the caller learns the outcome: a timed-out invocation is billed its timeout, as on Lambda.
    let metered = false;
    const ended = (durationMs = performance.now() - began) => {
      if (!metered) this.meter.invoked(durationMs);
      metered = true;
    };
    return new Promise((resolve, reject) => {
      // One timer each, cleared when the invocation ends, so nothing keeps a finished invocation
      // reachable; unref'd, so a hung invocation does not hold the twin open when it stops.
      const timer = setTimeout(() => {
        ended(timeoutMs);
        reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`));
      }, timeoutMs).unref();
      handler(event, context).then(
        (result) => {
          clearTimeout(timer);
          ended();
          resolve(result);
        },
        (error: unknown) => {
          clearTimeout(timer);
          ended();
          reject(new FunctionError((error as Error)?.message ?? String(error), { cause: error }));
        },
      );
    });
  }

  private loaded?: Handler;
}
