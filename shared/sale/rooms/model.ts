import { itemKeys } from '../orders/model';
import * as z from '../../platform/zod';

/** What MySQL's TIMESTAMP holds elsewhere in the API; a room opens within the same range. */
const Instant = z
  .pipe(
    z.iso.datetime({ offset: true }),
    z.transform((s) => Date.parse(s)),
  )
  .check(z.refine((ms) => ms >= Date.UTC(1970, 0, 2) && ms < Date.UTC(2038, 0, 1), 'must fall between 1970-01-02 and 2037-12-31'));

/** An admin's waiting room for one item: when it opens, how fast it admits, how long a pass and a turn's grace last. */
export const RoomInput = z.strictObject({
  opensAt: Instant,
  admitPerSecond: z.number().check(z.minimum(0.01), z.maximum(10_000)).register(z.globalRegistry, {
    description: "Admissions a second; a room that is not paused admits at most the order route's throttle a second (the deployment's; 400 past it)",
  }),
  passSeconds: z.int().check(z.minimum(10), z.maximum(3_600)),
  /** At least 5 s: a waiter polls near its turn every third of it, and no faster than once a second. */
  graceSeconds: z.int().check(z.minimum(5), z.maximum(3_600)),
  /** A paused room admits nobody more until it is resumed (the same PUT with false). */
  paused: z._default(z.boolean(), false),
  /** The status reads per second the room's refresh intervals aim at, all its waiters together. */
  statusReadsPerSecond: z._default(z.int().check(z.minimum(10), z.maximum(100_000)), 1_000),
});
export type RoomInput = z.output<typeof RoomInput>;

/** A pass's token: what the claim answers and an order brings in its Waiting-Room-Pass header. */
export const PassToken = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_-]{22}$/, 'not a pass token'))
  .register(z.globalRegistry, {
    description: 'The token of your waiting-room pass (POST /items/{itemId}/queue/pass), on an item with a waiting room',
  });

/** Every key of an item's room carries the item's own tag {item:<id>}, so one script sees all of them and, when the item is not split, its sale. */
export const roomKeys = (itemId: string) => {
  const tag = `{item:${itemId}}`;
  return {
    room: `${tag}:room`,
    queue: `${tag}:queue`,
    passes: `${tag}:passes`,
    turns: `${tag}:turns`,
    claimed: `${tag}:claimed`,
    sale: itemKeys(itemId).state,
    waiters: `${tag}:waiters`,
    outbox: itemKeys(itemId).outbox,
  };
};
