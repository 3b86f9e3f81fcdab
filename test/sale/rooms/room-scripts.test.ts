/**
 * The waiting room's scripts on real Redis, each test on an item of its own: ranks, the read that
 * writes nothing, admission by rate and by the cap, pause and re-rate, the claim window, passes
 * checked by the reserving script, closing at sold out and reopening. Time is the argument each
 * call takes, so nothing here waits on the clock.
 */
import { describe, expect, it } from 'vitest';
import { redis } from '../../../shared/platform/clients/redis';
import { itemKeys } from '../../../shared/sale/orders/model';
import { openSale, release, remainingStock, reserve } from '../../../shared/sale/orders/sale';
import { roomKeys } from '../../../shared/sale/rooms/model';
import { putRoom } from '../../../shared/sale/rooms/admin';
import { advanceRoom, claimPass, HOLD_AFTER_FAILED_HAND_OFF_MS, joinQueue, MAX_UNWRITTEN, readRoom } from '../../../shared/sale/rooms/rooms';
import { standingOf } from '../../../shared/sale/rooms/standing';
import { LOCAL_SOURCE } from '../../../infra/twin/load-test-sources';
import { uniqueItemId } from '../../support/orders';

const T = Date.UTC(2030, 0, 1);
const SECOND = 1_000;

interface Room {
  stock?: number;
  limit?: number;
  buckets?: number;
  rate?: number;
  passSeconds?: number;
  graceSeconds?: number;
}

async function roomOf({ stock = 100, limit = 1, buckets = 1, rate = 10, passSeconds = 60, graceSeconds = 30 }: Room = {}) {
  const itemId = uniqueItemId('room');
  await openSale(itemId, stock, limit, buckets);
  const settings = { opensAt: T, admitPerSecond: rate, passSeconds, graceSeconds, paused: false, statusReadsPerSecond: 1_000 };
  await putRoom(itemId, settings, T - 60 * SECOND);
  return { itemId, settings };
}

/** Joins users 1..n in order, at `at`. */
async function joinAll(itemId: string, users: number[], at: number) {
  for (const user of users) await joinQueue(itemId, user, at);
}

const standing = async (itemId: string, user: number, now: number) => standingOf(await readRoom(itemId, user, now));

let key = 0;
const order = (itemId: string, userId: number, pass: string | undefined, now: number, quantity = 1) =>
  reserve({ itemId, userId, quantity, idempotencyKey: `k${++key}`, source: LOCAL_SOURCE, pass }, now);

/** Every key of the room and of its sale with its whole content, to hold a read to writing nothing. */
async function snapshot(itemId: string) {
  const keys = [...Object.values(roomKeys(itemId)), itemKeys(itemId).buyers, itemKeys(itemId).outbox];
  return Promise.all(keys.map(async (k) => [k, await redis().dump(k)]));
}

const users = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('joining', () => {
  it('draws pre-queue places at random, puts every later joiner after them in arrival order, and keeps one place per account', async () => {
    // Prepare
    const { itemId } = await roomOf();

    // Act: 200 join before the opening, in order of their ids; 20 after it, in order too, one of them twice.
    await joinAll(itemId, users(1, 200), T - SECOND);
    await joinAll(itemId, users(201, 220), T + SECOND);
    const again = await joinQueue(itemId, 205, T + 2 * SECOND);

    // Assess
    const order = (await redis().zrange(roomKeys(itemId).queue, '0', '-1')).map(Number);
    const early = order.slice(0, 200);
    expect(new Set(early)).toEqual(new Set(users(1, 200)));
    expect(early).not.toEqual(users(1, 200));
    // Arriving early gives no edge: the first 100 to arrive hold about half of the first 100 places.
    const firstArrivals = early.slice(0, 100).filter((u) => u <= 100).length;
    expect(firstArrivals).toBeGreaterThan(30);
    expect(firstArrivals).toBeLessThan(70);
    expect(order.slice(200)).toEqual(users(201, 220));
    expect(again).toEqual({ position: 205, joined: false });
  });
});

describe('ranks at the opening', () => {
  it('ranks a join stamped before the opening, but run after a read saw the opening, after everyone: nobody admitted reads waiting again, no ordinal moves', async () => {
    // Prepare: twenty in the shuffled pre-queue; at the opening's first second, reads tell ten of them they are admitted.
    const { itemId } = await roomOf({ rate: 10 });
    await joinAll(itemId, users(1, 20), T - SECOND);
    const first = await Promise.all(users(1, 20).map((user) => standing(itemId, user, T + SECOND)));

    // Act: twenty joins whose callers stamped them before the opening (a slow request of the
    // opening burst) run now, between reads, each with its caller's random pre-queue rank.
    await Promise.all(
      users(21, 40).map((user, i) =>
        i % 2 ? joinQueue(itemId, user, T - 1) : standing(itemId, (i % 20) + 1, T + SECOND).then(() => joinQueue(itemId, user, T - 1)),
      ),
    );
    const again = await Promise.all(users(1, 20).map((user) => standing(itemId, user, T + SECOND)));

    // Assess
    expect(first.filter((s) => s.state === 'admitted')).toHaveLength(10);
    expect(again.map((s) => [s.state, s.position])).toEqual(first.map((s) => [s.state, s.position]));
    const order = (await redis().zrange(roomKeys(itemId).queue, '0', '-1')).map(Number);
    expect(order.slice(20).sort((a, b) => a - b)).toEqual(users(21, 40));
  });

  it('still shuffles joins before the opening when nothing has seen it: the record of the opening is the first script’s at or after it', async () => {
    // Prepare
    const { itemId } = await roomOf({ rate: 10 });

    // Act: before the opening, reads and joins leave the room unopened.
    await joinAll(itemId, users(1, 100), T - SECOND);
    await standing(itemId, 1, T - 1);
    const unopened = await redis().hget(roomKeys(itemId).room, 'opened');
    await standing(itemId, 1, T);

    // Assess
    const early = (await redis().zrange(roomKeys(itemId).queue, '0', '-1')).map(Number);
    expect(unopened).toBeNull();
    expect(await redis().hget(roomKeys(itemId).room, 'opened')).toBe('1');
    expect(early).not.toEqual(users(1, 100));
  });
});

describe('admission', () => {
  it('admits by the rate since the opening, in rank order, and a status read writes nothing', async () => {
    // Prepare
    const { itemId } = await roomOf({ rate: 10 });
    await joinAll(itemId, users(1, 30), T + 1);
    const before = await snapshot(itemId);

    // Act
    const atOpening = await standing(itemId, 1, T + 1);
    const tenth = await standing(itemId, 10, T + SECOND);
    const eleventh = await standing(itemId, 11, T + SECOND);

    // Assess
    expect(atOpening.state).toBe('waiting');
    expect(tenth).toMatchObject({ state: 'admitted', position: 10, odds: 1 });
    expect(eleventh).toMatchObject({ state: 'waiting', position: 11, ahead: 10, estimatedWaitSeconds: 1 });
    expect(await snapshot(itemId)).toEqual(before);
  });

  it('admits no more than the units left allow, and a pass that expires gives its unit back to the next in line', async () => {
    // Prepare: 3 units, a fast rate: the cap, not the rate, holds the fourth back.
    const { itemId } = await roomOf({ stock: 3, rate: 100, passSeconds: 10 });
    await joinAll(itemId, users(1, 5), T - SECOND);
    const ranked = (await redis().zrange(roomKeys(itemId).queue, '0', '-1')).map(Number);
    const passes = [];
    for (const user of ranked.slice(0, 3)) passes.push(await claimPass(itemId, user, T + 5 * SECOND));

    // Act
    await order(itemId, ranked[0]!, passes[0]!.token, T + 6 * SECOND);
    await order(itemId, ranked[1]!, passes[1]!.token, T + 6 * SECOND);
    const whileHeld = await standing(itemId, ranked[3]!, T + 7 * SECOND);
    const reading = await readRoom(itemId, ranked[3]!, T + 7 * SECOND);
    const afterExpiry = await standing(itemId, ranked[3]!, T + 16 * SECOND);
    const fifth = await standing(itemId, ranked[4]!, T + 16 * SECOND);

    // Assess
    expect(whileHeld.state).toBe('waiting');
    expect(reading.outstanding).toBeLessThanOrEqual(reading.units);
    expect(reading).toMatchObject({ outstanding: 1, units: 1, frontier: 3 });
    await expect(claimPass(itemId, ranked[3]!, T + 7 * SECOND)).rejects.toMatchObject({ code: 'NOT_ADMITTED' });
    expect(afterExpiry.state).toBe('admitted');
    expect(fifth.state).toBe('waiting');
  });

  it('admits at a rate below one a second, and says the wait by it', async () => {
    // Prepare: one every two seconds.
    const { itemId } = await roomOf({ rate: 0.5 });
    await joinAll(itemId, [1, 2, 3], T + 1);

    // Act
    const first = await standing(itemId, 1, T + 2 * SECOND);
    const third = await standing(itemId, 3, T + 2 * SECOND);

    // Assess
    expect(first.state).toBe('admitted');
    expect(third).toMatchObject({ state: 'waiting', estimatedWaitSeconds: 4 });
  });

  it('freezes while paused, and counts a new rate from the moment it is set', async () => {
    // Prepare
    const { itemId, settings } = await roomOf({ stock: 1_000, rate: 10 });
    await joinAll(itemId, users(1, 200), T + 1);
    const frontier = async (now: number) => (await readRoom(itemId, 1, now)).frontier;

    // Act
    await putRoom(itemId, { ...settings, paused: true }, T + SECOND);
    const paused = await frontier(T + 5 * SECOND);
    await putRoom(itemId, { ...settings, paused: false }, T + 5 * SECOND);
    const resumed = await frontier(T + 6 * SECOND);
    await putRoom(itemId, { ...settings, admitPerSecond: 100 }, T + 6 * SECOND);
    const rerated = await frontier(T + 7 * SECOND);

    // Assess
    expect(paused).toBe(10);
    expect(resumed).toBe(20);
    expect(rerated).toBe(120);
    await expect(putRoom(itemId, { ...settings, opensAt: T + 60 * SECOND }, T + 8 * SECOND)).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});

describe('a writer behind', () => {
  it('holds admission while more reservations wait unwritten than the room allows, and resumes once they are written', async () => {
    // Prepare: 10 admitted and stored by an advance; then the outbox fills past the limit, as when the writer is down.
    const { itemId } = await roomOf({ rate: 10 });
    await joinAll(itemId, users(1, 30), T + 1);
    await advanceRoom(itemId, T + SECOND, 0);
    const outbox = itemKeys(itemId).outbox;
    await redis().hset(outbox, Object.fromEntries(Array.from({ length: MAX_UNWRITTEN + 1 }, (_, i) => [`unwritten-${i}`, '{}'])));

    // Act
    const held = await readRoom(itemId, 16, T + 2 * SECOND);
    const heldStanding = standingOf(held);
    await redis().del(outbox);
    const resumed = await standing(itemId, 16, T + 2 * SECOND);

    // Assess
    expect(held).toMatchObject({ held: true, frontier: 10 });
    expect(heldStanding).toMatchObject({ state: 'waiting', estimatedWaitSeconds: null });
    expect(resumed.state).toBe('admitted');
  });
});

describe('a checkout failing', () => {
  it('holds admission for a while after a hand-off failed (an order told 503), and resumes once that while has passed', async () => {
    // Prepare: 10 admitted and stored by an advance; then an order's hand-off fails (its queue down) at 2 s.
    const { itemId } = await roomOf({ rate: 10 });
    await joinAll(itemId, users(1, 30), T + 1);
    await advanceRoom(itemId, T + SECOND, 0);
    await redis().hset(itemKeys(itemId).state, 'handOffFailedAt', T + 2 * SECOND);

    // Act
    const held = await readRoom(itemId, 16, T + 2 * SECOND + HOLD_AFTER_FAILED_HAND_OFF_MS - 1);
    const resumed = await standing(itemId, 16, T + 2 * SECOND + HOLD_AFTER_FAILED_HAND_OFF_MS);

    // Assess
    expect(held).toMatchObject({ held: true, frontier: 10 });
    expect(standingOf(held)).toMatchObject({ state: 'waiting', estimatedWaitSeconds: null });
    expect(resumed.state).toBe('admitted');
  });
});

describe('the claim window', () => {
  it('takes the place of a waiter that claims nothing within the grace after its turn, and admits the next', async () => {
    // Prepare: 1 unit; the first in line stops polling.
    const { itemId } = await roomOf({ stock: 1, rate: 100, graceSeconds: 10 });
    await joinAll(itemId, [1, 2], T + 1);
    await advanceRoom(itemId, T + SECOND, 0);

    // Act
    const inGrace = await standing(itemId, 1, T + 10 * SECOND);
    const late = await claimPass(itemId, 1, T + 12 * SECOND).catch((error: unknown) => error);
    const next = await standing(itemId, 2, T + 12 * SECOND);
    const reading = await readRoom(itemId, 2, T + 12 * SECOND);

    // Assess
    expect(inGrace).toMatchObject({ state: 'admitted', claimBy: T + 11 * SECOND });
    expect(late).toMatchObject({ code: 'PLACE_LOST' });
    expect(next.state).toBe('admitted');
    expect(reading.lost).toBe(1);
    expect((await standing(itemId, 1, T + 12 * SECOND)).state).toBe('lost');
  });

  it('issues a pass once: a second claim answers the same pass', async () => {
    // Prepare
    const { itemId } = await roomOf();
    await joinQueue(itemId, 1, T + 1);

    // Act
    const first = await claimPass(itemId, 1, T + SECOND);
    const second = await claimPass(itemId, 1, T + 2 * SECOND);

    // Assess
    expect(second).toEqual(first);
    expect((await readRoom(itemId, 1, T + 2 * SECOND)).issued).toBe(1);
  });

  it('answers a claim after the pass expired PASS_EXPIRED, not the dead pass', async () => {
    // Prepare
    const { itemId } = await roomOf({ passSeconds: 10 });
    await joinQueue(itemId, 1, T + 1);
    const pass = await claimPass(itemId, 1, T + SECOND);

    // Act
    const live = await claimPass(itemId, 1, pass.expiresAt - 1);
    const late = claimPass(itemId, 1, pass.expiresAt);

    // Assess
    expect(live).toEqual(pass);
    await expect(late).rejects.toMatchObject({ code: 'PASS_EXPIRED', status: 410 });
  });

  it('reads before it writes: a claim whose turn has not come changes nothing, and claims advance the room at most once a second', async () => {
    // Prepare: one admitted a second after the opening, the second in line not yet.
    const { itemId } = await roomOf({ rate: 1 });
    await joinAll(itemId, users(1, 3), T + 1);
    await advanceRoom(itemId, T + SECOND, 0);
    const before = await snapshot(itemId);

    // Act
    const early = claimPass(itemId, 2, T + SECOND + 1);
    await expect(early).rejects.toMatchObject({ code: 'NOT_ADMITTED' });
    const unchanged = await snapshot(itemId);
    await claimPass(itemId, 1, T + SECOND + 2);
    const tickedWithinTheSecond = await redis().hget(roomKeys(itemId).room, 'ticked');
    await claimPass(itemId, 2, T + 2 * SECOND + 500);
    const tickedAfter = await redis().hget(roomKeys(itemId).room, 'ticked');

    // Assess
    expect(unchanged).toEqual(before);
    expect(tickedWithinTheSecond).toBe(String(T + SECOND));
    expect(tickedAfter).toBe(String(T + 2 * SECOND + 500));
  });
});

describe('passes in the reserving script', () => {
  it('takes an order only with the buyer’s own live pass, and a pass orders once', async () => {
    // Prepare
    const { itemId } = await roomOf({ passSeconds: 10 });
    await joinAll(itemId, [1, 2, 3], T + 1);
    const [one, two, three] = [await claimPass(itemId, 1, T + SECOND), await claimPass(itemId, 2, T + SECOND), await claimPass(itemId, 3, T + SECOND)];

    // Act
    const refusal = (attempt: Promise<unknown>) =>
      attempt.then(
        () => 'accepted',
        (error: unknown) => error,
      );
    const none = await refusal(order(itemId, 1, undefined, T + 2 * SECOND));
    const forged = await refusal(order(itemId, 1, 'AAAAAAAAAAAAAAAAAAAAAA', T + 2 * SECOND));
    const anothers = await refusal(order(itemId, 1, two.token, T + 2 * SECOND));
    const expired = await refusal(order(itemId, 3, three.token, T + 11 * SECOND));
    const valid = await order(itemId, 1, one.token, T + 2 * SECOND);
    const twice = await refusal(order(itemId, 1, one.token, T + 3 * SECOND));

    // Assess
    for (const refused of [none, forged, anothers, expired, twice]) expect(refused).toMatchObject({ code: 'PASS_REQUIRED' });
    expect(valid).toMatchObject({ replayed: false, remaining: 99 });
    expect(await remainingStock(itemId)).toBe(99);
    // Two and three's passes; one's was used up.
    expect((await readRoom(itemId, 1, T + 3 * SECOND)).outstanding).toBe(2);
  });

  it('checks a split item’s pass in the buyer’s own bucket', async () => {
    // Prepare
    const { itemId } = await roomOf({ stock: 30, buckets: 3 });
    await joinAll(itemId, [11, 12], T + 1);
    const pass = await claimPass(itemId, 11, T + SECOND);
    const again = await claimPass(itemId, 11, T + SECOND);

    // Act
    const without = await order(itemId, 12, undefined, T + 2 * SECOND).catch((error: unknown) => error);
    const valid = await order(itemId, 11, pass.token, T + 2 * SECOND);

    // Assess
    expect(again).toEqual(pass);
    expect(without).toMatchObject({ code: 'PASS_REQUIRED' });
    expect(valid.replayed).toBe(false);
    expect(await remainingStock(itemId)).toBe(29);
    // Used, the pass no longer counts outstanding in the item's slot: the unit and the place go together.
    expect((await readRoom(itemId, 11, T + 2 * SECOND)).outstanding).toBe(0);
    // A claim retried after the pass was used does not copy it back into the bucket.
    await claimPass(itemId, 11, T + 3 * SECOND);
    expect(await order(itemId, 11, pass.token, T + 3 * SECOND).catch((error: unknown) => error)).toMatchObject({ code: 'PASS_REQUIRED' });
  });

  it('leaves an item without a room as it was: no pass asked', async () => {
    // Prepare
    const itemId = uniqueItemId('roomless');
    await openSale(itemId, 5, 1);

    // Act
    const placed = await order(itemId, 1, undefined, T);

    // Assess
    expect(placed.remaining).toBe(4);
  });
});

describe('sold out', () => {
  it('closes when no unit is left and no pass outstanding, and reopens for those waiting when a unit comes back', async () => {
    // Prepare: 1 unit, 3 waiting; the first buys it.
    const { itemId } = await roomOf({ stock: 1, rate: 100 });
    await joinAll(itemId, [1, 2, 3], T + 1);
    const pass = await claimPass(itemId, 1, T + SECOND);
    const sold = await order(itemId, 1, pass.token, T + 2 * SECOND);

    // Act
    const closed = await standing(itemId, 2, T + 3 * SECOND);
    const lateJoin = await joinQueue(itemId, 4, T + 3 * SECOND).catch((error: unknown) => error);
    await release(sold.record);
    const reopened = await standing(itemId, 2, T + 4 * SECOND);

    // Assess
    expect(closed).toMatchObject({ soldOut: true, state: 'waiting', odds: 0 });
    expect(lateJoin).toMatchObject({ code: 'SOLD_OUT' });
    expect(reopened).toMatchObject({ soldOut: false, state: 'admitted' });
  });
});
