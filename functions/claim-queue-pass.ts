import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { ItemId } from '../shared/orders/model';
import { PassToken } from '../shared/rooms/model';
import { claimPass } from '../shared/rooms/rooms';

const Params = z.object({ itemId: ItemId });
const Pass = z.strictObject({ token: PassToken, expiresAt: z.iso.datetime() });

/** Issues the admitted buyer's pass, once (a retry answers the same): an order of the item brings it in its Waiting-Room-Pass header. */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'room.claims', ok: 'issued' },
  params: Params,
  answers: { 200: Pass },
  errors: ['NOT_FOUND', 'NOT_ON_SALE', 'NOT_ADMITTED', 'PLACE_LOST'],
}).handler(async (event) => {
  const pass = await claimPass(event.input.params.itemId, event.principal.userId);
  return json(200, { token: pass.token, expiresAt: new Date(pass.expiresAt).toISOString() });
});
