import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { json } from '../shared/platform/http/response';
import { takeQueueJoin } from '../shared/limits/rate';
import { ItemId } from '../shared/sale/orders/model';
import { joinQueue } from '../shared/sale/rooms/rooms';

const Params = z.object({ itemId: ItemId });
const Place = z.strictObject({ position: z.int() });

/** Puts the buyer in the item's waiting room, once per account (201; again: 200, the same place); joins from one address are rate-limited. */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'room.joins', ok: 'placed' },
  params: Params,
  answers: { 200: Place, 201: Place },
  errors: ['NOT_FOUND', 'NOT_ON_SALE', 'SOLD_OUT', 'RATE_LIMITED'],
}).handler(async (event) => {
  await takeQueueJoin(clientAddress(event));
  const { position, joined } = await joinQueue(event.input.params.itemId, event.principal.userId);
  return joined ? json(201, { position }) : json(200, { position });
});
