import { redis } from '../clients/redis';
import { AppError } from '../errors';
import { isScriptCode, scriptError } from '../redis/script-codes';
import { luaScript } from '../redis/script';
import { dealKeys, newCouponId, type CouponRecord } from './model';

const issueScript = luaScript<[string, string, string, string], [number, string, number, string]>(new URL('./lua/coupon-issue-4.lua', import.meta.url));
const releaseScript = luaScript<[string, string, string, string, string], [string, number]>(new URL('./lua/coupon-release-5.lua', import.meta.url));
const setScript = luaScript<[string], [number, number, number]>(new URL('./lua/deal-set-1.lua', import.meta.url));

const ALREADY_ISSUED = -23;

/** The user already holds a coupon of this deal; the answer names it. */
export class AlreadyIssuedError extends AppError {
  override name = 'AlreadyIssuedError';
  constructor(readonly couponId: string) {
    super('ALREADY_ISSUED', 'You already hold a coupon of this deal', { couponId });
  }
}

/** One Redis round trip decides: window, one per user, limit; then records the coupon and its outbox entry. */
export async function issueCoupon(dealId: string, userId: number, now = Date.now()): Promise<CouponRecord> {
  const keys = dealKeys(dealId);
  const coupon: CouponRecord = { couponId: newCouponId(dealId, now), dealId, userId, issuedAt: now };
  const reply = await issueScript.run(redis(), [keys.deal, keys.holders, keys.outbox, keys.claimed], [userId, coupon.couponId, now, JSON.stringify(coupon)]);
  if (isScriptCode(reply)) throw scriptError(reply);
  const [couponId, issued] = reply as [string, number];
  if (issued === ALREADY_ISSUED) throw new AlreadyIssuedError(couponId);
  return coupon;
}

/** Undoes an issue whose hand-off failed; false when the writer already has the coupon. */
export async function releaseCoupon(coupon: CouponRecord): Promise<boolean> {
  const keys = dealKeys(coupon.dealId);
  return (await releaseScript.run(redis(), [keys.deal, keys.holders, keys.outbox, keys.claimed, keys.released(coupon.couponId)], [coupon.couponId, coupon.userId])) === 1;
}

export async function setDealState(dealId: string, opensAt: number, closesAt: number, limit: number): Promise<void> {
  const reply = await setScript.run(redis(), [dealKeys(dealId).deal], [opensAt, closesAt, limit]);
  if (isScriptCode(reply)) throw scriptError(reply);
}

export async function issuedCount(dealId: string): Promise<number | undefined> {
  const issued = await redis().hget(dealKeys(dealId).deal, 'issued');
  return issued === null ? undefined : Number(issued);
}

/** The coupon a user holds in each of these deals, pending or stored: one pipelined round trip. */
export async function heldCoupons(dealIds: string[], userId: number): Promise<Map<string, string>> {
  const pipeline = redis().pipeline();
  for (const dealId of dealIds) pipeline.hget(dealKeys(dealId).holders, String(userId));
  const replies = (await pipeline.exec()) ?? [];
  const held = new Map<string, string>();
  replies.forEach(([, couponId], i) => {
    if (typeof couponId === 'string') held.set(dealIds[i]!, couponId);
  });
  return held;
}
