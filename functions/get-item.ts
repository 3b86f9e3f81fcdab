import * as z from '../shared/platform/zod';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { findItem } from '../shared/sale/orders/items';
import { ItemId } from '../shared/sale/orders/model';
import { remainingStock } from '../shared/sale/orders/sale';

const Params = z.object({ itemId: ItemId });
const Item = z.strictObject({ id: ItemId, initialStock: z.int(), remaining: z.int(), confirmed: z.int(), perUserLimit: z.int(), buckets: z.int() });

export const handler = api({ access: 'public', params: Params, answers: { 200: Item }, errors: ['NOT_FOUND'] }).handler(async ({ input }) => {
  const { itemId } = input.params;
  const [item, remaining] = await Promise.all([findItem(itemId), remainingStock(itemId)]);
  if (!item) throw new NotFoundError('No such item');
  return json(200, {
    id: item.id,
    initialStock: item.initialStock,
    remaining: remaining ?? 0,
    confirmed: item.sold,
    perUserLimit: item.perUserLimit,
    buckets: item.buckets,
  });
});
