import { AsyncLocalStorage } from 'node:async_hooks';

/** When the current invocation must have answered (epoch ms), for whatever it calls. */
const deadlines = new AsyncLocalStorage<number>();

/** Runs fn with the invocation's deadline known to every call it makes, however deep. */
export function withDeadline<T>(remainingMs: number, fn: () => T): T {
  return deadlines.run(Date.now() + remainingMs, fn);
}

/**
 * How long a dependency call may take: at most `capMs`, and always ending `answerMs` before the
 * invocation's deadline, so the function can still answer 503 (retry) rather than be cut off by
 * its timeout (a 500). A call made late in an invocation (after a wait) gets what is left.
 */
export function callBudgetMs(capMs: number, answerMs = 1_000): number {
  const deadline = deadlines.getStore();
  return deadline === undefined ? capMs : Math.max(1, Math.min(capMs, deadline - answerMs - Date.now()));
}
