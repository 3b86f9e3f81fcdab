import type { FunctionSpec } from '../../../functions/table';

/** A synchronous invocation refused because its function is at its concurrency cap, as Lambda throttles it. */
export class Throttled extends Error {
  override name = 'Throttled';
}

/**
 * A function's concurrency cap (functions/table.ts) in the twin, as Lambda enforces reserved
 * concurrency: at most that many invocations at once. A synchronous caller (the gateway) is
 * refused at the cap; an asynchronous one (SES's invocation of the mail function) waits, as
 * Lambda's async queue holds a throttled event and retries it.
 */
export function capped<E, R>(spec: FunctionSpec, invoke: (event: E) => Promise<R>, whenFull: 'refuse' | 'wait'): (event: E) => Promise<R> {
  const limit = spec.concurrencyCap;
  if (limit === undefined) return invoke;
  let inUse = 0;
  const waiting: (() => void)[] = [];
  const leave = () => {
    // A slot freed goes to the oldest waiter, so none waits forever behind newcomers.
    const next = waiting.shift();
    if (next) next();
    else inUse -= 1;
  };
  return async (event) => {
    if (inUse < limit) inUse += 1;
    else if (whenFull === 'refuse') throw new Throttled(`${spec.id} is at its concurrency cap of ${limit}`);
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await invoke(event);
    } finally {
      leave();
    }
  };
}
