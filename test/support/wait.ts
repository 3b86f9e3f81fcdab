export async function until(condition: () => Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A Redis KEYS pattern that matches `literal` itself and nothing else it happens to glob. */
export const literalPattern = (literal: string) => literal.replace(/[*?[\]\\]/g, '\\$&');
