import { describe, expect, it } from 'vitest';
import { run } from '../../load/chaos/scenarios/slow-fill';

describe('the slow-fill chaos scenario, at small scale', () => {
  it('fills a stampede at most once per lease while MySQL is slower than the lease, and serves nothing older than a write whose bump a failover lost once it is repaired', async () => {
    // Act
    const report = await run({ scale: 'small', bundles: false, log: () => undefined });

    // Assess: the figures behind a failed invariant are in the message.
    expect(report.invariants, JSON.stringify(report)).toEqual({
      fills_within_lease_6s: true,
      answers_fresh_6s: true,
      fills_within_lease_11s: true,
      answers_fresh_11s: true,
      bump_repaired: true,
      no_stale_after_repair: true,
    });
  }, 120_000);
});
