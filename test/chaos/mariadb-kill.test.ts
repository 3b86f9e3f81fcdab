import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe('mariadb-kill: mariadbd killed (kill -9) while the writer drains, and started again by the twin', () => {
  it(
    'stores every acknowledged order once MySQL is back, oversells nothing and answers no 5xx but 503',
    async () => {
      // Act
      const report = await runChaos('mariadb-kill');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
