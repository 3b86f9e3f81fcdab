import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('duplicates: every queue message delivered twice, out of order', () => {
  it(
    'stores each acknowledged order exactly once and oversells nothing',
    async () => {
      // Act
      const report = await runChaos('duplicates');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
