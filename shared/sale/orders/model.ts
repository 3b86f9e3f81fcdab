import { bucketTags, MAX_BUCKETS } from '../../reservations/buckets';
import { newReservationId, OwnerId, ReservationId } from '../../reservations/ids';
import { TaggedKeys } from '../../reservations/owner-keys';
import * as z from '../../platform/zod';

export const ItemId = OwnerId;
/** The OpenAPI document's words for it; registered, so no parse pays for a check. */
export const IdempotencyKey = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 of A–Z, a–z, 0–9, _ and -'))
  .register(z.globalRegistry, {
    description:
      'Chosen by the client, one per order: for 24 hours a retry with the same key and quantity answers the same order, at its current status, and never orders again; another quantity is refused (409 IDEMPOTENCY_MISMATCH)',
  });
export const MAX_ORDER_QUANTITY = 100;
export const Quantity = z.int().check(z.minimum(1), z.maximum(MAX_ORDER_QUANTITY));
/** How many buckets an item's stock is split into, each on a hash slot of its own: 1 keeps it whole. */
/** An order as its buyer sees it: on its way (a promise included), stored, refused by the writer, or cancelled. */
export const OrderStatus = z.enum(['pending', 'confirmed', 'rejected', 'cancelled']);
export type OrderStatus = z.output<typeof OrderStatus>;

export const BucketCount = z.int().check(z.minimum(1), z.maximum(MAX_BUCKETS));

/** What the reservation hands to the writer through the queue, and keeps in the outbox meanwhile. */
export const OrderRecord = z.object({
  orderId: z.string().check(z.maxLength(96)),
  itemId: ItemId,
  userId: z.int().check(z.positive()),
  quantity: Quantity,
  reservedAt: z.int().check(z.positive()),
  /** The buyer's key, so whoever gives a cancelled order back can forget it too. */
  idempotencyKey: z.optional(IdempotencyKey),
  /** The bucket it was reserved in, of how many, when the item's stock is split (absent: not split). */
  bucket: z.optional(z.tuple([z.int().check(z.minimum(0), z.maximum(MAX_BUCKETS - 1)), BucketCount])),
});
export type OrderRecord = z.infer<typeof OrderRecord>;

export const newOrderId = newReservationId;
export const OrderId = ReservationId;

/**
 * Every key of one item's sale shares the hash tag {item:<id>}, so its scripts run in one slot;
 * an item split into buckets has one such tag per bucket (bucketTags), and bucket k of n has the
 * keys of its own tag.
 */
export const itemKeys = (itemId: string, bucket = 0, buckets = 1) => new SaleKeys(bucketTags(`item:${itemId}`, buckets)[bucket]!);

class SaleKeys extends TaggedKeys {
  /** A waiting room's passes, checked by the reserving script in this slot (shared/sale/rooms/): <user id>:<token> -> expires at. */
  readonly passes: string;

  constructor(tag: string) {
    super(tag, { state: 'sale', buyers: 'bought' });
    this.passes = `${tag}:passes`;
  }

  idempotency(userId: number, key: string): string {
    return `${this.tag}:idem:${userId}:${key}`;
  }
}

/** Every bucket's keys of an item split into `buckets` (one, the item's own, when it is not). */
export const itemBuckets = (itemId: string, buckets: number) => Array.from({ length: buckets }, (_, k) => itemKeys(itemId, k, buckets));

/** Where the reserving path learns how many buckets an item has (absent: one), in the item's own slot. */
export const layoutKey = (itemId: string) => `{item:${itemId}}:buckets`;

/** The keys of the bucket an order was reserved in. */
export const orderKeys = (order: Pick<OrderRecord, 'itemId' | 'bucket'>) => itemKeys(order.itemId, ...(order.bucket ?? [0, 1]));
