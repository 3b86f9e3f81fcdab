import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { couponsOf } from '../shared/coupons/mine';
import { DealId } from '../shared/coupons/model';
import { ReservationId } from '../shared/reservations/ids';
import * as z from '../shared/platform/zod';

/** Pending: issued in Redis, on its way to MySQL; rejected: refused by the database guard after Redis had issued it. */
const Coupons = z.strictObject({
  coupons: z.array(
    z.strictObject({ couponId: ReservationId, dealId: DealId, status: z.enum(['pending', 'issued', 'rejected']), issuedAt: z.optional(z.iso.datetime()) }),
  ),
});

export const handler = api({ access: 'user', answers: { 200: Coupons }, errors: [] }).handler(async ({ principal }) =>
  json(200, { coupons: await couponsOf(principal.userId) }),
);
