import { randomInt } from 'node:crypto';
import { redis } from '../../platform/clients/redis';
import { logger, loggableError } from '../../platform/logger';
import { count, level, timing } from '../../platform/metrics';
import { randomId } from '../../platform/random-id';
import { isRefusal, scriptError } from '../../platform/redis/script-codes';
import { notOnSale } from '../orders/codes';
import './codes';
import { luaScript } from '../../platform/redis/script';
import { bucketOf } from '../../reservations/buckets';
import { itemBuckets, itemKeys } from '../orders/model';
import { bucketCount, remainingStock } from '../orders/sale';
import { roomKeys } from './model';
import { READING_FIELDS, standingOf, type RoomReading, type Standing } from './standing';

type RoomKeys = [room: string, queue: string, passes: string, turns: string, claimed: string, sale: string, waiters: string, outbox: string];
export type Arg = string | number;

const joinScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/queue-join-8.lua', import.meta.url));
const statusScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/queue-status-8.lua', import.meta.url));
const advanceScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/room-advance-8.lua', import.meta.url));
const claimScript = luaScript<RoomKeys, Arg[]>(new URL('./lua/pass-claim-8.lua', import.meta.url));
const placeScript = luaScript<[string], Arg[]>(new URL('./lua/pass-place-1.lua', import.meta.url));

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

export function refused(reply: unknown): void {
  if (isRefusal(reply)) throw scriptError(reply);
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
