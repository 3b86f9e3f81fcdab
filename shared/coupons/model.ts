import { newReservationId, OwnerId } from '../reservations/ids';
import { TaggedKeys } from '../reservations/owner-keys';
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
export const dealKeys = (dealId: string) => new TaggedKeys(`{deal:${dealId}}`, { state: 'deal', buyers: 'holders' });
