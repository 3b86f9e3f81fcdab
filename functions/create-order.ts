import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { correlationIdOf } from '../shared/platform/http/correlation';
import { json } from '../shared/platform/http/response';
import { IdempotencyKey, ItemId, OrderId, OrderStatus, Quantity } from '../shared/sale/orders/model';
import { placeOrder } from '../shared/sale/orders/place-order';
import { PassToken } from '../shared/sale/rooms/model';

const Params = z.object({ itemId: ItemId });
const Headers = z.object({ 'idempotency-key': IdempotencyKey, 'waiting-room-pass': z.optional(PassToken) });
const Order = z.strictObject({ quantity: Quantity });
const Accepted = z.strictObject({ orderId: OrderId, status: OrderStatus, remaining: z.int() });

/** Reserves, hands the order to the queue and answers 202; a 503 is retried with the same key (placeOrder). */
export const handler = api({
  access: 'user',
  outcomes: { prefix: 'orders', ok: 'accepted' },
  params: Params,
  headers: Headers,
  body: Order,
  answers: { 202: Accepted },
  errors: ['NOT_ON_SALE', 'SOLD_OUT', 'LIMIT_EXCEEDED', 'IDEMPOTENCY_MISMATCH', 'RATE_LIMITED', 'PASS_REQUIRED'],
}).handler(async (event) => {
  const { input, principal } = event;
  const request = {
    itemId: input.params.itemId,
    userId: principal.userId,
    quantity: input.body.quantity,
    idempotencyKey: input.headers['idempotency-key'],
    source: clientAddress(event),
    pass: input.headers['waiting-room-pass'],
  };
  return json(202, await placeOrder(request, correlationIdOf(event)));
});
