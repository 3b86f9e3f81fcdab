/**
 * When an invocation must have answered (epoch ms), from its Lambda context: passed down to the
 * calls that bound their waits by it, rather than carried in an AsyncLocalStorage, which on Node 20
 * hooks every promise of every request for the one query (a catalog fill) that reads it.
 */
export function deadlineOf(context: { getRemainingTimeInMillis(): number }): number {
  return Date.now() + context.getRemainingTimeInMillis();
}

/**
 * How long a dependency call may take: at most `capMs`, and always ending `answerMs` before the
 * invocation's deadline, so the function can still answer 503 (retry) rather than be cut off by
 * its timeout (a 500). A call made late in an invocation (after a wait) gets what is left.
 */
export function callBudgetMs(capMs: number, deadline: number | undefined, answerMs = 1_000): number {
  return deadline === undefined ? capMs : Math.max(1, Math.min(capMs, deadline - answerMs - Date.now()));
}
