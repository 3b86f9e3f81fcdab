import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Buyer } from './buyer';

/** What MySQL holds for one owner (an item's sale, a deal), held against the reservations the buyers were promised. */
export interface Ledger {
  capacity: number;
  /** Decisions stored so far: what moves while the writer drains. */
  rows: number;
  confirmedRows: number;
  confirmedUnits: number;
  /** Acknowledged reservations stored neither as confirmed nor as rejected. */
  lostAcknowledged: string[];
  rejectedAcknowledged: number;
  /** Confirmed holdings beyond one per buyer: each buyer asks once (one order under one key, one coupon). */
  duplicates: number;
}

const beyondOne = (buyers: number[]) => {
  const perBuyer = new Map<number, number>();
  for (const buyer of buyers) perBuyer.set(buyer, (perBuyer.get(buyer) ?? 0) + 1);
  return [...perBuyer.values()].reduce((sum, n) => sum + n - 1, 0);
};

export async function readOrderLedger(db: Pool, itemId: string, acknowledged: Map<string, Buyer>): Promise<Ledger> {
  const [[items], [orders]] = await Promise.all([
    db.query<RowDataPacket[]>('SELECT initial_stock FROM items WHERE id = ?', [itemId]),
    db.query<RowDataPacket[]>("SELECT id, user_id, quantity, status FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected')", [itemId]),
  ]);
  const status = new Map(orders.map((o) => [String(o.id), String(o.status)]));
  const confirmed = orders.filter((o) => o.status === 'confirmed');
  return {
    capacity: Number(items[0]!.initial_stock),
    rows: orders.length,
    confirmedRows: confirmed.length,
    confirmedUnits: confirmed.reduce((sum, o) => sum + Number(o.quantity), 0),
    lostAcknowledged: [...acknowledged.keys()].filter((id) => !status.has(id)),
    rejectedAcknowledged: [...acknowledged.keys()].filter((id) => status.get(id) === 'rejected').length,
    duplicates: beyondOne(orders.map((o) => Number(o.user_id))),
  };
}

/**
 * A deal's coupons (confirmed only) and the ledger's decisions, which alone hold a coupon the
 * guard rejected. Read in one snapshot: a coupon stored between two separate reads would be in
 * the ledger as confirmed yet missing from the coupons read first, and so look lost.
 */
export async function readCouponLedger(db: Pool, dealId: string, acknowledged: Map<string, Buyer>): Promise<Ledger> {
  const conn = await db.getConnection();
  try {
    await conn.query('START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT');
    const [deals] = await conn.query<RowDataPacket[]>('SELECT coupon_limit FROM deals WHERE id = ?', [dealId]);
    const [coupons] = await conn.query<RowDataPacket[]>('SELECT id, user_id FROM coupons WHERE deal_id = ?', [dealId]);
    const [decisions] = await conn.query<RowDataPacket[]>("SELECT id, state FROM reservation_ledger WHERE kind = 'coupon' AND owner_id = ?", [dealId]);
    await conn.query('COMMIT');
    const stored = new Set(coupons.map((c) => String(c.id)));
    const rejected = new Set(decisions.filter((d) => d.state === 'rejected').map((d) => String(d.id)));
    return {
      capacity: Number(deals[0]!.coupon_limit),
      rows: decisions.length,
      confirmedRows: coupons.length,
      confirmedUnits: coupons.length,
      lostAcknowledged: [...acknowledged.keys()].filter((id) => !stored.has(id) && !rejected.has(id)),
      rejectedAcknowledged: [...acknowledged.keys()].filter((id) => rejected.has(id)).length,
      duplicates: beyondOne(coupons.map((c) => Number(c.user_id))),
    };
  } finally {
    conn.release();
  }
}

/** How the API answered each acknowledged reservation's buyer: answer → count, how many it found, and the ids it said it did not have. */
export interface Answers {
  statuses: Record<string, number>;
  found: number;
  notFound: string[];
}

const CONCURRENT_LOOKUPS = 25;
/** Answers a buyer asks again after, as the sale's buyers do: an overloaded function's 503 or 429, or none. */
const ASK_AGAIN = ['503', '429', 'network'];
/** How long a buyer keeps asking again, backing off from 100 ms to 1 s: generous for a busy machine. */
const ASK_AGAIN_FOR_MS = 30_000;

/** `ask`'s last answer, once it is not one to ask again after, or the buyer gave up. */
async function askUntilAnswered(ask: () => Promise<string>): Promise<string> {
  const giveUpAt = Date.now() + ASK_AGAIN_FOR_MS;
  for (let backoff = 100; ; backoff = Math.min(backoff * 2, 1_000)) {
    const status = await ask().catch(() => 'network');
    if (!ASK_AGAIN.includes(status) || Date.now() >= giveUpAt) return status;
    await new Promise((r) => setTimeout(r, backoff));
  }
}

/** Asks `ask` for every acknowledged reservation, 25 at a time; `found` are the answers that found it, `notFound` the one that says it is not there. */
async function lookUpEach(
  acknowledged: Map<string, Buyer>,
  { found, notFound: missing }: { found: string[]; notFound: string },
  ask: (id: string, buyer: Buyer) => Promise<string>,
): Promise<Answers> {
  const statuses: Record<string, number> = {};
  const notFound: string[] = [];
  const queue = [...acknowledged];
  await Promise.all(
    Array.from({ length: CONCURRENT_LOOKUPS }, async () => {
      for (let next = queue.pop(); next; next = queue.pop()) {
        const [id, buyer] = next;
        const status = await askUntilAnswered(() => ask(id, buyer));
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === missing) notFound.push(id);
      }
    }),
  );
  return { statuses, found: found.reduce((sum, s) => sum + (statuses[s] ?? 0), 0), notFound };
}

const get = (url: string, buyer: Buyer) => fetch(url, { headers: { cookie: buyer.cookie }, signal: AbortSignal.timeout(10_000) });

/**
 * Asks `GET /orders/{id}` for every acknowledged order as its buyer would: 200 (pending, confirmed
 * or rejected) when the order is in the outbox or in MySQL, 404 when it is in neither.
 */
export const orderAnswers = (url: string, acknowledged: Map<string, Buyer>) =>
  lookUpEach(acknowledged, { found: ['200'], notFound: '404' }, async (orderId, buyer) => {
    const res = await get(`${url}/orders/${orderId}`, buyer);
    await res.arrayBuffer();
    return String(res.status);
  });

/**
 * Asks `GET /me/coupons` as each acknowledged coupon's holder: the status it lists the coupon
 * with (pending while it is in Redis's holders only, issued once stored, rejected when the guard
 * refused it, as GET /orders/{id} says of an order), `missing` when the list
 * leaves it out, or the HTTP status when there was no list.
 */
export const couponAnswers = (url: string, acknowledged: Map<string, Buyer>) =>
  lookUpEach(acknowledged, { found: ['pending', 'issued', 'rejected'], notFound: 'missing' }, async (couponId, buyer) => {
    const res = await get(`${url}/me/coupons`, buyer);
    if (res.status !== 200) {
      await res.arrayBuffer();
      return String(res.status);
    }
    const { coupons } = (await res.json()) as { coupons: { couponId: string; status: string }[] };
    return coupons.find((c) => c.couponId === couponId)?.status ?? 'missing';
  });
