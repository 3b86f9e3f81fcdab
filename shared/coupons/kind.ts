import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { logger } from '../platform/logger';
import type { ReservationKind } from '../reservations/kind';
import { confirmedHoldings, type DecisionTable, type StoredState } from '../reservations/ledger';
import { forgetRejectedHolders, releaseCoupon, restoreHolders } from './coupons';
import { listDeals } from './deals';
import { CouponRecord, dealKeys } from './model';

interface DealCapacity {
  limit: number;
  issued: number;
}

/**
 * A coupon's decisions are kept in the reservation ledger: the coupons table holds a row only for a
 * coupon issued, one per user and deal, so it cannot also hold one cancelled before a re-issue.
 */
export const couponDecisions: DecisionTable<CouponRecord> = {
  table: 'reservation_ledger',
  scope: "kind = 'coupon'",
  id: 'id',
  owner: 'owner_id',
  buyer: 'buyer_id',
  units: 'units',
  state: 'state',
  rowOf: (c, state) => ({ id: c.couponId, kind: 'coupon', owner_id: c.dealId, buyer_id: c.userId, units: 1, state }),
  decidedByStore: false,
};

/**
 * Coupons, as a kind of reservation: one unit of a deal's limit each, one per user. The guard
 * stores a coupon as rejected when it would take `issued` past the limit, or give a user a second
 * one (only possible after Redis lost writes); the coupons table's unique key backs the latter.
 */
export const coupons: ReservationKind<CouponRecord, Map<string, DealCapacity>> = {
  name: 'coupons',
  retryText: 'The coupon could not be issued; try again',
  decisions: couponDecisions,
  record: CouponRecord,
  idOf: (c) => c.couponId,
  ownerOf: (c) => c.dealId,
  buyerOf: (c) => c.userId,
  unitsOf: () => 1,
  reservedAtOf: (c) => c.issuedAt,
  // A deal is never split into buckets (yet): its one set of keys.
  bucketsOf: async (dealId) => [dealKeys(dealId)],
  keysOfRecord: (c) => dealKeys(c.dealId),
  counter: { field: 'issued', sign: -1 },
  release: releaseCoupon,

  owners: async () => (await listDeals()).map((d) => d.id),

  async lockOwners(conn, dealIds) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id, coupon_limit, issued FROM deals WHERE id IN (?) ORDER BY id FOR UPDATE', [dealIds]);
    const deals = new Map(rows.map((r) => [String(r.id), { limit: Number(r.coupon_limit), issued: Number(r.issued) }]));
    const missing = dealIds.filter((id) => !deals.has(id));
    if (missing.length) throw new Error(`No deal row for ${missing.join(', ')}`);
    return deals;
  },

  async capacity(conn, dealId) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT coupon_limit FROM deals WHERE id = ?', [dealId]);
    return rows[0] ? Number(rows[0].coupon_limit) : undefined;
  },

  async store(conn, fresh, deals) {
    const [held] = await conn.query<RowDataPacket[]>('SELECT deal_id, user_id FROM coupons WHERE deal_id IN (?) AND user_id IN (?)', [
      [...new Set(fresh.map((c) => c.dealId))],
      [...new Set(fresh.map((c) => c.userId))],
    ]);
    const holders = new Set(held.map((r) => `${r.deal_id} ${r.user_id}`));
    const states = new Map<string, StoredState>();
    for (const coupon of fresh) {
      const deal = deals.get(coupon.dealId)!;
      const holder = `${coupon.dealId} ${coupon.userId}`;
      const fits = deal.issued < deal.limit && !holders.has(holder);
      if (fits) {
        deal.issued += 1;
        holders.add(holder);
      }
      states.set(coupon.couponId, fits ? 'confirmed' : 'rejected');
    }
    const confirmed = fresh.filter((c) => states.get(c.couponId) === 'confirmed');
    if (confirmed.length) {
      await conn.query('INSERT INTO coupons (id, deal_id, user_id, issued_at) VALUES ?', [
        confirmed.map((c) => [c.couponId, c.dealId, c.userId, new Date(c.issuedAt)]),
      ]);
      for (const dealId of new Set(confirmed.map((c) => c.dealId))) {
        const { issued } = deals.get(dealId)!;
        // Guarded again in SQL (and by the deals_not_overissued CHECK), not only in this loop.
        const [result] = await conn.query<ResultSetHeader>('UPDATE deals SET issued = ? WHERE id = ? AND ? <= coupon_limit', [issued, dealId, issued]);
        if (result.affectedRows !== 1) throw new Error(`Guard refused issued=${issued} for ${dealId}`);
      }
    }
    const rejected = fresh.length - confirmed.length;
    if (rejected) logger.error('Coupons rejected by the database guard: Redis drifted', { rejected });
    return states;
  },

  async rebuiltState(conn, dealId, remaining) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT opens_at, closes_at, coupon_limit FROM deals WHERE id = ?', [dealId]);
    const deal = rows[0];
    return (
      deal && {
        opens: new Date(deal.opens_at).getTime(),
        closes: new Date(deal.closes_at).getTime(),
        limit: Number(deal.coupon_limit),
        issued: Number(deal.coupon_limit) - remaining,
      }
    );
  },

  // A user whose coupon was rejected may ask again; one rejected as a second coupon still holds the first.
  async forgetRejected(dealId, rejected) {
    await forgetRejectedHolders(dealId, rejected);
    await restoreHolders(dealId, await confirmedHoldings(couponDecisions, dealId));
  },

  restoreBuyers: (dealId, confirmed) => restoreHolders(dealId, confirmed),
};
