/**
 * Where a waiter stands, from one reading: the odds, the wait, and the refresh intervals that keep a
 * room's status reads near its budget (pure arithmetic, no Redis).
 */
import { describe, expect, it } from 'vitest';
import { oddsOfUnit, standingOf, type RoomReading } from '../../../shared/sale/rooms/standing';

const NOW = Date.UTC(2030, 0, 1, 12);

/** A room open for a minute at 50 a second, 100,000 waiting, 2,000 units, nobody admitted yet but the rate's. */
const reading = (changes: Partial<RoomReading> = {}): RoomReading => ({
  now: NOW,
  ordinal: 0,
  frontier: 0,
  served: 0,
  cap: 2_000,
  outstanding: 0,
  units: 2_000,
  queued: 100_000,
  issued: 0,
  lost: 0,
  expired: 0,
  rate: 50,
  paused: false,
  opens: NOW - 60_000,
  graceMs: 30_000,
  passMs: 120_000,
  turn: -1,
  swept: 0,
  record: String(NOW - 120_000),
  live: false,
  ticked: NOW,
  budget: 1_000,
  limit: 1,
  joined: 100_000,
  held: false,
  ...changes,
});

describe('the odds of a unit', () => {
  it('is certain while those ahead cannot use up the units, nil when they must, and in between by the conversion so far', () => {
    expect(oddsOfUnit(10, 9, 1)).toBe(1);
    expect(oddsOfUnit(10, 10, 1)).toBe(0);
    expect(oddsOfUnit(0, 0, 1)).toBe(0);
    // 20 ahead, half of them buy: 10 expected for 10 units; fewer than 10 buy a bit less than half the time.
    expect(oddsOfUnit(10, 20, 0.5)).toBeCloseTo(0.41, 1);
    expect(oddsOfUnit(10, 100, 0.5)).toBe(0);
  });

  it('counts the places lost and the passes that expired into the conversion', () => {
    // 100 admitted so far: 50 bought, 50 let their pass expire; 1,000 ahead of a waiter, 520 units left.
    const even = standingOf(reading({ ordinal: 1_100, frontier: 100, served: 100, issued: 100, expired: 50, units: 520 }));
    const allBought = standingOf(reading({ ordinal: 1_100, frontier: 100, served: 100, issued: 100, expired: 0, units: 520 }));

    expect(even.odds).toBeGreaterThan(0.7);
    expect(even.odds).toBeLessThan(0.9);
    expect(allBought.odds).toBe(0);
  });
});

describe('the wait', () => {
  it('is the rate’s, or the cap’s when passes hold every unit left', () => {
    const byRate = standingOf(reading({ ordinal: 3_499, served: 3_000, frontier: 2_000, cap: 4_000 }));
    const byCap = standingOf(reading({ ordinal: 2_099, served: 3_000, frontier: 2_000, cap: 2_000, outstanding: 50, issued: 2_000 }));
    const paused = standingOf(reading({ ordinal: 3_499, paused: true }));

    expect(byRate.estimatedWaitSeconds).toBe(10);
    // 100 places to free, 50 passes outstanding: two rounds of half a pass's lifetime.
    expect(byCap.estimatedWaitSeconds).toBe(120);
    expect(paused.estimatedWaitSeconds).toBeNull();
  });

  it('counts the waiters admitted but not yet claiming among what frees places, when no pass is outstanding', () => {
    // 10 units left and 10 admitted who have not claimed: the cap holds the frontier; a waiter 6 past it.
    const hangs = standingOf(reading({ ordinal: 2_005, served: 3_000, frontier: 2_000, cap: 2_000, issued: 1_990, units: 10 }));

    // 6 places to free, 10 waiters each freeing theirs within the grace (30 s): one round of half of it.
    expect(hangs.estimatedWaitSeconds).toBe(15);
  });
});

describe('the refresh interval', () => {
  it('keeps a room of 100,000 near its budget of status reads a second, and polls fast enough near the turn to keep it', () => {
    // Every waiter of the room, from the head of the queue to its tail.
    const room = reading({ served: 2_000, frontier: 2_000, issued: 2_000, units: 100_000, cap: 102_000 });
    let readsPerSecond = 0;
    let nearest = Infinity;
    for (let ordinal = room.frontier; ordinal < room.queued; ordinal++) {
      const s = standingOf({ ...room, ordinal });
      readsPerSecond += 1 / s.refreshSeconds;
      if (s.estimatedWaitSeconds !== null && s.estimatedWaitSeconds <= 2 * (room.graceMs / 1000))
        nearest = Math.min(nearest, room.graceMs / 1000 / s.refreshSeconds);
    }

    expect(readsPerSecond).toBeLessThan(room.budget * 1.1);
    // Near its turn a waiter polls at least three times within the grace.
    expect(nearest).toBeGreaterThanOrEqual(3);
  });

  it('polls at a third of the grace within two graces’ worth of places past the frontier, whatever the estimate', () => {
    // Paused, so no estimate: their turn can still come at once when the pause ends.
    const paused = standingOf(reading({ ordinal: 2_100, served: 2_000, frontier: 2_000, issued: 2_000, paused: true }));
    const farther = standingOf(reading({ ordinal: 2_000 + 50 * 2 * 30, served: 2_000, frontier: 2_000, issued: 2_000, paused: true }));

    expect(paused.refreshSeconds).toBe(10);
    expect(farther.refreshSeconds).toBeGreaterThan(10);
  });
});
