import type { PoolConnection } from 'mysql2/promise';

/** Where a transaction's connection comes from: the function's pool, or a benchmark's own. */
export interface ConnectionSource {
  getConnection(): Promise<PoolConnection>;
}

/** Runs fn in one transaction on a pooled connection: committed if fn returns, rolled back if it throws. */
export async function inTransaction<T>(pool: ConnectionSource, fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
  const conn = await pool.getConnection();
  try {
    await conn.beginTransaction();
    const result = await fn(conn);
    await conn.commit();
    return result;
  } catch (error) {
    await conn.rollback().catch(() => undefined);
    throw error;
  } finally {
    conn.release();
  }
}
