import { AppError, UnavailableError } from '../platform/errors';
import { handOff } from '../reservations/place';
import { AlreadyIssuedError, issueCoupon } from './coupons';
import { coupons } from './kind';

/**
 * One script decides (no lock): the server's clock, the rates, one coupon per user, the limit. The
 * issue is then handed to the queue through the same pipeline as orders; a user who already holds
 * one is told which (409), once its hand-off is sure.
 */
export async function takeCoupon(dealId: string, userId: number, source: string, correlationId: string): Promise<{ couponId: string }> {
  const issued = await issueCoupon(dealId, userId, source).catch((error: Error) => {
    throw error instanceof AppError ? error : new UnavailableError('Coupons are unavailable; try again', error);
  });
  await handOff(coupons, issued, correlationId);
  if (issued.replayed) throw new AlreadyIssuedError(issued.record.couponId);
  return { couponId: issued.record.couponId };
}
