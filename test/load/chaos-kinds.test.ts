import { describe, expect, it } from 'vitest';
import { SALE_KINDS } from '../../load/chaos/kinds';

const error = (code: string, details?: unknown) => JSON.stringify({ error: { code, message: '…', ...(details ? { details } : {}) } });

describe("the chaos suite's coupon kind", () => {
  it('takes a 201 and a 409 ALREADY_ISSUED as acknowledging the coupon each names', () => {
    // Prepare
    const { acknowledged } = SALE_KINDS.coupons;

    // Act
    const issued = acknowledged(201, JSON.stringify({ couponId: 'deal.a' }));
    const held = acknowledged(409, error('ALREADY_ISSUED', { couponId: 'deal.b' }));

    // Assess
    expect([issued, held]).toEqual(['deal.a', 'deal.b']);
  });

  it.each([
    [409, error('SOLD_OUT')],
    [503, error('UNAVAILABLE')],
  ])('takes a %i %s as acknowledging nothing', (status, body) => {
    expect(SALE_KINDS.coupons.acknowledged(status, body)).toBeUndefined();
  });
});
