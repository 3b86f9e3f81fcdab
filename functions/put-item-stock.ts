import * as z from '../shared/platform/zod';
import { AppError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { upsertItemStock } from '../shared/orders/items';
import { BucketCount, ItemId, MAX_ORDER_QUANTITY } from '../shared/orders/model';
import { openSale, saleHasReservations } from '../shared/orders/sale';

const Params = z.object({ itemId: ItemId });
const Stock = z.strictObject({
  quantity: z.int().check(z.minimum(1), z.maximum(10_000_000)),
  perUserLimit: z.int().check(z.minimum(1), z.maximum(MAX_ORDER_QUANTITY)),
  /** Split the stock over this many buckets on different Redis slots (shards), for one hot item: 1 keeps it whole. */
  buckets: z._default(BucketCount, 1),
});

const saleStarted = () => new AppError('SALE_STARTED', 'This sale already has orders; its stock can no longer be reset');

/**
 * Opens a sale: MySQL records the initial stock first, then Redis gets the live counter. Pending
 * reservations live only in Redis, so they are checked before MySQL is touched.
 */
export const handler = api({ access: 'admin', params: Params, body: Stock }).handler(async ({ input }) => {
  const { itemId } = input.params;
  const { quantity, perUserLimit, buckets } = input.body;
  if (await saleHasReservations(itemId, buckets)) throw saleStarted();
  if (!(await upsertItemStock(itemId, quantity, perUserLimit, buckets))) {
    throw saleStarted();
  }
  await openSale(itemId, quantity, perUserLimit, buckets);
  return json(200, { id: itemId, initialStock: quantity, remaining: quantity, perUserLimit, buckets });
});
