import type { RowDataPacket } from 'mysql2';
import { db } from '../../platform/clients/mysql';
import { inTransaction } from '../../platform/db/transaction';

export interface ItemRow {
  id: string;
  initialStock: number;
  sold: number;
  perUserLimit: number;
  /** How many buckets its stock is split into in Redis. */
  buckets: number;
}

interface Row extends RowDataPacket {
  id: string;
  initial_stock: number;
  sold: number;
  per_user_limit: number;
  buckets: number;
}

const toItem = (r: Row): ItemRow => ({ id: r.id, initialStock: r.initial_stock, sold: r.sold, perUserLimit: r.per_user_limit, buckets: r.buckets });

export async function findItem(itemId: string): Promise<ItemRow | undefined> {
  const [rows] = await db().query<Row[]>('SELECT id, initial_stock, sold, per_user_limit, buckets FROM items WHERE id = ?', [itemId]);
  return rows[0] && toItem(rows[0]);
}

export async function listItems(): Promise<ItemRow[]> {
  const [rows] = await db().query<Row[]>('SELECT id, initial_stock, sold, per_user_limit, buckets FROM items ORDER BY id');
  return rows.map(toItem);
}

/**
 * Records a sale's initial stock. Refused (false) once the item has sold anything: its stock was
 * promised to buyers and can no longer be reset.
 */
export async function upsertItemStock(itemId: string, stock: number, perUserLimit: number, buckets = 1): Promise<boolean> {
  return inTransaction(db(), async (conn) => {
    const [rows] = await conn.query<RowDataPacket[]>(
      "SELECT (SELECT COUNT(*) FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected')) AS orders, (SELECT sold FROM items WHERE id = ? FOR UPDATE) AS sold",
      [itemId, itemId],
    );
    if (Number(rows[0]!.orders) > 0 || Number(rows[0]!.sold ?? 0) > 0) return false;
    await conn.query(
      `INSERT INTO items (id, initial_stock, sold, per_user_limit, buckets) VALUES (?, ?, 0, ?, ?)
       ON DUPLICATE KEY UPDATE initial_stock = VALUES(initial_stock), per_user_limit = VALUES(per_user_limit), buckets = VALUES(buckets)`,
      [itemId, stock, perUserLimit, buckets],
    );
    return true;
  });
}
