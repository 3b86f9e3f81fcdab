import { newReservationId, OwnerId, ReservationId } from '../reservations/ids';
import * as z from '../zod';

export const ItemId = OwnerId;
export const IdempotencyKey = z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 of A–Z, a–z, 0–9, _ and -'));
export const MAX_ORDER_QUANTITY = 100;
export const Quantity = z.int().check(z.minimum(1), z.maximum(MAX_ORDER_QUANTITY));

/** What the reservation hands to the writer through the queue, and keeps in the outbox meanwhile. */
export const OrderRecord = z.object({
  orderId: z.string().check(z.maxLength(96)),
  itemId: ItemId,
  userId: z.int().check(z.positive()),
  quantity: Quantity,
  reservedAt: z.int().check(z.positive()),
  /** The buyer's key, so whoever gives a cancelled order back can forget it too. */
  idempotencyKey: z.optional(IdempotencyKey),
});
export type OrderRecord = z.infer<typeof OrderRecord>;

export const newOrderId = newReservationId;
export const OrderId = ReservationId;

/** Every key of one item's sale shares the hash tag {item:<id>}, so its scripts run in one slot. */
export const itemKeys = (itemId: string) => {
  const tag = `{item:${itemId}}`;
  return {
    tag,
    state: `${tag}:sale`,
    buyers: `${tag}:bought`,
    outbox: `${tag}:outbox`,
    idempotency: (userId: number, key: string) => `${tag}:idem:${userId}:${key}`,
    released: (orderId: string) => `${tag}:released:${orderId}`,
  };
};
