import * as z from '../shared/platform/zod';
import { AppError, UnavailableError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { correlationIdOf } from '../shared/platform/http/correlation';
import { json } from '../shared/platform/http/response';
import { AlreadyIssuedError, issueCoupon } from '../shared/coupons/coupons';
import { coupons } from '../shared/coupons/kind';
import { DealId } from '../shared/coupons/model';
import { ReservationId } from '../shared/reservations/ids';
import { handOff } from '../shared/reservations/place';

const Params = z.object({ dealId: DealId });
const Issued = z.strictObject({ couponId: ReservationId });

/**
 * One script decides (no lock): the server's clock, the rates, one coupon per user, the limit. The issue is
 * then handed to the queue through the same pipeline as orders; a user who already holds one is
 * told which (409).
 */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'coupons', ok: 'issued' },
  params: Params,
  answers: { 201: Issued },
  errors: ['NOT_FOUND', 'NOT_OPEN', 'CLOSED', 'SOLD_OUT', 'ALREADY_ISSUED', 'RATE_LIMITED'],
}).handler(async (event) => {
  const { input, principal } = event;
  const issued = await issueCoupon(input.params.dealId, principal.userId, clientAddress(event)).catch((error: Error) => {
    throw error instanceof AppError ? error : new UnavailableError('Coupons are unavailable; try again');
  });
  await handOff(coupons, issued, correlationIdOf(event));
  if (issued.replayed) throw new AlreadyIssuedError(issued.record.couponId);
  return json(201, { couponId: issued.record.couponId });
});
