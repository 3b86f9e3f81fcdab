import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { db } from '../clients/mysql';
import { logger } from '../logger';
import type { OrderRecord } from './model';
import { claimPending, groupBy, settleWritten } from '../outbox/outbox';
import { itemKeys } from './model';

export type OrderStatus = 'confirmed' | 'rejected';

const byItem = (orders: OrderRecord[]) => groupBy(orders, (o) => o.itemId);

/**
 * Stores orders in one transaction. The item rows are locked first (in id order, so concurrent
 * writers cannot deadlock), so the existence check and the stock guard both see every committed
 * write: a duplicate delivery adds nothing, and an order that would take `sold` past
 * `initial_stock` is stored as rejected instead of confirmed.
 */
async function writeTransaction(conn: PoolConnection, orders: OrderRecord[]): Promise<Map<string, OrderStatus>> {
  const itemIds = [...new Set(orders.map((o) => o.itemId))].sort();
  await conn.beginTransaction();
  try {
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
    await conn.commit();
    const rejected = [...statuses.values()].filter((s) => s === 'rejected').length;
    if (rejected) logger.error('Orders rejected by the database guard: Redis stock drifted', { rejected });
    return statuses;
  } catch (error) {
    await conn.rollback().catch(() => undefined);
    throw error;
  }
}

async function write(orders: OrderRecord[]): Promise<void> {
  const conn = await db.getConnection();
  try {
    await writeTransaction(conn, orders);
  } finally {
    conn.release();
  }
}

/**
 * The writer's whole job for one batch: claim the pending orders (those whose outbox entry is gone
 * were compensated or already stored, and are dropped), write them in one transaction, fall back
 * to one transaction per order if that fails, and settle what was written. Returns the ids of the
 * orders that could not be written, to be retried by the queue.
 */
export async function writeOrders(orders: OrderRecord[]): Promise<Set<string>> {
  const unique = [...new Map(orders.map((o) => [o.orderId, o])).values()];
  const claimed = (
    await Promise.all(
      [...byItem(unique)].map(async ([itemId, group]) => {
        const pending = await claimPending(itemKeys(itemId), group.map((o) => o.orderId));
        return group.filter((o) => pending.has(o.orderId));
      }),
    )
  ).flat();
  if (claimed.length === 0) return new Set();

  const failed = new Set<string>();
  try {
    await write(claimed);
  } catch (error) {
    logger.warn('Batch write failed; writing orders one by one', { orders: claimed.length, error: error as Error });
    for (const order of claimed) {
      try {
        await write([order]);
      } catch (single) {
        logger.error('Order could not be written', { orderId: order.orderId, error: single as Error });
        failed.add(order.orderId);
      }
    }
  }

  const written = claimed.filter((o) => !failed.has(o.orderId));
  await Promise.all([...byItem(written)].map(([itemId, group]) => settleWritten(itemKeys(itemId), group.map((o) => o.orderId))));
  return failed;
}
