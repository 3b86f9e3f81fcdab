import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { db } from '../platform/clients/mysql';
import { ScriptCode, scriptError } from '../platform/redis/script-codes';

/** A CHECK constraint refused the row: MariaDB's ER_CONSTRAINT_FAILED, MySQL's ER_CHECK_CONSTRAINT_VIOLATED. */
const CHECK_VIOLATED = [4025, 3819];

export interface Deal {
  id: string;
  title: string;
  opensAt: number;
  closesAt: number;
  limit: number;
}

const toDeal = (r: RowDataPacket): Deal => ({
  id: String(r.id),
  title: String(r.title),
  opensAt: new Date(r.opens_at).getTime(),
  closesAt: new Date(r.closes_at).getTime(),
  limit: Number(r.coupon_limit),
});

/** Writes the deal on `conn` when given (a transaction of the caller's), else on the pool. */
export async function upsertDeal(deal: Deal, conn: Pick<Pool, 'query'> = db()): Promise<void> {
  await conn
    .query(
    `INSERT INTO deals (id, title, opens_at, closes_at, coupon_limit) VALUES (?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE title = VALUES(title), opens_at = VALUES(opens_at), closes_at = VALUES(closes_at), coupon_limit = VALUES(coupon_limit)`,
    [deal.id, deal.title, new Date(deal.opensAt), new Date(deal.closesAt), deal.limit],
    )
    .catch((error: { errno?: number }) => {
      throw CHECK_VIOLATED.includes(error.errno ?? 0) ? scriptError(ScriptCode.LimitBelowIssued) : error;
    });
}

export async function findDeal(dealId: string): Promise<Deal | undefined> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT id, title, opens_at, closes_at, coupon_limit FROM deals WHERE id = ?', [dealId]);
  return rows[0] && toDeal(rows[0]);
}

export async function listDeals(): Promise<Deal[]> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT id, title, opens_at, closes_at, coupon_limit FROM deals ORDER BY opens_at DESC, id');
  return rows.map(toDeal);
}

export async function storedCoupons(userId: number): Promise<{ couponId: string; dealId: string; issuedAt: number }[]> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT id, deal_id, issued_at FROM coupons WHERE user_id = ? ORDER BY issued_at DESC', [userId]);
  return rows.map((r) => ({ couponId: String(r.id), dealId: String(r.deal_id), issuedAt: new Date(r.issued_at).getTime() }));
}
