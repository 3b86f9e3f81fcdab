import { db } from '../clients/mysql';
import { logger } from '../logger';
import { claimPending, groupBy, settleWritten } from '../outbox/outbox';
import { dealKeys, type CouponRecord } from './model';

const byDeal = (coupons: CouponRecord[]) => groupBy(coupons, (c) => c.dealId);

async function insert(coupons: CouponRecord[]): Promise<void> {
  // Keyed on the coupon id, and unique on (deal, user): a duplicate delivery stores nothing more.
  await db.query(
    `INSERT INTO coupons (id, deal_id, user_id, issued_at) VALUES ?
     ON DUPLICATE KEY UPDATE id = id`,
    [coupons.map((c) => [c.couponId, c.dealId, c.userId, new Date(c.issuedAt)])],
  );
}

/**
 * Claims the pending coupons (compensated or already stored ones are dropped), stores them with
 * one multi-row INSERT, falls back to one insert per coupon if that fails, and settles what was
 * stored. Returns the ids that could not be stored, to be retried by the queue.
 */
export async function writeCoupons(coupons: CouponRecord[]): Promise<Set<string>> {
  const unique = [...new Map(coupons.map((c) => [c.couponId, c])).values()];
  const claimed = (
    await Promise.all(
      [...byDeal(unique)].map(async ([dealId, group]) => {
        const pending = await claimPending(dealKeys(dealId), group.map((c) => c.couponId));
        return group.filter((c) => pending.has(c.couponId));
      }),
    )
  ).flat();
  if (claimed.length === 0) return new Set();

  const failed = new Set<string>();
  try {
    await insert(claimed);
  } catch (error) {
    logger.warn('Coupon batch insert failed; inserting one by one', { coupons: claimed.length, error: error as Error });
    for (const coupon of claimed) {
      await insert([coupon]).catch((single: Error) => {
        logger.error('Coupon could not be stored', { couponId: coupon.couponId, error: single });
        failed.add(coupon.couponId);
      });
    }
  }
  const written = claimed.filter((c) => !failed.has(c.couponId));
  await Promise.all([...byDeal(written)].map(([dealId, group]) => settleWritten(dealKeys(dealId), group.map((c) => c.couponId))));
  return failed;
}
