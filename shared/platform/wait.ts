/** What `until` does once its timeout has passed without the condition: throw (the default), or give up and resolve undefined. */
export interface UntilOptions {
  atDeadline?: 'throw' | 'give up';
}

/**
 * Polls `condition` every `intervalMs` until it gives something truthy, and returns that; throws
 * once `timeoutMs` has passed without it. The timeout only decides when to give up: make it
 * generous (a machine of this kind can be four times slower than the fastest).
 *
 * With `{ atDeadline: 'give up' }` it resolves undefined at the deadline instead of throwing: for
 * a wait whose caller goes on and reports what it found (a bench's drain, an audit's bound), where
 * a condition not met is a figure, not a failure. An error the condition throws still rejects.
 */
export async function until<T>(
  condition: () => Promise<T>,
  timeoutMs?: number,
  what?: string,
  intervalMs?: number,
  options?: { atDeadline?: 'throw' },
): Promise<T>;
export async function until<T>(
  condition: () => Promise<T>,
  timeoutMs: number,
  what: string,
  intervalMs: number,
  options: { atDeadline: 'give up' },
): Promise<T | undefined>;
export async function until<T>(
  condition: () => Promise<T>,
  timeoutMs = 60_000,
  what = 'condition',
  intervalMs = 100,
  options: UntilOptions = {},
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const met = await condition();
    if (met) return met;
    if (Date.now() > deadline) {
      if (options.atDeadline === 'give up') return undefined;
      throw new Error(`${what} not met within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
