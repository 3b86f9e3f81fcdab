import * as z from '../shared/zod';
import { AppError, UnavailableError } from '../shared/errors';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { logger } from '../shared/logger';
import { issueCoupon, releaseCoupon } from '../shared/coupons/coupons';
import { DealId } from '../shared/coupons/model';
import { handOffQueue } from '../shared/handoff/queue';

const Params = z.object({ dealId: DealId });

/**
 * One script decides (no lock): the server's clock, one coupon per user, the limit. The issue is
 * then handed to the queue with the same compensation as orders.
 */
export const handler = api({ access: 'user', params: Params }).handler(async ({ input, principal }) => {
  const coupon = await issueCoupon(input.params.dealId, principal.userId).catch((error: Error) => {
    throw error instanceof AppError ? error : new UnavailableError('Coupons are unavailable; try again');
  });
  try {
    await handOffQueue().send({ coupon });
  } catch (sendError) {
    const released = await releaseCoupon(coupon).catch(() => false);
    logger.warn('Coupon hand-off failed', { couponId: coupon.couponId, released, error: sendError as Error });
    if (released) throw new UnavailableError('The coupon could not be issued; try again');
  }
  return json(201, { couponId: coupon.couponId });
});
