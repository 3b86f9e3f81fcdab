import { coupons } from '../coupons/kind';
import { orders } from '../orders/kind';
import type { ReservationKind } from '../reservations/kind';

/**
 * Every kind of reservation the pipeline carries, in the order the writer stores them. Known here,
 * above shared/reservations/, which is written against ReservationKind and handed these: orders and
 * coupons stand on reservations, so reservations cannot name them.
 */
export const kinds: readonly ReservationKind<unknown>[] = [orders, coupons];
