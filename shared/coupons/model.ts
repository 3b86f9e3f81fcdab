import { newReservationId, OwnerId } from '../reservations/ids';
import * as z from '../platform/zod';

export const DealId = OwnerId;

/** What the issuing script hands to the writer, and keeps in the deal's outbox meanwhile. */
export const CouponRecord = z.object({
  couponId: z.string().check(z.maxLength(96)),
  dealId: DealId,
  userId: z.int().check(z.positive()),
  issuedAt: z.int().check(z.positive()),
});
export type CouponRecord = z.infer<typeof CouponRecord>;

export const newCouponId = newReservationId;

/** Every key of one deal shares the hash tag {deal:<id>}, so its scripts run in one slot. */
export const dealKeys = (dealId: string) => {
  const tag = `{deal:${dealId}}`;
  return {
    tag,
    state: `${tag}:deal`,
    buyers: `${tag}:holders`,
    outbox: `${tag}:outbox`,
    moves: `${tag}:moves`,
    movedIn: (moveId: string) => `${tag}:moved-in:${moveId}`,
    released: (couponId: string) => `${tag}:released:${couponId}`,
  };
};
