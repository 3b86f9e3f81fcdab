/**
 * Where a waiter stands, worked out from one read of the room (queue-status-8.lua): no Redis here,
 * so each figure is tested on its own and a poll storm costs the one read.
 */

/** What the status script read, in its reply's order. */
export interface RoomReading {
  now: number;
  ordinal: number;
  frontier: number;
  served: number;
  cap: number;
  outstanding: number;
  units: number;
  queued: number;
  issued: number;
  lost: number;
  expired: number;
  rate: number;
  paused: boolean;
  opens: number;
  graceMs: number;
  passMs: number;
  /** When the waiter's turn was stamped (a checkpoint); -1 when not yet. */
  turn: number;
  swept: number;
  /** <joined at>, then <joined at>|<token>|<expires at> once a pass was claimed. */
  record: string;
  /** The waiter holds a pass, unused and unexpired. */
  live: boolean;
  ticked: number;
  budget: number;
  limit: number;
  joined: number;
  /** Admission holds: more reservations wait unwritten than the room allows, or a hand-off failed a moment ago. */
  held: boolean;
}

export const READING_FIELDS = [
  'ordinal',
  'frontier',
  'served',
  'cap',
  'outstanding',
  'units',
  'queued',
  'issued',
  'lost',
  'expired',
  'rate',
  'paused',
  'opens',
  'graceMs',
  'passMs',
  'turn',
  'swept',
  'record',
  'live',
  'ticked',
  'budget',
  'limit',
  'joined',
  'held',
] as const;

/** waiting: not yet its turn; admitted: its turn, a pass to claim; holding: a pass to order with; done: the pass used or expired; lost: the turn passed unclaimed. */
export type WaiterState = 'waiting' | 'admitted' | 'holding' | 'done' | 'lost';

export interface Standing {
  state: WaiterState;
  /** 1-based place in the queue; stable from the opening on (before it, pre-queue places are still being shuffled in). */
  position: number;
  /** Waiters ahead still in contention: not yet admitted, or admitted and not yet claimed, lost or done. */
  ahead: number;
  estimatedWaitSeconds: number | null;
  /** The chance of a unit: 1 once admitted, 0 once sold out. */
  odds: number;
  soldOut: boolean;
  refreshSeconds: number;
  /** When an admitted waiter's grace ends (ms). */
  claimBy?: number;
  /** When the pass claimed expires (ms). */
  passExpiresAt?: number;
}

const MAX_REFRESH_SECONDS = 300;

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26, error below 1.5e-7). */
function normal(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const erf = 1 - t * Math.exp(-(x * x) / 2) * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * The chance that a waiter gets a unit: `contenders` ahead of it (waiting, admitted, holding a pass)
 * each buy one with the conversion seen so far, and it is served if fewer than `units` do. The
 * binomial by its normal approximation (with continuity correction); exact at the ends.
 */
export function oddsOfUnit(units: number, contenders: number, conversion: number): number {
  if (units <= 0) return 0;
  const mean = contenders * conversion;
  const variance = mean * (1 - conversion);
  if (variance < 1e-9) return mean <= units - 1 ? 1 : 0;
  return Math.round(normal((units - 0.5 - mean) / Math.sqrt(variance)) * 100) / 100;
}

/**
 * How often a waiter polls, so that the room's status reads stay near its budget per second. The
 * waiters within two graces of their turn, the admitted and the pass holders poll every third of
 * the grace (at least a second): a waiter that polls loses no turn. Within two graces is by the
 * estimate, or by place: the next `2 r g` ordinals past the frontier poll so whatever the estimate
 * says, since a pause's end, an expiry or a lost place can bring their turn sooner than any
 * estimate foresees. The others share what is left of the budget, each no later than a grace
 * before its estimated turn. With a rate `r` and a grace
 * `g`, the near ones cost about (2 r g + admitted) / (g / 3) reads a second, ~6 r: the budget is
 * meant to be well above it (a 100,000-waiter room admitting 50/s with a budget of 1,000 reads/s:
 * the near ones ~300/s, the far 99,000 every 142 s).
 */
export function refreshSeconds(reading: RoomReading, waitSeconds: number | null): { near: number; far: number; mine: number; soon: boolean } {
  const grace = reading.graceMs / 1000;
  const near = Math.max(1, Math.floor(grace / 3));
  const window = Math.ceil(reading.rate * 2 * grace);
  const awaiting = Math.max(0, reading.frontier - reading.issued - reading.lost);
  const nearReads = (awaiting + reading.outstanding + window) / near;
  const farWaiters = Math.max(0, reading.queued - reading.frontier - window);
  const share = Math.max(reading.budget - nearReads, reading.budget / 10);
  const far = Math.min(MAX_REFRESH_SECONDS, Math.max(near, Math.ceil(farWaiters / share)));
  const soon = reading.ordinal - reading.frontier < window || (waitSeconds !== null && waitSeconds <= 2 * grace);
  const mine = soon ? near : waitSeconds === null ? far : Math.min(far, Math.max(near, Math.floor(waitSeconds - grace)));
  return { near, far, mine, soon };
}

/** Seconds until the waiter's turn, by the rate and by the cap, whichever is later; null while the room is paused or held, or its turn hangs on units that may never come back. */
function waitSeconds(r: RoomReading): number | null {
  const need = r.ordinal + 1;
  if ((r.paused || r.held) && r.now >= r.opens) return null;
  const untilOpen = Math.max(0, r.opens - r.now) / 1000;
  const byRate = untilOpen + Math.max(0, need - Math.max(r.served, r.frontier)) / r.rate;
  const short = need - Math.max(r.cap, r.frontier);
  if (short <= 0) return Math.ceil(byRate);
  // Held back by the cap: each pass outstanding frees its place within its lifetime (used or expired), and each waiter admitted but
  // not yet claiming within the grace (its place lost, or its pass then expiring); half of that on average.
  const awaiting = Math.max(0, r.frontier - r.issued - r.lost);
  const freeing = r.outstanding + awaiting;
  if (freeing === 0) return null;
  const lifetimeMs = (r.outstanding * r.passMs + awaiting * r.graceMs) / freeing;
  const byCap = (Math.ceil(short / freeing) * lifetimeMs) / 2000;
  return Math.ceil(Math.max(byRate, byCap));
}

export function standingOf(r: RoomReading): Standing {
  const soldOut = r.units <= 0 && r.outstanding === 0;
  const position = r.ordinal + 1;
  const claim = /^\d+\|[^|]+\|(\d+)$/.exec(r.record);
  const converted = Math.max(0, r.issued - r.expired - r.outstanding);
  const conversion = Math.min(1, Math.max(0.01, (converted + 1) / (converted + r.expired + r.lost + 1)));
  const ahead = Math.max(0, r.ordinal - r.issued - r.lost);
  const base = { position, soldOut };
  if (claim) {
    const passExpiresAt = Number(claim[1]);
    const refresh = refreshSeconds(r, null);
    return r.live
      ? { ...base, state: 'holding', ahead: 0, estimatedWaitSeconds: 0, odds: 1, refreshSeconds: refresh.near, passExpiresAt }
      : { ...base, state: 'done', ahead: 0, estimatedWaitSeconds: 0, odds: 0, refreshSeconds: refresh.far, passExpiresAt };
  }
  const lost = r.ordinal < r.swept || (r.turn >= 0 && r.turn + r.graceMs < r.now);
  if (lost) return { ...base, state: 'lost', ahead: 0, estimatedWaitSeconds: null, odds: 0, refreshSeconds: refreshSeconds(r, null).far };
  if (r.ordinal < r.frontier) {
    const claimBy = (r.turn >= 0 ? r.turn : r.now) + r.graceMs;
    return { ...base, state: 'admitted', ahead: 0, estimatedWaitSeconds: 0, odds: 1, refreshSeconds: refreshSeconds(r, 0).near, claimBy };
  }
  const wait = soldOut ? null : waitSeconds(r);
  return {
    ...base,
    state: 'waiting',
    ahead,
    estimatedWaitSeconds: wait,
    odds: soldOut ? 0 : oddsOfUnit(r.units, ahead + r.outstanding, conversion),
    refreshSeconds: refreshSeconds(r, wait).mine,
  };
}
