import { randomInt } from 'node:crypto';
import { db } from '../platform/clients/mysql';
import { redis } from '../platform/clients/redis';
import { inTransaction } from '../platform/db/transaction';
import { AppError } from '../platform/errors';
import { logger, loggableError } from '../platform/logger';
import { count, level, timing } from '../platform/metrics';
import { randomId } from '../platform/random-id';
import { isRefusal, scriptError } from '../platform/redis/script-codes';
import { luaScript } from '../platform/redis/script';
import { bucketOf } from '../reservations/buckets';
import { itemBuckets, itemKeys } from '../orders/model';
import { bucketCount, remainingStock } from '../orders/sale';
import { roomKeys, type RoomInput } from './model';
import { READING_FIELDS, standingOf, type RoomReading, type Standing } from './standing';
import { forgetRoom, storedRoom, storeRoom } from './stored';

type RoomKeys = [room: string, queue: string, passes: string, turns: string, claimed: string, sale: string, waiters: string, outbox: string];
type Arg = string | number;

const putScript = luaScript<[string], Arg[]>(new URL('./lua/room-put-1.lua', import.meta.url));
const joinScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/queue-join-8.lua', import.meta.url));
const statusScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/queue-status-8.lua', import.meta.url));
const advanceScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/room-advance-8.lua', import.meta.url));
const claimScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/pass-claim-8.lua', import.meta.url));
const placeScript = luaScript<[string], Arg[]>(new URL('./lua/pass-place-1.lua', import.meta.url));
const restoreScript = luaScript<[room: string, queue: string, turns: string, claimed: string, waiters: string], Arg[]>(new URL('./lua/room-restore-5.lua', import.meta.url));
const markScript = luaScript<[state: string], []>(new URL('./lua/room-mark-1.lua', import.meta.url));

/** Pre-queue ranks are drawn below this; ranks from the opening on come after it (queue-join-8.lua). */
const PRE_QUEUE_RANKS = 2 ** 40;
/** A room is advanced (room-advance-8.lua) at most this often, by the status reads that find it due: a bounded write, whatever the crowd. */
export const ADVANCE_EVERY_MS = 1_000;

const keysOf = (itemId: string): RoomKeys => {
  const k = roomKeys(itemId);
  return [k.room, k.queue, k.passes, k.turns, k.claimed, k.sale, k.waiters, k.outbox];
};

/**
 * More of the sale's reservations than this waiting unwritten (in the outbox: the writer is behind
 * or down) and the room admits nobody more until it catches up: a flood of orders MySQL cannot
 * store yet is not made bigger.
 */
export const MAX_UNWRITTEN = 1_000;

/**
 * After a hand-off of the sale's failed (an order told 503: its queue is failing) the room admits
 * nobody more for this long; each further failure starts it again, so admission resumes this long
 * after the last one. Those admitted already keep their passes and retry with them.
 */
export const HOLD_AFTER_FAILED_HAND_OFF_MS = 5_000;
const HOLDS = `${MAX_UNWRITTEN}|${HOLD_AFTER_FAILED_HAND_OFF_MS}`;

const notOnSale = () => new AppError('NOT_ON_SALE', 'This item is not on sale');

/**
 * The sale as a room script takes it, with when its admission holds: '' for an item not split,
 * whose script reads its units, limit, outbox and last failed hand-off in the same slot,
 * atomically; a split item's are summed from its buckets here (remainingStock: their stock and the
 * units moving between them; their outboxes; the latest failure of any), a moment before the
 * script runs.
 */
async function saleOf(itemId: string): Promise<[Arg, Arg]> {
  const buckets = await bucketCount(itemId);
  if (buckets === 1) return ['', HOLDS];
  const all = itemBuckets(itemId, buckets);
  const [units, limit, unwritten, failures] = await Promise.all([
    remainingStock(itemId),
    redis().hget(all[0]!.state, 'limit'),
    Promise.all(all.map((keys) => redis().hlen(keys.outbox))),
    Promise.all(all.map((keys) => redis().hget(keys.state, 'handOffFailedAt'))),
  ]);
  if (units === undefined) throw notOnSale();
  const lastFailure = Math.max(0, ...failures.map(Number));
  return [`${units}|${limit ?? 1}|${unwritten.reduce((sum, n) => sum + n, 0)}|${lastFailure}`, HOLDS];
}

function refused(reply: unknown): void {
  if (isRefusal(reply)) throw scriptError(reply);
}

const settingsOf = (input: RoomInput): Arg[] => [input.opensAt, input.admitPerSecond, input.passSeconds * 1000, input.graceSeconds * 1000, input.paused ? 1 : 0, input.statusReadsPerSecond];

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
  const deleted = await Promise.all([redis().del(k.room, k.queue, k.passes, k.turns, k.claimed, k.waiters), ...(buckets.length > 1 ? buckets.map((keys) => redis().del(keys.passes)) : [])]);
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

/** Whether the item has a room in Redis, where its joins and reads look (one EXISTS): what its waiting page asks first. */
export async function hasRoom(itemId: string): Promise<boolean> {
  return (await redis().exists(roomKeys(itemId).room)) === 1;
}

/** Joins the buyer to the room once; a second join answers the same place. */
export async function joinQueue(itemId: string, userId: number, now = Date.now()): Promise<{ position: number; joined: boolean }> {
  const reply = await joinScript.run(redis(), keysOf(itemId), [now, ...(await saleOf(itemId)), userId, randomInt(0, PRE_QUEUE_RANKS)]);
  refused(reply);
  const [ordinal, already] = reply as [number, number];
  if (!already) count('room.joined');
  return { position: ordinal + 1, joined: !already };
}

/** When this instance last asked a room to advance, by item: its status reads ask at most once per ADVANCE_EVERY_MS. */
const advanced = new Map<string, number>();

/** Advances the room if it is due; what moved is counted. A failure is logged: the next read tries again. */
async function advanceIfDue(itemId: string, ticked: number, now: number): Promise<void> {
  if (now - ticked < ADVANCE_EVERY_MS || now - (advanced.get(itemId) ?? 0) < ADVANCE_EVERY_MS) return;
  advanced.set(itemId, now);
  try {
    await advanceRoom(itemId, now);
  } catch (error) {
    logger.warn('Waiting room not advanced', { itemId, error: loggableError(error) });
  }
}

/** Moves a room on to now: places lost, expired passes, the frontier stored (room-advance-8.lua); counted. */
export async function advanceRoom(itemId: string, now = Date.now(), everyMs = ADVANCE_EVERY_MS): Promise<void> {
  const reply = await advanceScript.run(redis(), keysOf(itemId), [now, ...(await saleOf(itemId)), everyMs]);
  refused(reply);
  const [lost, expired, admitted, waiting, oldest] = (reply as number[]).map(Number) as [number, number, number, number, number];
  countMoves(lost, expired, admitted);
  level('room.waiting', waiting);
  if (oldest > 0) timing('room.oldestWait', oldest);
}

function countMoves(lost: number, expired: number, admitted: number): void {
  if (lost) count('room.lostPlaces', lost);
  if (expired) count('room.expiredPasses', expired);
  if (admitted) count('room.admitted', admitted);
}

/** The reading of one waiter's place (queue-status-8.lua), which writes nothing. */
export async function readRoom(itemId: string, userId: number, now = Date.now()): Promise<RoomReading> {
  const reply = await statusScript.run(redis(), keysOf(itemId), [now, ...(await saleOf(itemId)), userId]);
  refused(reply);
  const values = reply as (number | string)[];
  const reading = Object.fromEntries(READING_FIELDS.map((field, i) => [field, field === 'record' ? String(values[i]) : Number(values[i])]));
  return { ...reading, now, paused: reading.paused === 1, live: reading.live === 1, held: reading.held === 1 } as RoomReading;
}

/** A waiter's standing; the read that finds the room due to advance asks it to (at most once a second per room and instance). */
export async function queueStatus(itemId: string, userId: number, now = Date.now()): Promise<Standing & { opensAt: number }> {
  const reading = await readRoom(itemId, userId, now);
  await advanceIfDue(itemId, reading.ticked, now);
  return { ...standingOf(reading), opensAt: reading.opens };
}

export interface Pass {
  token: string;
  expiresAt: number;
}

/**
 * Issues the admitted buyer's pass (pass-claim-8.lua), once: a retry answers the same pass. On a
 * split item the pass is then copied into the buyer's own bucket, where its reservation runs; a
 * claim whose copy failed is retried by the client and copies the same pass again, but only while
 * the item's slot still holds it: a pass used (removed from both) or expired is not put back.
 */
export async function claimPass(itemId: string, userId: number, now = Date.now()): Promise<Pass> {
  const reply = await claimScript.run(redis(), keysOf(itemId), [now, ...(await saleOf(itemId)), userId, randomId(16), ADVANCE_EVERY_MS]);
  refused(reply);
  const [token, expiresAt, , again, lost, expired, admitted, waited] = reply as [string, number, number, number, number, number, number, number];
  if (!again) {
    count('room.claimed');
    timing('room.waited', Number(waited));
    countMoves(Number(lost), Number(expired), Number(admitted));
  }
  const buckets = await bucketCount(itemId);
  const member = `${userId}:${token}`;
  if (buckets > 1 && (!again || (await redis().zscore(roomKeys(itemId).passes, member)) !== null)) {
    await placeScript.run(redis(), [itemKeys(itemId, bucketOf(userId, buckets), buckets).passes], [now, member, expiresAt]);
  }
  return { token, expiresAt: Number(expiresAt) };
}
