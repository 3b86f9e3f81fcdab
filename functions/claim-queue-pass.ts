import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { takeQueueClaim } from '../shared/limits/rate';
import { ItemId } from '../shared/sale/orders/model';
import { PassToken } from '../shared/sale/rooms/model';
import { claimPass } from '../shared/sale/rooms/rooms';

const Params = z.object({ itemId: ItemId });
const Pass = z.strictObject({ token: PassToken, expiresAt: z.iso.datetime() });

/**
 * Issues the admitted buyer's pass, once (a retry answers the same while it lives; 410 once it has
 * expired): an order of the item brings it in its Waiting-Room-Pass header. A buyer's claims are rate-limited.
 */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'room.claims', ok: 'issued' },
  params: Params,
  answers: { 200: Pass },
  errors: ['NOT_FOUND', 'NOT_ON_SALE', 'NOT_ADMITTED', 'PLACE_LOST', 'PASS_EXPIRED', 'RATE_LIMITED'],
}).handler(async (event) => {
  await takeQueueClaim(event.principal.userId);
  const pass = await claimPass(event.input.params.itemId, event.principal.userId);
  return json(200, { token: pass.token, expiresAt: new Date(pass.expiresAt).toISOString() });
});
