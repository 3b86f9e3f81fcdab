import type { RowDataPacket } from 'mysql2';
import { db } from '../clients/mysql';
import { findItem } from './items';
import type { OrderRecord } from './model';
import { handOffQueue } from '../handoff/queue';
import { pendingRecords, settleWritten } from '../outbox/outbox';
import { itemKeys } from './model';
import { raiseBuyerCounts, remainingStock, resetStock } from './reservations';

export interface ItemReconciliation {
  itemId: string;
  initial: number;
  remaining: number;
  confirmed: number;
  rejected: number;
  pending: number;
  /** initial − (remaining + confirmed + pending); 0 when nothing was lost or oversold. */
  drift: number;
  /** False when two looks disagreed: something moved between the reads, so the drift may be false. */
  steady: boolean;
  relayed: number;
  settled: number;
  counterReset: boolean;
  /** Buyers whose count in Redis was below their confirmed orders in MySQL, raised. */
  buyersRaised: number;
}

export interface ReconcileOptions {
  /** Re-send outbox entries older than this: their first send was lost. */
  relayOlderThanMs: number;
  /**
   * Also repair Redis's counters: a stock counter that drifted is reset (compare-and-set against
   * what was measured), and a buyer's count below their confirmed orders is raised (never lowered).
   */
  repairCounters: boolean;
  now?: number;
}

async function storedQuantities(itemId: string) {
  const [rows] = await db().query<RowDataPacket[]>(
    "SELECT COALESCE(SUM(IF(status = 'confirmed', quantity, 0)), 0) AS confirmed, COALESCE(SUM(IF(status = 'rejected', quantity, 0)), 0) AS rejected FROM orders WHERE item_id = ?",
    [itemId],
  );
  return { confirmed: Number(rows[0]!.confirmed), rejected: Number(rows[0]!.rejected) };
}

/**
 * What each buyer holds for certain: their confirmed orders in MySQL, from one query. Pending
 * orders are left out on purpose: one can be confirmed (and so counted twice) or released between
 * reads, and a count raised too far never comes down. A pending order whose count Redis lost is
 * raised by the next repair, once it is written.
 */
async function confirmedPerBuyer(itemId: string): Promise<Map<number, number>> {
  const [rows] = await db().query<RowDataPacket[]>(
    "SELECT user_id, SUM(quantity) AS quantity FROM orders WHERE item_id = ? AND status = 'confirmed' GROUP BY user_id",
    [itemId],
  );
  return new Map(rows.map((r) => [Number(r.user_id), Number(r.quantity)]));
}

async function alreadyStored(orders: OrderRecord[]): Promise<Set<string>> {
  if (orders.length === 0) return new Set();
  const [rows] = await db().query<RowDataPacket[]>('SELECT id FROM orders WHERE id IN (?)', [orders.map((o) => o.orderId)]);
  return new Set(rows.map((r) => String(r.id)));
}

/** One look at the three places an item's units can be; not atomic across Redis and MySQL. */
async function measure(itemId: string, initial: number) {
  const entries = await pendingRecords<OrderRecord>(itemKeys(itemId));
  const [remaining, stored, written] = await Promise.all([remainingStock(itemId), storedQuantities(itemId), alreadyStored(entries)]);
  const pendingOrders = entries.filter((o) => !written.has(o.orderId));
  const pending = pendingOrders.reduce((sum, o) => sum + o.quantity, 0);
  const measured = remaining ?? 0;
  return { remaining, measured, stored, written, pendingOrders, pending, drift: initial - (measured + stored.confirmed + pending) };
}

/** Time for writes in flight during a measurement to land before drift is believed. */
const SETTLE_MS = 500;

/**
 * Checks initial = remaining (Redis) + confirmed (MySQL) + pending (outbox) for one item. A single
 * look can catch a reservation or a write between its reads, so drift counts only when a second
 * look a moment later finds the same; only then may the counter be reset (compare-and-set on the
 * second look). Also relays outbox entries whose send was lost and clears entries the writer
 * stored but could not settle.
 */
export async function reconcileItem(itemId: string, options: ReconcileOptions): Promise<ItemReconciliation | undefined> {
  const now = options.now ?? Date.now();
  const item = await findItem(itemId);
  if (!item) return undefined;
  let look = await measure(itemId, item.initialStock);
  let steady = true;
  if (look.drift !== 0) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const again = await measure(itemId, item.initialStock);
    steady = again.drift === look.drift;
    look = again;
  }
  const { remaining, measured, stored, written, pendingOrders, pending, drift } = look;

  const stale = pendingOrders.filter((o) => now - o.reservedAt >= options.relayOlderThanMs);
  await Promise.all(stale.map((order) => handOffQueue().send({ order })));
  await settleWritten(itemKeys(itemId), [...written]);
  const repair = options.repairCounters && remaining !== undefined;
  const counterReset = repair && steady && drift !== 0 && (await resetStock(itemId, measured, Math.max(0, measured + drift)));
  const buyersRaised = repair ? await raiseBuyerCounts(itemId, await confirmedPerBuyer(itemId)) : 0;

  return { itemId, initial: item.initialStock, remaining: measured, ...stored, pending, drift, steady, relayed: stale.length, settled: written.size, counterReset, buyersRaised };
}
