import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { db } from '../clients/mysql';
import { inTransaction } from '../db/transaction';
import { logger } from '../logger';
import type { OrderRecord } from './model';
import { storeClaimed, type ReservationKind } from '../outbox/outbox';
import { itemKeys } from './model';

export type OrderStatus = 'confirmed' | 'rejected';

/**
 * Stores orders in one transaction. The item rows are locked first (in id order, so concurrent
 * writers cannot deadlock), so the existence check and the stock guard both see every committed
 * write: a duplicate delivery adds nothing, and an order that would take `sold` past
 * `initial_stock` is stored as rejected instead of confirmed.
 */
async function writeTransaction(conn: PoolConnection, orders: OrderRecord[]): Promise<Map<string, OrderStatus>> {
  const itemIds = [...new Set(orders.map((o) => o.itemId))].sort();
  const [items] = await conn.query<RowDataPacket[]>(
    'SELECT id, initial_stock, sold FROM items WHERE id IN (?) ORDER BY id FOR UPDATE',
    [itemIds],
  );
  const capacity = new Map(items.map((i) => [String(i.id), { initial: Number(i.initial_stock), sold: Number(i.sold) }]));
  const missing = itemIds.filter((id) => !capacity.has(id));
  if (missing.length) throw new Error(`No item row for ${missing.join(', ')}`);

  const [existing] = await conn.query<RowDataPacket[]>('SELECT id FROM orders WHERE id IN (?)', [orders.map((o) => o.orderId)]);
  const stored = new Set(existing.map((r) => String(r.id)));
  const fresh = orders.filter((o) => !stored.has(o.orderId)).sort((a, b) => a.reservedAt - b.reservedAt);

  const statuses = new Map<string, OrderStatus>();
  for (const order of fresh) {
    const item = capacity.get(order.itemId)!;
    const fits = item.sold + order.quantity <= item.initial;
    if (fits) item.sold += order.quantity;
    statuses.set(order.orderId, fits ? 'confirmed' : 'rejected');
  }
  if (fresh.length) {
    await conn.query(
      `INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES ?
       ON DUPLICATE KEY UPDATE id = id`,
      [fresh.map((o) => [o.orderId, o.itemId, o.userId, o.quantity, statuses.get(o.orderId), new Date(o.reservedAt)])],
    );
    for (const itemId of new Set(fresh.map((o) => o.itemId))) {
      const item = capacity.get(itemId)!;
      // Guarded again in SQL (and by the items_not_oversold CHECK), not only in this loop.
      const [result] = await conn.query<ResultSetHeader>(
        'UPDATE items SET sold = ? WHERE id = ? AND ? <= initial_stock',
        [item.sold, itemId, item.sold],
      );
      if (result.affectedRows !== 1) throw new Error(`Guard refused sold=${item.sold} for ${itemId}`);
    }
  }
  return statuses;
}

async function write(orders: OrderRecord[]): Promise<void> {
  const statuses = await inTransaction(db(), (conn) => writeTransaction(conn, orders));
  const rejected = [...statuses.values()].filter((s) => s === 'rejected').length;
  if (rejected) logger.error('Orders rejected by the database guard: Redis stock drifted', { rejected });
}

const orders: ReservationKind<OrderRecord> = { name: 'orders', idOf: (o) => o.orderId, ownerOf: (o) => o.itemId, keysOf: itemKeys };

/** Stores the pending orders of a batch under the stock guard; returns the ids that failed. */
export function writeOrders(records: OrderRecord[]): Promise<Set<string>> {
  return storeClaimed(records, orders, write);
}
