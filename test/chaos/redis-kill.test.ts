import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('redis-kill: redis-server killed (kill -9) mid-sale and started again from its append-only file', () => {
  it(
    'keeps every acknowledged order, oversells nothing and answers no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('redis-kill');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
