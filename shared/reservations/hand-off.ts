import type { ReservationKind } from './kind';
import * as z from '../platform/zod';

/**
 * The hand-off message: what the reservation queue carries from the reserving functions (and the
 * relay) to the writer. Encoded, described and decoded here, and nowhere else.
 */

/** One reservation on its way to the writer: the kind's name (the message field) and its record. */
export interface HandOff {
  kind: string;
  record: unknown;
  /** The reservation's id and the request that made it (shared/platform/http/correlation.ts); a relayed reservation has none. */
  correlation?: { id: string; correlationId: string };
}

/**
 * The hand-off's schema version, carried in a message attribute (VERSION_ATTRIBUTE) so a writer
 * that knows no versions reads the body as before. 1: a message with no such attribute, as every
 * release before versions sent; 2: the same body, saying its version. A release whose body changes
 * takes the next number, and its writer reads it and the one before (READABLE_HAND_OFF_VERSIONS):
 * during a gradual deploy old and new senders fill the one queue old and new writers drain.
 */
export const HAND_OFF_VERSION = 2;
export const VERSION_ATTRIBUTE = 'HandOffVersion';
/** What this release's writer reads: its own version and the one before it. Anything else it parks (see reservationWriter). */
export const READABLE_HAND_OFF_VERSIONS: readonly number[] = [HAND_OFF_VERSION - 1, HAND_OFF_VERSION];

/** A message's version from its attribute's value: absent, 1 (sent before versions); not a whole number, undefined. */
export function handOffVersionOf(attribute: string | undefined): number | undefined {
  if (attribute === undefined) return 1;
  return /^[1-9]\d{0,5}$/.test(attribute) ? Number(attribute) : undefined;
}

/** The message attribute naming the request of each reservation a message carries: {"<reservation id>":"<correlation id>"}. */
export const CORRELATION_ATTRIBUTE = 'CorrelationIds';

/** The correlation ids of a message's reservations, keyed by reservation id: the message attribute's value. */
export function encodeCorrelationIds(handOffs: HandOff[]): string | undefined {
  // Written as text: an object keyed by ids never seen before gives V8 a new hidden class per key,
  // which made this the costliest function of the product's own code on the orders' hot path.
  const pairs: string[] = [];
  for (const { correlation } of handOffs) if (correlation) pairs.push(`${JSON.stringify(correlation.id)}:${JSON.stringify(correlation.correlationId)}`);
  return pairs.length ? `{${pairs.join(',')}}` : undefined;
}

/** A message body: the reservations of one moment, grouped by kind, e.g. {"orders":[…],"coupons":[…]}. */
export function encodeHandOffs(handOffs: HandOff[]): string {
  const byKind: Record<string, unknown[]> = {};
  for (const { kind, record } of handOffs) (byKind[kind] ??= []).push(record);
  return JSON.stringify(byKind);
}

/**
 * The schema of one message on the reservation queue, for the kinds given: the reservations made in
 * the same moment, of any kind, travel together to the writer, e.g. {"orders":[…],"coupons":[…]},
 * at most 100 of a kind and at least one in all.
 */
export function handOffMessage(kinds: readonly ReservationKind<unknown>[]) {
  const fields = Object.fromEntries(kinds.map((kind) => [kind.name, z._default(z.array(kind.record).check(z.maxLength(100)), [])]));
  return z.strictObject(fields).check(z.refine((m) => Object.values(m).some((records) => records.length > 0), 'a message carries at least one reservation'));
}
export type HandOffMessage = ReturnType<typeof handOffMessage>;

/** A message body, parsed against the schema: a body that is not JSON fails as one that does not fit. */
export function decodeHandOffs(message: HandOffMessage, body: string): ReturnType<HandOffMessage['safeParse']> {
  try {
    return message.safeParse(JSON.parse(body));
  } catch {
    return message.safeParse(undefined);
  }
}

/**
 * Reservation id -> the id of the request that made it, added to `into` from the message
 * attribute's value; nothing when it is absent or garbled. A Map, not an object: keys no object
 * has had before each give V8 a hidden class.
 */
export function decodeCorrelationIds(value: string | undefined, into = new Map<string, string>()): Map<string, string> {
  try {
    const ids: unknown = JSON.parse(value ?? '{}');
    if (ids && typeof ids === 'object')
      for (const [id, correlationId] of Object.entries(ids)) if (typeof correlationId === 'string') into.set(id, correlationId);
  } catch {
    // Garbled: the reservations are stored all the same, their log entries without correlation ids.
  }
  return into;
}
