import middy from '@middy/core';
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
