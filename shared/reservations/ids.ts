import { randomId } from '../platform/random-id';
import * as z from '../platform/zod';

/** Owners (items, deals) are named by admins; kept to characters that are safe in keys, paths and logs. */
export const OwnerId = z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 of A–Z, a–z, 0–9, _ and -'));

/**
 * `<owner>.<time><random>`: time-ordered, and it names its owner, so a reservation's pending
 * state can be found in that owner's outbox (one hash slot) from the id alone.
 */
export function newReservationId(owner: string, now = Date.now()): string {
  return `${owner}.${now.toString(36).padStart(9, '0')}${randomId(10)}`;
}

const RESERVATION_ID = /^([A-Za-z0-9_-]{1,64})\.([0-9a-z]{9}[A-Za-z0-9_-]{14})$/;
export const ReservationId = z.string().check(z.regex(RESERVATION_ID, 'not a reservation id'));

export function ownerOfReservation(id: string): string {
  return RESERVATION_ID.exec(id)![1]!;
}
