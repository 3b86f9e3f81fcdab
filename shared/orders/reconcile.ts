import type { RowDataPacket } from 'mysql2';
import { db } from '../clients/mysql';
import { findItem } from './items';
import type { OrderRecord } from './model';
import { handOffQueue } from '../handoff/queue';
import { pendingRecords, settleWritten } from '../outbox/outbox';
import { itemKeys } from './model';
import { remainingStock, resetStock } from './reservations';

export interface ItemReconciliation {
  itemId: string;
  initial: number;
  remaining: number;
  confirmed: number;
  rejected: number;
  pending: number;
  /** initial − (remaining + confirmed + pending); 0 when nothing was lost or oversold. */
  drift: number;
  relayed: number;
  settled: number;
  counterReset: boolean;
}

export interface ReconcileOptions {
  /** Re-send outbox entries older than this: their first send was lost. */
  relayOlderThanMs: number;
  /** Also reset a stock counter that drifted (compare-and-set against what was measured). */
  resetCounter: boolean;
  now?: number;
}

async function storedQuantities(itemId: string) {
  const [rows] = await db.query<RowDataPacket[]>(
    "SELECT COALESCE(SUM(IF(status = 'confirmed', quantity, 0)), 0) AS confirmed, COALESCE(SUM(IF(status = 'rejected', quantity, 0)), 0) AS rejected FROM orders WHERE item_id = ?",
    [itemId],
  );
  return { confirmed: Number(rows[0]!.confirmed), rejected: Number(rows[0]!.rejected) };
}

async function alreadyStored(orders: OrderRecord[]): Promise<Set<string>> {
  if (orders.length === 0) return new Set();
  const [rows] = await db.query<RowDataPacket[]>('SELECT id FROM orders WHERE id IN (?)', [orders.map((o) => o.orderId)]);
  return new Set(rows.map((r) => String(r.id)));
}

/**
 * Checks initial = remaining (Redis) + confirmed (MySQL) + pending (outbox) for one item. Relays
 * outbox entries whose send was lost, clears entries the writer stored but could not settle, and
 * on request resets a drifted counter.
 */
export async function reconcileItem(itemId: string, options: ReconcileOptions): Promise<ItemReconciliation | undefined> {
  const now = options.now ?? Date.now();
  const item = await findItem(itemId);
  if (!item) return undefined;
  const entries = await pendingRecords<OrderRecord>(itemKeys(itemId));
  const [remaining, stored, written] = await Promise.all([remainingStock(itemId), storedQuantities(itemId), alreadyStored(entries)]);
  const pendingOrders = entries.filter((o) => !written.has(o.orderId));
  const pending = pendingOrders.reduce((sum, o) => sum + o.quantity, 0);
  const measured = remaining ?? 0;
  const drift = item.initialStock - (measured + stored.confirmed + pending);

  const stale = pendingOrders.filter((o) => now - o.reservedAt >= options.relayOlderThanMs);
  await Promise.all(stale.map((order) => handOffQueue.send({ order })));
  await settleWritten(itemKeys(itemId), [...written]);
  const counterReset =
    options.resetCounter && drift !== 0 && remaining !== undefined && (await resetStock(itemId, measured, Math.max(0, measured + drift)));

  return { itemId, initial: item.initialStock, remaining: measured, ...stored, pending, drift, relayed: stale.length, settled: written.size, counterReset };
}
