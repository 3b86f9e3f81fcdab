/**
 * The strongest MySQL designs for coupons, beside the FOR UPDATE one: one conditional UPDATE of the
 * deal's `issued` counter (within the window, below the limit), and the coupon's INSERT, whose
 * unique (deal, user) key refuses a second coupon for a user.
 *
 * - In one short transaction: counter and coupon stay together (a refused INSERT rolls the count
 *   back), with the deal row locked from the UPDATE to the COMMIT.
 * - In autocommit: the row is locked only for the UPDATE; a refused INSERT takes the count back
 *   with a second UPDATE, and a crash between the two loses a coupon. A user's concurrent second
 *   ask holds a count until then, so others refused meanwhile can leave the deal short of its
 *   limit (never over it). An upper bound.
 *
 * Served by the twin under /__baseline/… (the benches' extra functions); never deployed.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import * as z from '../../shared/platform/zod';
import { db, type Database } from '../../shared/platform/clients/mysql';
import { inTransaction, type ConnectionSource } from '../../shared/platform/db/transaction';
import { AppError, NotFoundError } from '../../shared/platform/errors';
import '../../shared/coupons/codes';
import { api } from '../../shared/api/api';
import { json } from '../../shared/platform/http/response';
import { DealId, newCouponId } from '../../shared/coupons/model';

const TAKE_COUPON = 'UPDATE deals SET issued = issued + 1 WHERE id = ? AND issued < coupon_limit AND opens_at <= NOW(3) AND closes_at > NOW(3)';
const GIVE_COUPON_BACK = 'UPDATE deals SET issued = issued - 1 WHERE id = ?';
const INSERT_COUPON = 'INSERT INTO coupons (id, deal_id, user_id, issued_at) VALUES (?, ?, ?, NOW(3))';
/** MySQL's ER_DUP_ENTRY: the user already holds a coupon of this deal. */
const DUPLICATE_KEY = 1062;

type Query = Pick<Database, 'query'>;

/** Why a user got no coupon, in the FOR UPDATE baseline's order of checks; read only on that path. */
async function refusal(source: Query, dealId: string, userId: number): Promise<AppError> {
  const [deals] = await source.query<RowDataPacket[]>(
    'SELECT opens_at <= NOW(3) AS opened, closes_at <= NOW(3) AS closed, (SELECT id FROM coupons WHERE deal_id = ? AND user_id = ?) AS held FROM deals WHERE id = ?',
    [dealId, userId, dealId],
  );
  const deal = deals[0];
  if (!deal) return new NotFoundError('No such deal');
  if (!Number(deal.opened)) return new AppError('NOT_OPEN', 'This deal is not open yet');
  if (Number(deal.closed)) return new AppError('CLOSED', 'This deal has closed');
  if (deal.held) return new AppError('ALREADY_ISSUED', 'You already hold a coupon of this deal', { couponId: deal.held });
  return new AppError('SOLD_OUT', 'All coupons of this deal are issued');
}

async function takeCoupon(source: Query, dealId: string, userId: number): Promise<void> {
  const [taken] = await source.query<ResultSetHeader>(TAKE_COUPON, [dealId]);
  if (taken.affectedRows === 0) throw await refusal(source, dealId, userId);
}

async function insertCoupon(source: Query, dealId: string, userId: number): Promise<string> {
  const couponId = newCouponId(dealId);
  try {
    await source.query(INSERT_COUPON, [couponId, dealId, userId]);
    return couponId;
  } catch (error) {
    if ((error as { errno?: number }).errno === DUPLICATE_KEY) throw await refusal(source, dealId, userId);
    throw error;
  }
}

export async function issueCouponConditionalTransaction(pool: ConnectionSource, dealId: string, userId: number): Promise<string> {
  return inTransaction(pool, async (conn) => {
    await takeCoupon(conn, dealId, userId);
    return insertCoupon(conn, dealId, userId);
  });
}

export async function issueCouponConditionalAutocommit(pool: Query, dealId: string, userId: number): Promise<string> {
  await takeCoupon(pool, dealId, userId);
  try {
    return await insertCoupon(pool, dealId, userId);
  } catch (error) {
    await pool.query(GIVE_COUPON_BACK, [dealId]);
    throw error;
  }
}

const Issued = z.strictObject({ couponId: z.string() });

const couponApi = () =>
  api({
    access: 'user',
    params: z.object({ dealId: DealId }),
    answers: { 201: Issued },
    errors: ['NOT_FOUND', 'NOT_OPEN', 'CLOSED', 'ALREADY_ISSUED', 'SOLD_OUT'],
  });

export const transactionHandler = couponApi().handler(async ({ input, principal }) =>
  json(201, { couponId: await issueCouponConditionalTransaction(db(), input.params.dealId, principal.userId) }),
);

export const autocommitHandler = couponApi().handler(async ({ input, principal }) =>
  json(201, { couponId: await issueCouponConditionalAutocommit(db(), input.params.dealId, principal.userId) }),
);
