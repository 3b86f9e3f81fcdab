import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { heldCoupons } from '../shared/coupons/coupons';
import { listDeals, storedCoupons } from '../shared/coupons/deals';
import { rejectedOf } from '../shared/reservations/ledger';

/**
 * Stored coupons from MySQL, the ones still on their way there from Redis (pending), and the ones
 * the database guard rejected after Redis had issued them (only after Redis lost writes).
 */
export const handler = api({ access: 'user' }).handler(async ({ principal }) => {
  const [stored, rejected, deals] = await Promise.all([storedCoupons(principal.userId), rejectedOf('coupon', principal.userId), listDeals()]);
  const held = await heldCoupons(
    deals.map((d) => d.id),
    principal.userId,
  );
  const decided = new Set([...stored.map((c) => c.couponId), ...rejected.map((c) => c.id)]);
  const pending = [...held].filter(([, couponId]) => !decided.has(couponId)).map(([dealId, couponId]) => ({ couponId, dealId, status: 'pending' }));
  return json(200, {
    coupons: [
      ...pending,
      ...stored.map((c) => ({ couponId: c.couponId, dealId: c.dealId, status: 'issued', issuedAt: new Date(c.issuedAt).toISOString() })),
      ...rejected.map((c) => ({ couponId: c.id, dealId: c.owner, status: 'rejected' })),
    ],
  });
});
