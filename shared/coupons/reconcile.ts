import { handOffQueue } from '../handoff/queue';
import { pendingRecords, settleWritten } from '../outbox/outbox';
import { issuedCount } from './coupons';
import { findDeal, storedCouponCount } from './deals';
import { dealKeys, type CouponRecord } from './model';
import { db } from '../clients/mysql';
import type { RowDataPacket } from 'mysql2';

export interface DealReconciliation {
  dealId: string;
  limit: number;
  remaining: number;
  stored: number;
  pending: number;
  /** limit − (remaining + stored + pending); 0 when no coupon was lost or doubled. */
  drift: number;
  relayed: number;
}

/** Checks limit = remaining (Redis) + issued rows (MySQL) + pending (outbox), and relays lost sends. */
export async function reconcileDeal(dealId: string, relayOlderThanMs: number, now = Date.now()): Promise<DealReconciliation | undefined> {
  const deal = await findDeal(dealId);
  if (!deal) return undefined;
  const keys = dealKeys(dealId);
  const entries = await pendingRecords<CouponRecord>(keys);
  const [issued, stored, written] = await Promise.all([
    issuedCount(dealId),
    storedCouponCount(dealId),
    entries.length
      ? db().query<RowDataPacket[]>('SELECT id FROM coupons WHERE id IN (?)', [entries.map((c) => c.couponId)]).then(([rows]) => new Set(rows.map((r) => String(r.id))))
      : new Set<string>(),
  ]);
  const pending = entries.filter((c) => !written.has(c.couponId));
  const stale = pending.filter((c) => now - c.issuedAt >= relayOlderThanMs);
  await Promise.all(stale.map((coupon) => handOffQueue().send({ coupon })));
  await settleWritten(keys, [...written]);
  const remaining = deal.limit - (issued ?? 0);
  return { dealId, limit: deal.limit, remaining, stored, pending: pending.length, drift: deal.limit - (remaining + stored + pending.length), relayed: stale.length };
}
