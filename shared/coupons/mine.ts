import { rejectedOf } from '../reservations/ledger';
import { heldCoupons } from './coupons';
import { listDeals, storedCoupons } from './deals';
import { couponDecisions } from './kind';

export interface CouponView {
  couponId: string;
  dealId: string;
  status: 'pending' | 'issued' | 'rejected';
  issuedAt?: string;
}

/**
 * A buyer's coupons: stored ones from MySQL, the ones still on their way there from Redis (pending),
 * and the ones the database guard rejected after Redis had issued them (only after Redis lost writes).
 */
export async function couponsOf(userId: number): Promise<CouponView[]> {
  const [stored, rejected, deals] = await Promise.all([storedCoupons(userId), rejectedOf(couponDecisions, userId), listDeals()]);
  const held = await heldCoupons(
    deals.map((d) => d.id),
    userId,
  );
  const decided = new Set([...stored.map((c) => c.couponId), ...rejected.map((c) => c.id)]);
  const pending = [...held].filter(([, couponId]) => !decided.has(couponId)).map(([dealId, couponId]) => ({ couponId, dealId, status: 'pending' as const }));
  return [
    ...pending,
    ...stored.map((c) => ({ couponId: c.couponId, dealId: c.dealId, status: 'issued' as const, issuedAt: new Date(c.issuedAt).toISOString() })),
    ...rejected.map((c) => ({ couponId: c.id, dealId: c.owner, status: 'rejected' as const })),
  ];
}
