import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('replica-kill', () => {
  it(
    'acknowledges nothing while the primary has no replica, then sells on: nothing acknowledged rejected or lost, no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('replica-kill');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
      expect(report['answered_while_alone'], JSON.stringify(report)).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
