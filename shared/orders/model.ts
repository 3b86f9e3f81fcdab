import { randomId } from '../random-id';
import * as z from '../zod';

/** Item ids are chosen by admins; kept to characters that are safe in keys, paths and logs. */
export const ItemId = z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 of A–Z, a–z, 0–9, _ and -'));
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
});
export type OrderRecord = z.infer<typeof OrderRecord>;

/**
 * `<itemId>.<time><random>`: time-ordered, and it names its item, so an order's pending state
 * can be found in that item's outbox (one hash slot) from the id alone.
 */
export function newOrderId(itemId: string, now = Date.now()): string {
  return `${itemId}.${now.toString(36).padStart(9, '0')}${randomId(10)}`;
}

const ORDER_ID = /^([A-Za-z0-9_-]{1,64})\.([0-9a-z]{9}[A-Za-z0-9_-]{14})$/;
export const OrderId = z.string().check(z.regex(ORDER_ID, 'not an order id'));

export function itemOfOrder(orderId: string): string {
  return ORDER_ID.exec(orderId)![1]!;
}

/** Every key of one item's sale shares the hash tag {item:<id>}, so its scripts run in one slot. */
export const itemKeys = (itemId: string) => {
  const tag = `{item:${itemId}}`;
  return {
    sale: `${tag}:sale`,
    bought: `${tag}:bought`,
    outbox: `${tag}:outbox`,
    claimed: `${tag}:claimed`,
    idempotency: (userId: number, key: string) => `${tag}:idem:${userId}:${key}`,
    released: (orderId: string) => `${tag}:released:${orderId}`,
  };
};
