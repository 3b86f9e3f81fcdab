import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('redis-outage: redis-server stopped mid-sale for 5 s, then started again', () => {
  it(
    'answers every order meanwhile with a 503 within a second, never hangs or 500s, and the sale completes with every acknowledged order stored',
    async () => {
      // Act
      const report = await runChaos('redis-outage');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
