import { describe, expect, it } from 'vitest';
import { failedInvariants, runChaos, SCENARIO_TIMEOUT_MS } from '../support/chaos';

describe("coupons: a deal's crowd through a Redis failover with replication behind, then through failing queue sends", () => {
  it(
    'keeps every acknowledged coupon, issues none past the limit or twice to a user, and answers no 5xx but 503, in both phases',
    async () => {
      // Act
      const report = await runChaos('coupons');

      // Assess: both phases ran, raced for coupons, and held
      expect(failedInvariants(report), JSON.stringify(report)).toEqual([]);
      expect(Object.keys(report.phases as object)).toEqual(['redis-failover', 'queue-faults']);
      expect(Object.keys(report.invariants)).toContain('redis-failover:every_acknowledged_coupon_found');
      expect(Object.keys(report.invariants)).toContain('queue-faults:every_fault_fired');
    },
    SCENARIO_TIMEOUT_MS,
  );
});
