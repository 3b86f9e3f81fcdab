import * as z from '../shared/platform/zod';
import { AppError, UnavailableError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { correlationIdOf } from '../shared/platform/http/correlation';
import { json } from '../shared/platform/http/response';
import { orders } from '../shared/sale/orders/kind';
import { IdempotencyKey, ItemId, OrderId, OrderStatus, Quantity } from '../shared/sale/orders/model';
import { writtenStatus } from '../shared/sale/orders/lookup';
import { PassToken } from '../shared/sale/rooms/model';
import { givePassBack, reserve } from '../shared/sale/orders/sale';
import { handOff } from '../shared/reservations/place';

const Params = z.object({ itemId: ItemId });
const Headers = z.object({ 'idempotency-key': IdempotencyKey, 'waiting-room-pass': z.optional(PassToken) });
const Order = z.strictObject({ quantity: Quantity });
/** A new order is pending; a retry of one the writer stored answers the status it stored. */
const Accepted = z.strictObject({ orderId: OrderId, status: OrderStatus, remaining: z.int() });

/**
 * Reserves in Redis (one script, the buyer's and the source's rates included: one round trip), then hands the order to the queue; a hand-off
 * that fails is cancelled and the client told to retry with the same key (503), its waiting-room pass given back for that retry.
 * A retry of an order already stored reads its status from MySQL: the one case that asks it.
 */
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
  const reservation = await reserve({
    itemId: input.params.itemId,
    userId: principal.userId,
    quantity: input.body.quantity,
    idempotencyKey: input.headers['idempotency-key'],
    source: clientAddress(event),
    pass: input.headers['waiting-room-pass'],
  }).catch((error: Error) => {
    // Nothing was reserved when Redis could not be reached, so a retry is safe.
    throw error instanceof AppError ? error : new UnavailableError('Orders are unavailable; retry with the same Idempotency-Key');
  });
  // A 503 here is retried with the same key: its pass must still be there for the retry.
  await handOff(orders, reservation, correlationIdOf(event)).catch(async (error: unknown) => {
    await givePassBack(reservation);
    throw error;
  });
  const { orderId } = reservation.record;
  const status = reservation.replayed && !reservation.pending ? await writtenStatus(orderId) : 'pending';
  return json(202, { orderId, status, remaining: reservation.remaining });
});
