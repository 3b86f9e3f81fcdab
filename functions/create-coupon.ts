import * as z from '../shared/zod';
import { AppError, UnavailableError } from '../shared/errors';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { loggableError, logger } from '../shared/logger';
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
    const retry = new UnavailableError('The coupon could not be issued; try again');
    // A release with no known outcome is a 503 too: asking again either names the coupon the user
    // holds, still pending, or issues one anew, if the release did run.
    const released = await releaseCoupon(coupon).catch((releaseError: unknown) => {
      logger.warn('Coupon hand-off failed, and so did its release', { couponId: coupon.couponId, error: loggableError(releaseError) });
      throw retry;
    });
    logger.warn('Coupon hand-off failed', { couponId: coupon.couponId, released, error: loggableError(sendError) });
    if (released) throw retry;
  }
  return json(201, { couponId: coupon.couponId });
});
