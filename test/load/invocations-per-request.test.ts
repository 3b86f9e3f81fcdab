import { describe, expect, it } from 'vitest';
import type { FunctionInvocations, InvocationCounts } from '../../infra/twin/lambda/invocations';
import { perRequest, type Snapshot } from '../../load/support/invocations';

const process = (pid: number, functions: Record<string, Partial<FunctionInvocations>>): InvocationCounts => ({
  pid,
  started_at: '2026-12-02T10:00:00.000Z',
  functions: Object.fromEntries(
    Object.entries(functions).map(([id, f]) => [id, { invocations: 0, duration_ms: 0, billed_ms: 0, log_bytes: 0, memory_mb: 512, ...f }]),
  ),
});

describe('Lambda figures per request between two readings of the twin', () => {
  it('divides each function’s increase by the requests, leaving out those that did not run', () => {
    // Prepare: create-order ran 1,000 times, the writer 100 (batches of 10), get-me not at all
    const before: Snapshot = {
      gateway: process(10, {
        'create-order': { invocations: 50, duration_ms: 400, billed_ms: 450, log_bytes: 9_000 },
        'get-me': { invocations: 3, log_bytes: 800 },
      }),
      consumers: process(20, { 'write-reservations': { invocations: 5, duration_ms: 100, billed_ms: 105, log_bytes: 1_500 } }),
    };
    const after: Snapshot = {
      gateway: process(10, {
        'create-order': { invocations: 1_050, duration_ms: 3_650.5, billed_ms: 4_450, log_bytes: 289_000 },
        'get-me': { invocations: 3, log_bytes: 800 },
      }),
      consumers: process(20, { 'write-reservations': { invocations: 105, duration_ms: 2_100, billed_ms: 2_205, log_bytes: 31_500, memory_mb: 1024 } }),
    };

    // Act
    const figures = perRequest(before, after, 1_000);

    // Assess: 4,000 billed ms over 1,000 orders is 4 ms an order; 100 writer batches, 0.1 an order
    expect(figures).toEqual({
      'create-order': { invocations: 1, billed_ms: 4, duration_ms: 3.2505, log_bytes: 280, memory_mb: 512 },
      'write-reservations': { invocations: 0.1, billed_ms: 2.1, duration_ms: 2, log_bytes: 30, memory_mb: 1024 },
    });
  });

  it('counts a function first seen after the first reading from zero, and leaves out one that only printed a late line', () => {
    // Another design's function printing what it held after its own window: not this window's cost.
    const before: Snapshot = { gateway: process(10, { 'create-order': { invocations: 1, log_bytes: 100 } }) };
    const after: Snapshot = {
      gateway: process(10, {
        'create-order': { invocations: 1, log_bytes: 400 },
        'get-item': { invocations: 4, billed_ms: 8, duration_ms: 7, log_bytes: 1_000 },
      }),
    };

    expect(perRequest(before, after, 4)).toEqual({
      'get-item': { invocations: 1, billed_ms: 2, duration_ms: 1.75, log_bytes: 250, memory_mb: 512 },
    });
  });

  it('refuses two readings across a restart of a process, whose counts began again', () => {
    const before: Snapshot = { gateway: process(10, {}), consumers: process(20, { 'write-reservations': { invocations: 90 } }) };
    const after: Snapshot = { gateway: process(10, {}), consumers: process(21, { 'write-reservations': { invocations: 3 } }) };

    expect(() => perRequest(before, after, 100)).toThrow(/consumers process restarted/);
  });
});
