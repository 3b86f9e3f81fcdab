import { coupons } from '../coupons/kind';
import { orders } from '../orders/kind';
import { handOffMessage } from '../reservations/hand-off';
import type { ReservationKind } from '../reservations/kind';

/**
 * Every kind of reservation the pipeline carries, in the order the writer stores them. Known here,
 * above shared/reservations/, which is written against ReservationKind and handed these: orders and
 * coupons stand on reservations, so reservations cannot name them.
 */
export const kinds: readonly ReservationKind<unknown>[] = [orders, coupons];

/** One message on the reservation queue, for these kinds (see handOffMessage). */
export const HandOffMessage = handOffMessage(kinds);
