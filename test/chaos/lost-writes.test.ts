import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('lost-writes: Redis back to a copy from before acknowledged orders, the writer paused meanwhile', () => {
  it(
    'still stores every acknowledged order, and GET /orders/{id} finds each',
    async () => {
      // Act
      const report = await runChaos('lost-writes');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
