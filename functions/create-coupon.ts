import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { correlationIdOf } from '../shared/platform/http/correlation';
import { json } from '../shared/platform/http/response';
import { DealId } from '../shared/coupons/model';
import { takeCoupon } from '../shared/coupons/take-coupon';
import { ReservationId } from '../shared/reservations/ids';

const Params = z.object({ dealId: DealId });
const Issued = z.strictObject({ couponId: ReservationId });

/** Issues the caller a coupon of the deal and hands it to the queue (takeCoupon); one who holds one is told which (409). */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'coupons', ok: 'issued' },
  params: Params,
  answers: { 201: Issued },
  errors: ['NOT_FOUND', 'NOT_OPEN', 'CLOSED', 'SOLD_OUT', 'ALREADY_ISSUED', 'RATE_LIMITED'],
}).handler(async (event) => json(201, await takeCoupon(event.input.params.dealId, event.principal.userId, clientAddress(event), correlationIdOf(event))));
