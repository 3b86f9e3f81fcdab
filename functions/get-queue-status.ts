import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { ItemId } from '../shared/sale/orders/model';
import { queueStatus } from '../shared/sale/rooms/rooms';

const Params = z.object({ itemId: ItemId });
const Status = z.strictObject({
  state: z.enum(['waiting', 'admitted', 'holding', 'done', 'lost']),
  position: z.int(),
  ahead: z.int(),
  admitted: z.boolean(),
  estimatedWaitSeconds: z.nullable(z.int()),
  odds: z.number(),
  soldOut: z.boolean(),
  refreshSeconds: z.int(),
  opensAt: z.iso.datetime(),
  claimBy: z.optional(z.iso.datetime()),
  passExpiresAt: z.optional(z.iso.datetime()),
});

const iso = (ms: number) => new Date(ms).toISOString();

/** The buyer's place in the item's waiting room: a read (the room itself is advanced at most once a second, whoever asks). */
export const handler = api({ access: 'user', params: Params, answers: { 200: Status }, errors: ['NOT_FOUND', 'NOT_ON_SALE'] }).handler(async (event) => {
  const { claimBy, passExpiresAt, opensAt, ...standing } = await queueStatus(event.input.params.itemId, event.principal.userId);
  return json(200, {
    ...standing,
    admitted: standing.state === 'admitted' || standing.state === 'holding',
    opensAt: iso(opensAt),
    ...(claimBy === undefined ? {} : { claimBy: iso(claimBy) }),
    ...(passExpiresAt === undefined ? {} : { passExpiresAt: iso(passExpiresAt) }),
  });
});
