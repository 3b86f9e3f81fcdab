import { coupons } from '../coupons/kind';
import type { ReservationKind } from '../reservations/kind';
import { ordersBehindRooms } from './rooms/sale-kind';

/**
 * Every kind of reservation the pipeline carries, in the order the writer stores them. Known here,
 * above shared/reservations/, which is written against ReservationKind and handed these: orders and
 * coupons stand on reservations, so reservations cannot name them. Orders as the waiting rooms
 * repair them (shared/sale/rooms/sale-kind.ts).
 */
export const kinds: readonly ReservationKind<unknown>[] = [ordersBehindRooms, coupons];
