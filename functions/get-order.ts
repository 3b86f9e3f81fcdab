import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { ItemId, OrderId, OrderStatus } from '../shared/sale/orders/model';
import { orderOf } from '../shared/sale/orders/lookup';

const Params = z.object({ orderId: OrderId });
const Order = z.strictObject({ orderId: OrderId, itemId: ItemId, quantity: z.int(), status: OrderStatus });

export const handler = api({ access: 'user', params: Params, answers: { 200: Order }, errors: ['NOT_FOUND'] }).handler(async ({ input, principal }) => {
  const { orderId } = input.params;
  const { itemId, quantity, status } = await orderOf(orderId, principal.userId);
  return json(200, { orderId, itemId, quantity, status });
});
