import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('slow-fill: the catalog while MySQL is slower than the fill lease, and after a failover lost a version bump', () => {
  it(
    'fills a stampede at most once per lease, and serves nothing older than the write once the lost bump is repaired',
    async () => {
      // Act
      const report = await runChaos('slow-fill');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
      // Each of the two stampedes and the lost bump were measured, not skipped.
      expect(Object.keys(report.invariants).sort()).toEqual(
        [
          'answers_fresh_11s',
          'answers_fresh_6s',
          'bump_repaired',
          'fills_within_lease_11s',
          'fills_within_lease_6s',
          'no_5xx_but_503_11s',
          'no_5xx_but_503_6s',
          'no_stale_after_repair',
        ].sort(),
      );
    },
    SCENARIO_TIMEOUT_MS,
  );
});
