import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('redis-failover', () => {
  it(
    'keeps every acknowledged order and rejects none of them, oversells nothing and answers no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('redis-failover');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
      expect(report.rejected_acknowledged).toBe(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
