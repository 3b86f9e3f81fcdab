import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe("writer-kill: the consumers' process killed mid-sale, and again between a batch's COMMIT and its settle", () => {
  it(
    'stores every acknowledged order exactly once after the twin starts the writer again',
    async () => {
      // Act
      const report = await runChaos('writer-kill');

      // Assess: the fault point did fire, and nothing was lost or doubled
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    "does the same with the writer run as its bundle, whose worker gets the fault point's variables",
    async () => {
      // Act
      const report = await runChaos('writer-kill', { bundles: true });

      // Assess
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
