import { randomBytes } from 'node:crypto';
import { createConnection, type RowDataPacket } from 'mysql2/promise';

/** A fresh item id per test, so tests share Redis and MySQL without seeing each other. */
export const uniqueItemId = (label = 'item') => `${label}-${randomBytes(5).toString('hex')}`;

export async function sql<T extends RowDataPacket>(query: string, params: unknown[] = []): Promise<T[]> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL! });
  try {
    const [rows] = await conn.query<T[]>(query, params);
    return rows;
  } finally {
    await conn.end();
  }
}

/** The orders the writer stored, confirmed or rejected: a promise or a cancellation alone is no stored order. */
export async function orderRows(itemId: string) {
  return sql<RowDataPacket>("SELECT id, user_id, quantity, status FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected')", [itemId]);
}

export async function soldCount(itemId: string): Promise<number> {
  const rows = await sql<RowDataPacket>('SELECT sold FROM items WHERE id = ?', [itemId]);
  return Number(rows[0]?.sold);
}
