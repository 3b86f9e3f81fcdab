import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('repair-under-load: the reconcile CLI repairing 200 ms after each run, all through the sale', () => {
  it(
    'takes no reservation in flight for lost stock: nothing oversold, rejected or lost',
    async () => {
      // Act
      const report = await runChaos('repair-under-load');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
