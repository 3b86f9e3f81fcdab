import type { RowDataPacket } from 'mysql2';
import { issueCoupon, setDealState } from '../../shared/coupons/coupons';
import { upsertDeal } from '../../shared/coupons/deals';
import { coupons } from '../../shared/coupons/kind';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { orders } from '../../shared/sale/orders/kind';
import { openSale, reserve } from '../../shared/sale/orders/sale';
import { bucketTags } from '../../shared/reservations/buckets';
import type { ReservationKind } from '../../shared/reservations/kind';
import type { Reserved } from '../../shared/reservations/place';
import { sql, uniqueItemId } from './orders';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';

const HOUR = 3_600_000;

/** One kind of reservation as the pipeline's tests drive it: one unit per buyer, so both kinds behave alike. */
export interface KindUnderTest<R> {
  /** The kind, and how its owners are opened, e.g. "orders in 3 buckets". */
  name: string;
  kind: ReservationKind<R>;
  /** The hash tags of an owner's keys: one, or one per bucket. */
  tags(owner: string): string[];
  /** A new owner (a sale, a deal) of `capacity` units, in MySQL and Redis. */
  open(capacity: number): Promise<string>;
  /** One unit for the buyer, asked from `source` (the load-test allowance's LOCAL_SOURCE unless given); the same buyer asking again is a replay. */
  reserve(owner: string, buyer: number, source?: string): Promise<Reserved<R>>;
  /** The kind's own rows in MySQL: id and whether confirmed. */
  rows(owner: string): Promise<{ id: string; confirmed: boolean }[]>;
}

/** Orders of items whose stock is split into `buckets` (1: kept whole, today's keys). */
const ordersUnderTest = (buckets: number): KindUnderTest<unknown> => ({
  name: buckets === 1 ? 'orders' : `orders in ${buckets} buckets`,
  kind: orders as ReservationKind<unknown>,
  tags: (itemId) => bucketTags(`item:${itemId}`, buckets),
  async open(capacity) {
    const itemId = uniqueItemId('pipeline-item');
    await upsertItemStock(itemId, capacity, 1, buckets);
    await openSale(itemId, capacity, 1, buckets);
    return itemId;
  },
  reserve: (itemId, buyer, source = LOCAL_SOURCE) => reserve({ itemId, userId: buyer, quantity: 1, idempotencyKey: `key-${buyer}`, source }),
  rows: async (itemId) =>
    (await sql<RowDataPacket>("SELECT id, status FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected') ORDER BY id", [itemId])).map((r) => ({
      id: String(r.id),
      confirmed: r.status === 'confirmed',
    })),
});

const couponsUnderTest: KindUnderTest<unknown> = {
  name: 'coupons',
  kind: coupons as ReservationKind<unknown>,
  tags: (dealId) => [`{deal:${dealId}}`],
  async open(capacity) {
    const dealId = uniqueItemId('pipeline-deal');
    const now = Date.now();
    await upsertDeal({ id: dealId, title: 'Pipeline', opensAt: now - HOUR, closesAt: now + HOUR, limit: capacity });
    await setDealState(dealId, now - HOUR, now + HOUR, capacity);
    return dealId;
  },
  reserve: (dealId, buyer, source = LOCAL_SOURCE) => issueCoupon(dealId, buyer, source),
  rows: async (dealId) =>
    (await sql<RowDataPacket>('SELECT id FROM coupons WHERE deal_id = ? ORDER BY id', [dealId])).map((r) => ({ id: String(r.id), confirmed: true })),
};

export const kindsUnderTest = [ordersUnderTest(1), ordersUnderTest(3), couponsUnderTest];

/** The decisions kept for an owner's reservations, wherever its kind keeps them (shared/reservations/ledger.ts). */
export async function ledgerStates(owner: string): Promise<Record<string, string>> {
  const rows = await sql<RowDataPacket>(
    "SELECT id, state FROM reservation_ledger WHERE kind = 'coupon' AND owner_id = ? UNION ALL SELECT id, status FROM orders WHERE item_id = ?",
    [owner, owner],
  );
  return Object.fromEntries(rows.map((r) => [String(r.id), String(r.state)]));
}
