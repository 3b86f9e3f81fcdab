import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { ItemId } from '../shared/sale/orders/model';
import { RoomInput } from '../shared/sale/rooms/model';
import { putRoom } from '../shared/sale/rooms/admin';

const Params = z.object({ itemId: ItemId });
const Room = z.strictObject({
  id: ItemId,
  opensAt: z.iso.datetime(),
  admitPerSecond: z.number(),
  passSeconds: z.int(),
  graceSeconds: z.int(),
  paused: z.boolean(),
  statusReadsPerSecond: z.int(),
});

/** Sets an item's waiting room, or pauses, resumes or re-rates it while it runs: from then on its orders need a pass. */
export const handler = api({ access: 'admin', params: Params, body: RoomInput, answers: { 200: Room }, errors: ['NOT_ON_SALE', 'CONFLICT'] }).handler(
  async ({ input }) => {
    const { itemId } = input.params;
    await putRoom(itemId, input.body);
    return json(200, { id: itemId, ...input.body, opensAt: new Date(input.body.opensAt).toISOString() });
  },
);
