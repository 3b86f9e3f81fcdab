import { describe, expect, it } from 'vitest';
import { until } from '../../shared/platform/wait';

describe('until', () => {
  it("returns the condition's first truthy value", async () => {
    let calls = 0;

    const value = await until(async () => (++calls >= 3 ? `call ${calls}` : undefined), 60_000, 'the third call', 1);

    expect([value, calls]).toEqual(['call 3', 3]);
  });

  it('throws, naming what it waited for, once the timeout has passed', async () => {
    await expect(until(async () => false, 20, 'the impossible', 5)).rejects.toThrow('the impossible not met within 20 ms');
  });

  it("resolves undefined at the deadline with atDeadline 'give up', having asked until then", async () => {
    let calls = 0;
    const started = Date.now();

    const value = await until(async () => (calls++, 0), 20, 'the impossible', 5, { atDeadline: 'give up' });

    expect(value).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
    expect(calls).toBeGreaterThan(1);
  });

  it("still rejects with the condition's own error with atDeadline 'give up'", async () => {
    await expect(until(async () => Promise.reject(new Error('the query failed')), 60_000, 'rows', 5, { atDeadline: 'give up' })).rejects.toThrow(
      'the query failed',
    );
  });
});
