import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { db } from '../platform/clients/mysql';
import { inTransaction } from '../platform/db/transaction';
import { scriptError } from '../platform/redis/script-codes';
import { CouponCode } from './codes';
import { setDealState } from './coupons';

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
      throw CHECK_VIOLATED.includes(error.errno ?? 0) ? scriptError(CouponCode.LimitBelowIssued) : error;
    });
}

/**
 * The MySQL row is written first but committed only once Redis, which refuses a limit below what
 * is already issued, has taken the new state: a refusal, or a failure on either side, leaves both
 * as they were. Two failures can still part them: a failed COMMIT after Redis took the state, and
 * a Redis call that fails without saying whether the script ran (a dropped connection). The admin
 * sees an error either way, and a retried PUT, being the whole state, puts them back together.
 */
export async function putDeal(deal: Deal): Promise<void> {
  await inTransaction(db(), async (conn) => {
    await upsertDeal(deal, conn);
    await setDealState(deal.id, deal.opensAt, deal.closesAt, deal.limit);
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
