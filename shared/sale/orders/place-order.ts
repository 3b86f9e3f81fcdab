import { AppError, UnavailableError } from '../../platform/errors';
import { handOff } from '../../reservations/place';
import { orders } from './kind';
import { writtenStatus } from './lookup';
import type { OrderStatus } from './model';
import { givePassBack, reserve, type ReservationRequest } from './sale';

export interface PlacedOrder {
  orderId: string;
  /** A new order is pending; a retry of one the writer stored answers the status it stored. */
  status: OrderStatus;
  remaining: number;
}

/**
 * Reserves in Redis (one script, the buyer's and the source's rates included: one round trip), then
 * hands the order to the queue. A hand-off that fails is cancelled and the client told to retry with
 * the same key (503), its waiting-room pass given back for that retry. A retry of an order already
 * stored reads its status from MySQL: the one case that asks it.
 */
export async function placeOrder(request: ReservationRequest, correlationId: string): Promise<PlacedOrder> {
  const reservation = await reserve(request).catch((error: Error) => {
    // Nothing was reserved when Redis could not be reached, so a retry is safe.
    throw error instanceof AppError ? error : new UnavailableError('Orders are unavailable; retry with the same Idempotency-Key', error);
  });
  await handOff(orders, reservation, correlationId).catch(async (error: unknown) => {
    await givePassBack(reservation);
    throw error;
  });
  const { orderId } = reservation.record;
  const status = reservation.replayed && !reservation.pending ? await writtenStatus(orderId) : 'pending';
  return { orderId, status, remaining: reservation.remaining };
}
