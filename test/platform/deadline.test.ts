import { describe, expect, it } from 'vitest';
import { callBudgetMs, deadlineOf } from '../../shared/platform/deadline';

describe("a dependency call's time budget", () => {
  it('is its cap when no deadline is known', () => {
    expect(callBudgetMs(8_000, undefined)).toBe(8_000);
  });

  it("ends a second before the invocation's deadline, and never below 1 ms", () => {
    // Prepare: an invocation with 3 s left, and one already past its deadline
    const soon = deadlineOf({ getRemainingTimeInMillis: () => 3_000 });
    const past = Date.now() - 5;

    // Act
    const [left, none] = [callBudgetMs(8_000, soon), callBudgetMs(8_000, past)];

    // Assess: what is left less the second kept to answer 503
    expect(left).toBeGreaterThan(1_900);
    expect(left).toBeLessThanOrEqual(2_000);
    expect(none).toBe(1);
  });

  it('is capped when the invocation has more time than the call may take', () => {
    expect(callBudgetMs(8_000, deadlineOf({ getRemainingTimeInMillis: () => 60_000 }))).toBe(8_000);
  });
});
