import { db } from '../clients/mysql';
import { storeClaimed, type ReservationKind } from '../outbox/outbox';
import { dealKeys, type CouponRecord } from './model';

const coupons: ReservationKind<CouponRecord> = { name: 'coupons', idOf: (c) => c.couponId, ownerOf: (c) => c.dealId, keysOf: dealKeys };

async function insert(batch: CouponRecord[]): Promise<void> {
  // Keyed on the coupon id, and unique on (deal, user): a duplicate delivery stores nothing more.
  await db().query(
    `INSERT INTO coupons (id, deal_id, user_id, issued_at) VALUES ?
     ON DUPLICATE KEY UPDATE id = id`,
    [batch.map((c) => [c.couponId, c.dealId, c.userId, new Date(c.issuedAt)])],
  );
}

/** Stores the pending coupons of a batch with one multi-row INSERT; returns the ids that failed. */
export function writeCoupons(records: CouponRecord[]): Promise<Set<string>> {
  return storeClaimed(records, coupons, insert);
}
