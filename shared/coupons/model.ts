import { randomId } from '../random-id';
import * as z from '../zod';

export const DealId = z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 of A–Z, a–z, 0–9, _ and -'));

/** What the issuing script hands to the writer, and keeps in the deal's outbox meanwhile. */
export const CouponRecord = z.object({
  couponId: z.string().check(z.maxLength(96)),
  dealId: DealId,
  userId: z.int().check(z.positive()),
  issuedAt: z.int().check(z.positive()),
});
export type CouponRecord = z.infer<typeof CouponRecord>;

/** `<dealId>.<time><random>`: names its deal, so a pending coupon is found in that deal's outbox. */
export function newCouponId(dealId: string, now = Date.now()): string {
  return `${dealId}.${now.toString(36).padStart(9, '0')}${randomId(10)}`;
}

/** Every key of one deal shares the hash tag {deal:<id>}, so its scripts run in one slot. */
export const dealKeys = (dealId: string) => {
  const tag = `{deal:${dealId}}`;
  return {
    deal: `${tag}:deal`,
    holders: `${tag}:holders`,
    outbox: `${tag}:outbox`,
    claimed: `${tag}:claimed`,
    released: (couponId: string) => `${tag}:released:${couponId}`,
  };
};
