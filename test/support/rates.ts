import { takeRate } from '../../shared/limits/rate';
import type { Rate } from '../../shared/limits/limits';

/**
 * Uses up a rate through the limits module itself, as that many requests would, each costing
 * ten, so that none comes back while the test runs (one of a mail domain's comes back every 360 ms).
 */
export async function exhaust(key: string, rate: Rate): Promise<void> {
  const dearer = { count: rate.count, periodMs: rate.periodMs * 10 };
  // In rounds of 500, so that no command waits past the client's 1 s timeout.
  for (let taken = 0; taken < rate.count; taken += 500)
    await Promise.all(Array.from({ length: Math.min(500, rate.count - taken) }, () => takeRate(key, dearer)));
}
