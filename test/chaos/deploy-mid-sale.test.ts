import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('deploy-mid-sale', () => {
  it(
    'sells on while the release before and this one serve side by side and the migration lands mid-sale: nothing acknowledged rejected or lost, no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('deploy-mid-sale');

      // Assess: every invariant held, both versions answering requests while both served among them.
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
      expect(report.invariants).toHaveProperty('both_versions_served', true);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
