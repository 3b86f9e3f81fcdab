import middy, { type MiddlewareObj } from '@middy/core';
import { storeCredentials } from './clients/credentials';
import { flushMetrics } from './metrics';

/**
 * How every function's middy stack starts: metrics flushed once the invocation ends, then the
 * stores' credentials (looked up once). Without middy's early timeout: every call a function
 * makes is bounded well inside its timeout (the clients' timeouts, shared/platform/deadline.ts), so
 * the timer middy would set and clear around every invocation, and the race it runs, are work for
 * nothing (0.7 µs of CPU an invocation on this machine, a forty-fifth of `GET /me`'s own), and its
 * answer to a timeout (a TimeoutError, a 500) is no better than Lambda's.
 */
export const functionStack = <Event, Result>() => middy<Event, Result>({ timeoutEarlyInMillis: 0 }).use(flushMetrics()).use(storeCredentials());

type Before = NonNullable<MiddlewareObj['before']>;

/**
 * Middlewares that act only before the handler, run as one, each in order, the next after the
 * promise of one that returns one: middy awaits every middleware it runs, a turn of the microtask
 * queue even for one that returns nothing, and most of a route's return nothing (`npm run
 * instructions`: ~1,500 instructions of `GET /me`'s ~120,000 for its four). None may answer early.
 */
export function inSequence(name: string, middlewares: MiddlewareObj[]): MiddlewareObj {
  if (middlewares.some((middleware) => middleware.after || middleware.onError)) throw new Error(`${name}: only befores run in sequence`);
  const befores = middlewares.map((middleware) => middleware.before).filter((before): before is Before => before !== undefined);
  const runFrom = (first: number, request: Parameters<Before>[0]): Promise<void> | undefined => {
    for (let i = first; i < befores.length; i++) {
      const result = befores[i]!(request);
      if (result instanceof Promise) return result.then(() => runFrom(i + 1, request));
    }
    return undefined;
  };
  return { name, before: (request) => runFrom(0, request) };
}
