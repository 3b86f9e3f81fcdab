import { redis } from '../platform/clients/redis';
import { LIMITS } from '../limits/limits';
import { reservationRates, throwIfRateLimited } from '../limits/rate';
import { AppError } from '../platform/errors';
import { isRefusal, scriptError } from '../platform/redis/script-codes';
import { CouponCode } from './codes';
import { luaScript, runOverPairs, type RedisClient } from '../platform/redis/script';
import type { Reserved } from '../reservations/place';
import { connectionToken } from '../platform/clients/replicas';
import { dealKeys, newCouponId, type CouponRecord } from './model';

const issueScript = luaScript<[string, string, string, string, string], [number, string, number, string, number, number, number, number]>(
  new URL('./lua/coupon-issue-5.lua', import.meta.url),
);
const releaseScript = luaScript<[string, string, string, string], [string, number]>(new URL('./lua/coupon-release-4.lua', import.meta.url));
const setScript = luaScript<[string], [number, number, number]>(new URL('./lua/deal-set-1.lua', import.meta.url));
const forgetHoldersScript = luaScript<[string], (string | number)[]>(new URL('./lua/holder-forget-1.lua', import.meta.url));
const restoreHoldersScript = luaScript<[string], (string | number)[]>(new URL('./lua/holders-restore-1.lua', import.meta.url));

/** The user already holds a coupon of this deal; the answer names it. */
export class AlreadyIssuedError extends AppError {
  override name = 'AlreadyIssuedError';
  constructor(readonly couponId: string) {
    super('ALREADY_ISSUED', 'You already hold a coupon of this deal', { couponId });
  }
}

/** A deal's rates, per user and per source, taken inside its script. */
const COUPON_RATES = { perBuyer: LIMITS.couponsPerUser, perSource: LIMITS.couponsPerSource };

/**
 * One Redis round trip decides: window, the user's and the source's (`source`, the client's
 * address) rates, one per user, limit; then records the coupon and its outbox entry. A user who
 * already holds one gets it back, replayed. `client` is the connection the script goes over, as
 * for reserve (shared/sale/orders/sale.ts).
 */
export async function issueCoupon(
  dealId: string,
  userId: number,
  source: string,
  now = Date.now(),
  client: RedisClient = redis(),
): Promise<Reserved<CouponRecord>> {
  const keys = dealKeys(dealId);
  const coupon: CouponRecord = { couponId: newCouponId(dealId, now), dealId, userId, issuedAt: now };
  const rates = reservationRates(COUPON_RATES, keys.tag, userId, source);
  const connection = connectionToken(keys.state, client);
  const reply = await issueScript.run(
    client,
    [keys.state, keys.buyers, keys.outbox, ...rates.keys],
    [userId, coupon.couponId, now, JSON.stringify(coupon), ...rates.args],
  );
  if (isRefusal(reply)) throw scriptError(reply);
  throwIfRateLimited(reply, 'Too many coupon requests; try again later');
  const [couponId, issued, pending] = reply as [string, number, number?];
  if (issued === CouponCode.AlreadyIssued) return { record: { ...coupon, couponId }, replayed: true, pending: pending === 1, connection };
  return { record: coupon, replayed: false, pending: true, connection };
}

/** Gives back a coupon the ledger cancelled (idempotent); 1 when it went back to the pool now or before. */
export async function releaseCoupon(coupon: CouponRecord): Promise<number> {
  const keys = dealKeys(coupon.dealId);
  return Number(await releaseScript.run(redis(), [keys.state, keys.buyers, keys.outbox, keys.released(coupon.couponId)], [coupon.couponId, coupon.userId]));
}

export async function setDealState(dealId: string, opensAt: number, closesAt: number, limit: number): Promise<void> {
  const reply = await setScript.run(redis(), [dealKeys(dealId).state], [opensAt, closesAt, limit]);
  if (isRefusal(reply)) throw scriptError(reply);
}

export async function issuedCount(dealId: string): Promise<number | undefined> {
  const issued = await redis().hget(dealKeys(dealId).state, 'issued');
  return issued === null ? undefined : Number(issued);
}

/**
 * The coupon a user holds in each of these deals, pending or stored. Each deal's keys have a slot of
 * their own, so no one pipeline may carry them all on a cluster: one command per deal, all issued
 * at once. On one node they leave in one write (the shared connection's corking), on a cluster in
 * one write per shard, in parallel: one round trip either way.
 */
export async function heldCoupons(dealIds: string[], userId: number): Promise<Map<string, string>> {
  const client = redis();
  const replies = await Promise.all(dealIds.map((dealId) => client.hget(dealKeys(dealId).buyers, String(userId))));
  const held = new Map<string, string>();
  replies.forEach((couponId, i) => {
    if (couponId !== null) held.set(dealIds[i]!, couponId);
  });
  return held;
}

/** Records users as the holders of their stored coupons where Redis forgot them; returns how many. */
export function restoreHolders(dealId: string, holders: { buyer: number; id: string }[]): Promise<number> {
  return runOverPairs(
    restoreHoldersScript,
    redis(),
    dealKeys(dealId).buyers,
    holders.map((h) => [h.buyer, h.id]),
  );
}

/** Forgets users as the holders of coupons the guard rejected (a user holding another one keeps it). */
export async function forgetRejectedHolders(dealId: string, rejected: CouponRecord[]): Promise<void> {
  await runOverPairs(
    forgetHoldersScript,
    redis(),
    dealKeys(dealId).buyers,
    rejected.map((c) => [c.userId, c.couponId]),
  );
}
