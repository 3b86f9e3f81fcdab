import { describe, expect, it } from 'vitest';
import { AppError, RateLimitedError } from '../../shared/platform/errors';

describe('an AppError (a refusal answered to the client)', () => {
  it('carries its code, status and message but no stack, and leaves the stacks of other errors whole', () => {
    // Act
    const refusal = new AppError('NOT_FOUND', 'No such thing');
    const limited = new RateLimitedError(1500);
    const fault = new Error('a fault');

    // Assess
    expect([refusal.code, refusal.status, refusal.message]).toEqual(['NOT_FOUND', 404, 'No such thing']);
    expect(refusal.stack).toBe('AppError: No such thing');
    expect([limited.status, limited.retryAfterSeconds, limited.stack]).toEqual([429, 2, 'RateLimitedError: Too many requests; try again later']);
    expect(fault.stack).toContain('app-error.test.ts');
  });
});
