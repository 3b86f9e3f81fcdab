/**
 * Polls `condition` every `intervalMs` until it gives something truthy, and returns that; throws
 * once `timeoutMs` has passed without it. The timeout only decides when to give up: make it
 * generous (a machine of this kind can be four times slower than the fastest).
 */
export async function until<T>(condition: () => Promise<T>, timeoutMs = 60_000, what = 'condition', intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const met = await condition();
    if (met) return met;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A Redis KEYS pattern that matches `literal` itself and nothing else it happens to glob. */
export const literalPattern = (literal: string) => literal.replace(/[*?[\]\\]/g, '\\$&');
