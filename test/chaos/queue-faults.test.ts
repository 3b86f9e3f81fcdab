import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('queue-faults', () => {
  it(
    'keeps every acknowledged order, oversells nothing and answers no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('queue-faults');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
