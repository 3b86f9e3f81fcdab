import * as z from '../shared/zod';
import { AppError, UnavailableError } from '../shared/errors';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { loggableError, logger } from '../shared/logger';
import { IdempotencyKey, ItemId, Quantity } from '../shared/orders/model';
import { handOffQueue } from '../shared/handoff/queue';
import { release, reserve } from '../shared/orders/reservations';

const Params = z.object({ itemId: ItemId });
const Headers = z.object({ 'idempotency-key': IdempotencyKey });
const Order = z.strictObject({ quantity: Quantity });

/**
 * Reserves in Redis (one script, one round trip), then hands the order to the queue. If the
 * hand-off fails, the reservation is released and the client told to retry with the same key; a
 * release the writer already beat means the message did arrive, and the order stands.
 */
export const handler = api({ access: 'user', params: Params, headers: Headers, body: Order }).handler(async ({ input, principal }) => {
  const idempotencyKey = input.headers['idempotency-key'];
  const { order, remaining, replayed } = await reserve({
    itemId: input.params.itemId,
    userId: principal.userId,
    quantity: input.body.quantity,
    idempotencyKey,
  }).catch((error: Error) => {
    // Nothing was reserved when Redis could not be reached, so a retry is safe.
    throw error instanceof AppError ? error : new UnavailableError('Orders are unavailable; retry with the same Idempotency-Key');
  });
  if (!replayed) {
    try {
      await handOffQueue().send({ order });
    } catch (sendError) {
      const retry = new UnavailableError('The order could not be placed; retry with the same Idempotency-Key');
      // A release with no known outcome is a 503 too: the retry either replays the order, still
      // pending (the relay sends it later), or reserves it anew, if the release did run.
      const released = await release(order, idempotencyKey).catch((releaseError: unknown) => {
        logger.warn('Order hand-off failed, and so did its release', { orderId: order.orderId, error: loggableError(releaseError) });
        throw retry;
      });
      logger.warn('Order hand-off failed', { orderId: order.orderId, released, error: loggableError(sendError) });
      if (released) throw retry;
    }
  }
  return json(202, { orderId: order.orderId, status: 'pending', remaining });
});
