import * as z from '../shared/platform/zod';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { ItemId } from '../shared/sale/orders/model';
import { orders } from '../shared/sale/orders/kind';
import { Audit, auditOwner, MAX_AUDITED_IDS } from '../shared/reservations/audit';
import { ReservationId } from '../shared/reservations/ids';

const Params = z.object({ itemId: ItemId });
const Accepted = z.strictObject({ accepted: z._default(z.array(ReservationId).check(z.maxLength(MAX_AUDITED_IDS)), []) });

/** A sale's invariants after a load test, against the order ids it was answered 202 for (admin). */
export const handler = api({ access: 'admin', params: Params, body: Accepted, answers: { 200: Audit }, errors: ['NOT_FOUND'] }).handler(async ({ input }) => {
  const audit = await auditOwner(orders, input.params.itemId, input.body.accepted);
  if (!audit) throw new NotFoundError('No such item');
  return json(200, audit);
});
