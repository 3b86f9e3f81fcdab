/**
 * The baseline for coupons: the original service's pessimistic lock, one MySQL transaction per
 * request that locks the deal row (SELECT … FOR UPDATE), checks the window, the user and the count,
 * then inserts. Served by the twin under /__baseline/… (the benches' extra functions); never deployed.
 */
import type { RowDataPacket } from 'mysql2/promise';
import * as z from '../../shared/platform/zod';
import { db } from '../../shared/platform/clients/mysql';
import { inTransaction, type ConnectionSource } from '../../shared/platform/db/transaction';
import { AppError, NotFoundError } from '../../shared/platform/errors';
import '../../shared/coupons/codes';
import { api } from '../../shared/api/api';
import { json } from '../../shared/platform/http/response';
import { DealId, newCouponId } from '../../shared/coupons/model';

export async function issueCouponForUpdate(pool: ConnectionSource, dealId: string, userId: number): Promise<string> {
  return inTransaction(pool, async (conn) => {
    const [deals] = await conn.query<RowDataPacket[]>('SELECT opens_at, closes_at, coupon_limit FROM deals WHERE id = ? FOR UPDATE', [dealId]);
    const deal = deals[0];
    if (!deal) throw new NotFoundError('No such deal');
    const now = Date.now();
    if (now < new Date(deal.opens_at).getTime()) throw new AppError('NOT_OPEN', 'This deal is not open yet');
    if (now >= new Date(deal.closes_at).getTime()) throw new AppError('CLOSED', 'This deal has closed');
    const [held] = await conn.query<RowDataPacket[]>('SELECT id FROM coupons WHERE deal_id = ? AND user_id = ?', [dealId, userId]);
    if (held[0]) throw new AppError('ALREADY_ISSUED', 'You already hold a coupon of this deal', { couponId: held[0].id });
    const [count] = await conn.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM coupons WHERE deal_id = ?', [dealId]);
    if (Number(count[0]!.n) >= Number(deal.coupon_limit)) throw new AppError('SOLD_OUT', 'All coupons of this deal are issued');
    const couponId = newCouponId(dealId);
    await conn.query('INSERT INTO coupons (id, deal_id, user_id, issued_at) VALUES (?, ?, ?, NOW(3))', [couponId, dealId, userId]);
    return couponId;
  });
}

const Issued = z.strictObject({ couponId: z.string() });

export const handler = api({
  access: 'user',
  params: z.object({ dealId: DealId }),
  answers: { 201: Issued },
  errors: ['NOT_FOUND', 'NOT_OPEN', 'CLOSED', 'ALREADY_ISSUED', 'SOLD_OUT'],
}).handler(async ({ input, principal }) => json(201, { couponId: await issueCouponForUpdate(db(), input.params.dealId, principal.userId) }));
