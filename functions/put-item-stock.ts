import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { BucketCount, ItemId, MAX_ORDER_QUANTITY } from '../shared/sale/orders/model';
import { openItemSale } from '../shared/sale/orders/open-sale';

const Params = z.object({ itemId: ItemId });
const Stock = z.strictObject({
  quantity: z.int().check(z.minimum(1), z.maximum(10_000_000)),
  perUserLimit: z.int().check(z.minimum(1), z.maximum(MAX_ORDER_QUANTITY)),
  /** Split the stock over this many buckets on different Redis slots (shards), for one hot item: 1 keeps it whole. */
  buckets: z._default(BucketCount, 1),
});
const Opened = z.strictObject({ id: ItemId, initialStock: z.int(), remaining: z.int(), perUserLimit: z.int(), buckets: z.int() });

export const handler = api({ access: 'admin', params: Params, body: Stock, answers: { 200: Opened }, errors: ['SALE_STARTED'] }).handler(async ({ input }) => {
  const { itemId } = input.params;
  const { quantity, perUserLimit, buckets } = input.body;
  await openItemSale(itemId, { quantity, perUserLimit, buckets });
  return json(200, { id: itemId, initialStock: quantity, remaining: quantity, perUserLimit, buckets });
});
