import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe("script-flush: Redis's scripts flushed mid-load, then Redis restarted", () => {
  it(
    'answers no 5xx from NOSCRIPT and keeps every acknowledged order',
    async () => {
      // Act
      const report = await runChaos('script-flush');

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
