import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { NotFoundError } from '../shared/platform/errors';
import { noContent } from '../shared/platform/http/response';
import { ItemId } from '../shared/sale/orders/model';
import { removeRoom } from '../shared/sale/rooms/admin';

const Params = z.object({ itemId: ItemId });

/** Removes an item's waiting room (MySQL's settings, then Redis's room, queue, passes and marks): from then on its orders need no pass. */
export const handler = api({ access: 'admin', params: Params, answers: { 204: null }, errors: ['NOT_FOUND'] }).handler(async ({ input }) => {
  if (!(await removeRoom(input.params.itemId))) throw new NotFoundError('This item has no waiting room');
  return noContent();
});
