/**
 * An admin's changes to an item's waiting room, and the repair's: what holds the room's MySQL row
 * as well as its Redis keys. Apart from the buyers' steps (rooms.ts), so that a function that only
 * joins, reads or claims does not carry the MySQL driver.
 */
import { db } from '../../platform/clients/mysql';
import { orderRouteEnv, readEnv } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { once } from '../../platform/once';
import { redis } from '../../platform/clients/redis';
import { inTransaction } from '../../platform/db/transaction';
import { luaScript } from '../../platform/redis/script';
import { itemBuckets } from '../orders/model';
import { bucketCount, remainingStock } from '../orders/sale';
import { roomKeys, type RoomInput } from './model';
import { notOnSale } from '../orders/codes';
import { refused, type Arg } from './rooms';
import { forgetRoom, storedRoom, storeRoom } from './stored';

const orderRoute = once(() => readEnv(orderRouteEnv));

const putScript = luaScript<[string], Arg[]>(new URL('./lua/room-put-1.lua', import.meta.url));
const restoreScript = luaScript<[room: string, queue: string, turns: string, claimed: string, waiters: string], Arg[]>(
  new URL('./lua/room-restore-5.lua', import.meta.url),
);
const markScript = luaScript<[state: string], []>(new URL('./lua/room-mark-1.lua', import.meta.url));

const settingsOf = (input: RoomInput): Arg[] => [
  input.opensAt,
  input.admitPerSecond,
  input.passSeconds * 1000,
  input.graceSeconds * 1000,
  input.paused ? 1 : 0,
  input.statusReadsPerSecond,
];

/*
 * PUT, DELETE and the repair are serialised on the room's MySQL row: each takes it (a write, or a
 * locking read; a gap lock where there is none) and holds it across its Redis steps, committing
 * after them. So none of them interleaves with another's Redis steps: a DELETE that followed a PUT's
 * commit cannot remove the marks before the PUT lays them (leaving a mark with no room, every order
 * refused), and a repair that read the row cannot put back a room a DELETE removed. A lock row in
 * MySQL rather than a generation checked by every script: the scripts of the order path stay as
 * they are, and these are an admin's or the schedule's, rare and short.
 */

/**
 * Sets an item's room, or pauses, resumes or re-rates it while it runs (room-put-1.lua), then marks
 * the sale hash of every bucket: the reserving script takes only orders with a pass from then on.
 * MySQL's row is written first and committed once Redis took the room and its marks, so an
 * acknowledged room outlives Redis losing it (repairRoom puts it back), and one Redis refused
 * (CONFLICT) is not kept.
 */
export async function putRoom(itemId: string, input: RoomInput, now = Date.now()): Promise<void> {
  const { ORDER_ROUTE_RATE_LIMIT } = orderRoute();
  // A pause is the brake, taken whatever rate a room kept from before; resuming is checked.
  if (!input.paused && input.admitPerSecond > ORDER_ROUTE_RATE_LIMIT) {
    const message = `must be at most ${ORDER_ROUTE_RATE_LIMIT}, the order route's throttle a second: pass holders admitted faster meet API Gateway's 429s`;
    throw new AppError('VALIDATION_FAILED', "The request's body is not valid", [{ path: 'body.admitPerSecond', message }]);
  }
  const buckets = await bucketCount(itemId, true);
  if ((await remainingStock(itemId)) === undefined) throw notOnSale();
  await inTransaction(db(), async (conn) => {
    await storeRoom(conn, itemId, input);
    refused(await putScript.run(redis(), [roomKeys(itemId).room], [now, ...settingsOf(input)]));
    // Only on a state Redis has: a hash holding nothing but the mark would read as a sale (room-mark-1.lua).
    await Promise.all(itemBuckets(itemId, buckets).map((keys) => markScript.run(redis(), [keys.state], [])));
  });
}

/**
 * Mends what Redis lost of an item's room, from MySQL's row, read locked (the repair's step, after
 * it rebuilt any lost state): the room hash, started over (room-restore-5.lua: its waiters join
 * again), the mark on every bucket's state Redis has, and the passes of the buyers given (those
 * MySQL says hold their limit): a failover that lost an order's writes after the writer stored it
 * undid the removal of its pass too, which could buy nothing more but would count outstanding
 * against the units left. Where MySQL has no room, whatever Redis holds of one (a mark left alone
 * refuses every order) is cleared. True when anything changed.
 */
export async function repairRoom(itemId: string, buckets: number, spent: number[], now = Date.now()): Promise<boolean> {
  return inTransaction(db(), async (conn) => {
    const settings = await storedRoom(conn, itemId, { lock: true });
    if (!settings) return (await clearRoom(itemId, itemBuckets(itemId, buckets))) > 0;
    const k = roomKeys(itemId);
    const restored = await restoreScript.run(redis(), [k.room, k.queue, k.turns, k.claimed, k.waiters], [now, ...settingsOf(settings)]);
    const marked = await Promise.all(itemBuckets(itemId, buckets).map((keys) => markScript.run(redis(), [keys.state], [])));
    const dropped = await dropPasses(itemId, buckets, new Set(spent));
    return restored === 1 || marked.some((m) => m === 1) || dropped > 0;
  });
}

/** Removes what Redis holds of a room: the marks first, so orders need no pass, then its keys and a split item's pass copies. How many keys and marks went. */
async function clearRoom(itemId: string, buckets: ReturnType<typeof itemBuckets>): Promise<number> {
  const unmarked = await Promise.all(buckets.map((keys) => redis().hdel(keys.state, 'room')));
  const k = roomKeys(itemId);
  const deleted = await Promise.all([
    redis().del(k.room, k.queue, k.passes, k.turns, k.claimed, k.waiters),
    ...(buckets.length > 1 ? buckets.map((keys) => redis().del(keys.passes)) : []),
  ]);
  return [...unmarked, ...deleted].reduce((sum, n) => sum + n, 0);
}

/** Drops the passes of the buyers given: in the item's slot, and the copies in a split item's buckets. Exact members only, so a race with a claim drops nothing else. */
async function dropPasses(itemId: string, buckets: number, buyers: Set<number>): Promise<number> {
  if (buyers.size === 0) return 0;
  const keys = [roomKeys(itemId).passes, ...(buckets > 1 ? itemBuckets(itemId, buckets).map((b) => b.passes) : [])];
  const dropped = await Promise.all(
    keys.map(async (key) => {
      const theirs = (await redis().zrange(key, '0', '-1')).filter((member) => buyers.has(Number(member.split(':')[0])));
      return theirs.length ? redis().zrem(key, ...theirs) : 0;
    }),
  );
  return dropped.reduce((sum, n) => sum + n, 0);
}

/**
 * Removes an item's room: MySQL's row first, so no repair puts it back, its lock held until Redis's
 * part is done; then the mark on every bucket's state, so its orders need no pass from then on; then
 * the room's keys and the passes copied into a split item's buckets (a mark left without its room
 * would refuse every order, with no pass left to claim). A retry after a failure half-way finishes
 * the rest. False when neither MySQL nor Redis had a room.
 */
export async function removeRoom(itemId: string): Promise<boolean> {
  const buckets = itemBuckets(itemId, await bucketCount(itemId, true));
  return inTransaction(db(), async (conn) => {
    const forgotten = await forgetRoom(conn, itemId);
    const cleared = await clearRoom(itemId, buckets);
    return forgotten || cleared > 0;
  });
}
