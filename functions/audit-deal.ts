import * as z from '../shared/platform/zod';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { DealId } from '../shared/coupons/model';
import { coupons } from '../shared/coupons/kind';
import { Audit, auditOwner, MAX_AUDITED_IDS } from '../shared/reservations/audit';
import { ReservationId } from '../shared/reservations/ids';

const Params = z.object({ dealId: DealId });
const Accepted = z.strictObject({ accepted: z._default(z.array(ReservationId).check(z.maxLength(MAX_AUDITED_IDS)), []) });

/** A deal's invariants after a load test, against the coupon ids it was answered 201 for (admin). */
export const handler = api({ access: 'admin', params: Params, body: Accepted, answers: { 200: Audit }, errors: ['NOT_FOUND'] }).handler(async ({ input }) => {
  const audit = await auditOwner(coupons, input.params.dealId, input.body.accepted);
  if (!audit) throw new NotFoundError('No such deal');
  return json(200, audit);
});
