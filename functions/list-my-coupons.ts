import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { heldCoupons } from '../shared/coupons/coupons';
import { listDeals, storedCoupons } from '../shared/coupons/deals';

/** Stored coupons from MySQL, and the ones still on their way there from Redis (pending). */
export const handler = api({ access: 'user' }).handler(async ({ principal }) => {
  const [stored, deals] = await Promise.all([storedCoupons(principal.userId), listDeals()]);
  const held = await heldCoupons(
    deals.map((d) => d.id),
    principal.userId,
  );
  const storedIds = new Set(stored.map((c) => c.couponId));
  const pending = [...held].filter(([, couponId]) => !storedIds.has(couponId)).map(([dealId, couponId]) => ({ couponId, dealId, status: 'pending' }));
  return json(200, { coupons: [...pending, ...stored.map((c) => ({ couponId: c.couponId, dealId: c.dealId, status: 'issued', issuedAt: new Date(c.issuedAt).toISOString() }))] });
});
