import { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EmfCollector, onStdoutLine } from '../../infra/twin/lambda/emf';
import { count, flushMetrics, level, MAX_HELD_VALUES, METRICS_FLUSH_MS, publishHeldMetrics, timing } from '../../shared/platform/metrics';
import { lambdaContext } from '../support/events';

/** One invocation of a function whose handler records what `record` does. */
const invocation = middy<unknown, void>()
  .use(flushMetrics())
  .handler(async (record: unknown) => (record as () => void)());
const invoke = (record: () => void = () => {}) => invocation(record, lambdaContext());

describe('metrics held in the instance and printed at most every METRICS_FLUSH_MS', () => {
  let emf: EmfCollector;
  let lines: string[];
  let stopReading: () => void;
  const sums = () => Object.fromEntries(emf.snapshot().metrics.map((m) => [m.name, { samples: m.samples, sum: m.sum }]));

  beforeEach(() => {
    vi.useFakeTimers();
    publishHeldMetrics(); // nothing held from another test
    emf = new EmfCollector();
    lines = [];
    stopReading = onStdoutLine((line) => line.startsWith('{"_aws"') && (lines.push(line), emf.take(line)));
  });
  afterEach(() => {
    stopReading();
    publishHeldMetrics();
    vi.useRealTimers();
  });

  it('prints the counts of many invocations within the interval as one line of their sums, once the interval has passed', async () => {
    const first = Date.now();
    for (let n = 0; n < 49; n++) {
      await invoke(() => count('cache.hit'));
      vi.setSystemTime(Date.now() + Math.floor(METRICS_FLUSH_MS / 50));
    }
    vi.setSystemTime(first + METRICS_FLUSH_MS - 1);
    await invoke(() => count('cache.hit'));
    expect(lines).toHaveLength(0);

    vi.setSystemTime(first + METRICS_FLUSH_MS);
    await invoke(() => count('cache.fill', 2));

    expect(lines).toHaveLength(1);
    expect(sums()).toEqual({ 'cache.hit': { samples: 1, sum: 50 }, 'cache.fill': { samples: 1, sum: 2 } });
    // Stamped with when the oldest value was counted, so holding moves nothing to another minute.
    expect(JSON.parse(lines[0]!)._aws.Timestamp).toBe(first);
  });

  it('prints what an idle process holds once the interval has passed, with no invocation after it (the twin; not relied upon on Lambda)', async () => {
    await invoke(() => count('cache.hit'));
    vi.advanceTimersByTime(METRICS_FLUSH_MS - 1);
    expect(lines).toHaveLength(0);

    vi.advanceTimersByTime(1);

    expect(lines).toHaveLength(1);
    expect(sums()).toEqual({ 'cache.hit': { samples: 1, sum: 1 } });
  });

  it('prints an urgent count, and everything held with it, at the end of the invocation that counted it', async () => {
    await invoke(() => count('cache.hit'));
    await invoke(() => count('redis.writeRefused', 1, { urgent: true }));

    expect(lines).toHaveLength(1);
    expect(sums()).toEqual({ 'cache.hit': { samples: 1, sum: 1 }, 'redis.writeRefused': { samples: 1, sum: 1 } });
  });

  it('prints an urgent count when the invocation fails too', async () => {
    await expect(
      invoke(() => {
        count('orders.guardRejected', 1, { urgent: true });
        throw new Error('the batch failed');
      }),
    ).rejects.toThrow('the batch failed');

    expect(sums()).toEqual({ 'orders.guardRejected': { samples: 1, sum: 1 } });
  });

  it("keeps every timing value, and prints a timing at the end of the invocation that gives it EMF's 100 values", async () => {
    await invoke(() => {
      for (let n = 0; n < MAX_HELD_VALUES - 1; n++) timing('orders.writerLag', n);
    });
    expect(lines).toHaveLength(0);

    await invoke(() => timing('orders.writerLag', MAX_HELD_VALUES - 1));

    expect(lines).toHaveLength(1);
    expect(sums()).toEqual({ 'orders.writerLag': { samples: MAX_HELD_VALUES, sum: ((MAX_HELD_VALUES - 1) * MAX_HELD_VALUES) / 2 } });
    expect(JSON.parse(lines[0]!)['orders.writerLag']).toHaveLength(MAX_HELD_VALUES);
  });

  it('splits more than 100 values of one timing, held in one invocation, into lines EMF takes', async () => {
    const countedAt = Date.now();
    await invoke(() => {
      for (let n = 0; n < 250; n++) timing('coupons.writerLag', 1);
    });

    expect(lines.map((line) => JSON.parse(line)['coupons.writerLag'].length)).toEqual([100, 100, 50]);
    expect(lines.map((line) => JSON.parse(line)._aws.Timestamp)).toEqual([countedAt, countedAt, countedAt]);
    expect(sums()).toEqual({ 'coupons.writerLag': { samples: 250, sum: 250 } });
  });

  it('keeps every value of a level, in unit Count, rather than their sum', async () => {
    // Act
    await invoke(() => {
      level('room.waiting', 30);
      level('room.waiting', 10);
    });
    const asCount = () => count('room.waiting');
    expect(asCount).toThrow(RangeError);
    vi.advanceTimersByTime(METRICS_FLUSH_MS);
    await invoke();

    // Assess
    expect(sums()).toEqual({ 'room.waiting': { samples: 2, sum: 40 } });
    const line = JSON.parse(lines[0]!);
    expect(line['room.waiting']).toEqual([30, 10]);
    expect(line._aws.CloudWatchMetrics[0].Metrics).toContainEqual({ Name: 'room.waiting', Unit: 'Count' });
  });

  it('refuses, where it is recorded, what Powertools would refuse when printing it later', () => {
    count('orders.accepted');

    expect(() => timing('orders.accepted', 1)).toThrow(RangeError);
    expect(() => count('', 1)).toThrow(RangeError);
    expect(() => timing('orders.writerLag', Number.NaN)).toThrow(RangeError);
  });

  it('never fails the invocation that prints, when printing fails', async () => {
    await invoke(() => count('orders.accepted'));
    const publish = vi.spyOn(Metrics.prototype, 'publishStoredMetrics').mockImplementationOnce(() => {
      throw new Error('stdout gone');
    });

    await expect(invoke(() => count('redis.writeRefused', 1, { urgent: true }))).resolves.toBeUndefined();
    expect(publish).toHaveBeenCalledOnce();
    publish.mockRestore();
  });

  it('prints nothing for invocations that hold nothing', async () => {
    await invoke();
    vi.advanceTimersByTime(METRICS_FLUSH_MS * 2);
    await invoke();

    expect(lines).toHaveLength(0);
  });
});
