import { db } from '../platform/clients/mysql';
import { redis } from '../platform/clients/redis';
import { sqsCall } from '../platform/clients/sqs-calls';
import { reservationQueueEnv, readEnv } from '../platform/config';
import { logger } from '../platform/logger';
import { luaScript } from '../platform/redis/script';
import { finishMove, parseMoves, splitUnits, type Move } from './buckets';
import type { OwnerKeys, ReservationKind } from './kind';
import { confirmedHoldings, ownerLedger, type LedgerState } from './ledger';
import { reservationQueue } from './queue';

const snapshotScript = luaScript<[state: string, outbox: string, moves: string], []>(new URL('./lua/owner-snapshot-3.lua', import.meta.url));
const adjustScript = luaScript<[state: string], [string, number, number, number, number]>(new URL('./lua/counter-adjust-1.lua', import.meta.url));
const rebuildScript = luaScript<[state: string], (string | number)[]>(new URL('./lua/state-rebuild-1.lua', import.meta.url));

const pairs = (flat: string[]): [string, string][] => Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]);
const isStored = (state: LedgerState | undefined) => state === 'confirmed' || state === 'rejected';

interface BucketLook {
  keys: OwnerKeys;
  /** The bucket's state hash, undefined when Redis has none. */
  state: Record<string, string> | undefined;
  outbox: [string, string][];
  /** Moves this bucket started, taken in or not. */
  moves: Move[];
}

interface Look<R> {
  capacity: number;
  buckets: BucketLook[];
  /** Units left in Redis, over every bucket that has a state; undefined when Redis has no state for the owner at all. */
  remaining: number | undefined;
  /** Buckets whose state (its counter) Redis lost (of an owner split into several, some may survive). */
  lost: number[];
  repairs: number;
  confirmed: number;
  entries: { id: string; record: R; state: LedgerState | undefined }[];
  pending: number;
  /** Units in moves between buckets not yet taken in. */
  moving: number;
  /** False when moves kept being made during every try at a consistent look of the buckets. */
  settled: boolean;
  /** capacity − (remaining + confirmed + pending + moving); 0 when nothing was lost or oversold. */
  drift: number;
}

/** Tries at a look of an owner's buckets during which no move step landed. */
const LOOK_TRIES = 5;

/**
 * Redis's part of a look: each bucket in one atomic step, then, for an owner split into several,
 * whether each move found was taken in, and last each bucket's count of move steps again. When no
 * count moved, no move step landed between the buckets' reads, so they are one consistent cut:
 * every unit is counted once, in a bucket, in a move or in an outbox.
 */
async function lookAtBuckets(buckets: OwnerKeys[]): Promise<{ looks: BucketLook[]; moving: number; settled: boolean }> {
  let looks: BucketLook[] = [];
  let moving = 0;
  for (let tries = 0; tries < LOOK_TRIES; tries++) {
    looks = await Promise.all(
      buckets.map(async (keys, k) => {
        const [stateFlat, outboxFlat, movesFlat] = (await snapshotScript.run(redis(), [keys.state, keys.outbox, keys.moves], [])) as [
          string[],
          string[],
          string[],
        ];
        return { keys, state: stateFlat.length ? Object.fromEntries(pairs(stateFlat)) : undefined, outbox: pairs(outboxFlat), moves: parseMoves(k, movesFlat) };
      }),
    );
    if (buckets.length === 1) return { looks, moving: 0, settled: true };
    const moves = looks.flatMap((l) => l.moves);
    const takenIn = await Promise.all(moves.map((m) => redis().exists(buckets[m.to]!.movedIn(m.id))));
    moving = moves.reduce((sum, m, i) => sum + (takenIn[i] ? 0 : m.units), 0);
    const counts = await Promise.all(buckets.map((keys) => redis().hget(keys.state, 'moves')));
    if (counts.every((count, k) => (count ?? '0') === (looks[k]!.state?.moves ?? '0'))) return { looks, moving, settled: true };
  }
  return { looks, moving, settled: false };
}

/**
 * One look at where an owner's units are: Redis (lookAtBuckets), then MySQL in one consistent
 * snapshot. In that order, a reservation in the outbox that the writer stores meanwhile is found
 * stored and counted once, and one made after the Redis look would have to be stored within the
 * moment between the two reads to be miscounted, far quicker than any trip through the queue.
 */
async function look<R>(kind: ReservationKind<R>, owner: string): Promise<Look<R> | undefined> {
  const { looks, moving, settled } = await lookAtBuckets(await kind.bucketsOf(owner));
  const outbox = looks.flatMap((l) => l.outbox.map(([id, raw]) => ({ id, record: JSON.parse(raw) as R })));
  const conn = await db().getConnection();
  try {
    await conn.query('START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT');
    const capacity = await kind.capacity(conn, owner);
    const ledger = await ownerLedger(
      conn,
      kind.decisions,
      owner,
      outbox.map((e) => e.id),
    );
    await conn.query('COMMIT');
    if (capacity === undefined) return undefined;
    const counters = looks.map((l) => l.state?.[kind.counter.field]);
    const lost = counters.flatMap((c, k) => (c === undefined ? [k] : []));
    const remaining =
      lost.length === looks.length
        ? undefined
        : counters.reduce((sum, c) => sum + (c === undefined ? 0 : kind.counter.sign > 0 ? Number(c) : capacity - Number(c)), 0);
    const entries = outbox.map((e) => ({ ...e, state: ledger.states.get(e.id) }));
    const pending = entries.filter((e) => !isStored(e.state)).reduce((sum, e) => sum + kind.unitsOf(e.record), 0);
    return {
      capacity,
      buckets: looks,
      remaining,
      lost,
      repairs: looks.reduce((sum, l) => sum + Number(l.state?.repairs ?? 0), 0),
      confirmed: ledger.confirmedUnits,
      entries,
      pending,
      moving,
      settled,
      drift: capacity - ((remaining ?? 0) + ledger.confirmedUnits + pending + moving),
    };
  } finally {
    conn.release();
  }
}

/** Messages on the reservation queue, visible or not: reservations still on their way. */
const IN_FLIGHT = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;

async function messagesInFlight(): Promise<number> {
  const { Attributes } = await sqsCall()<{ Attributes?: Record<string, string> }>('GetQueueAttributes', {
    QueueUrl: readEnv(reservationQueueEnv).RESERVATION_QUEUE_URL,
    AttributeNames: [...IN_FLIGHT],
  });
  return IN_FLIGHT.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
}

export interface OwnerReconciliation {
  kind: string;
  owner: string;
  capacity: number;
  remaining: number;
  confirmed: number;
  pending: number;
  /** Units moving between buckets of an owner split into several. */
  moving: number;
  drift: number;
  /** False when two looks disagreed: something moved between them, so the drift may be false. */
  steady: boolean;
  relayed: number;
  settled: number;
  /** Cancelled reservations whose units Redis still held, given back (a compensation that died half-way). */
  released: number;
  /** The change made to the counter, 0 when none. */
  adjusted: number;
  /** Moves between buckets found and finished (taken in, cleared): a process had died between their steps, or was still on its way. */
  movesFinished: number;
  /** True when Redis had lost the owner's state (or a bucket's) and it was rebuilt from MySQL. */
  rebuilt: boolean;
  /** Why a lost state was not rebuilt yet. */
  waiting?: string;
  buyersRestored: number;
  /** True when what Redis keeps beside the owner's units (an item's waiting room) had lost writes and was mended (ReservationKind.repairAttached). */
  attachedRepaired: boolean;
}

export interface ReconcileOptions {
  /** Re-send outbox entries older than this: their first send was lost. */
  relayOlderThanMs: number;
  /**
   * Also repair Redis: a counter whose drift stays the same across two looks is moved by that
   * drift (compare-and-set), a lost state is rebuilt once nothing is in flight, and buyers'
   * holdings Redis lost are put back (never lowered).
   */
  repair: boolean;
  /**
   * Trust one look: for a caller that knows Redis just lost writes (the writer stored records
   * with no outbox entry), where every moment spent looking again lets Redis sell the lost units
   * a second time. One look is exact (see look); the second guards only against a loss still
   * unfolding, which the next repair catches.
   */
  oneLook?: boolean;
  now?: number;
}

/** Time for writes in flight during a look to land before drift is believed. */
const SETTLE_MS = 500;

/**
 * Checks capacity = remaining (Redis) + confirmed (MySQL) + pending (outbox) for one owner, and
 * does the outbox's housekeeping: relays entries whose send was lost, clears entries already
 * stored, and gives back entries the ledger cancelled. Undefined when MySQL has no such owner.
 */
export async function reconcileOwner<R>(kind: ReservationKind<R>, owner: string, options: ReconcileOptions): Promise<OwnerReconciliation | undefined> {
  const now = options.now ?? Date.now();
  const first = await look(kind, owner);
  if (!first) return undefined;
  let current = first;
  let steady = true;
  if ((first.drift !== 0 || !first.settled) && !options.oneLook) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    current = (await look(kind, owner)) ?? first;
    steady = current.settled && current.drift === first.drift && current.repairs === first.repairs && current.lost.join() === first.lost.join();
  }
  const stored = current.entries.filter((e) => isStored(e.state));
  const storedPerOutbox = new Map<string, string[]>();
  for (const e of stored) storedPerOutbox.set(kind.keysOfRecord(e.record).outbox, [...(storedPerOutbox.get(kind.keysOfRecord(e.record).outbox) ?? []), e.id]);
  await Promise.all([...storedPerOutbox].map(([outbox, ids]) => redis().hdel(outbox, ...ids)));
  const cancelled = current.entries.filter((e) => e.state === 'cancelled');
  for (const entry of cancelled) await kind.release(entry.record);
  const stale = current.entries.filter(
    (e) => (e.state === undefined || e.state === 'promised') && now - kind.reservedAtOf(e.record) >= options.relayOlderThanMs,
  );
  await Promise.all(stale.map((e) => reservationQueue().send({ kind: kind.name, record: e.record })));

  const report: OwnerReconciliation = {
    kind: kind.name,
    owner,
    capacity: current.capacity,
    remaining: current.remaining ?? 0,
    confirmed: current.confirmed,
    pending: current.pending,
    moving: current.moving,
    drift: current.drift,
    steady,
    relayed: stale.length,
    settled: stored.length,
    released: cancelled.length,
    adjusted: 0,
    movesFinished: 0,
    rebuilt: false,
    buyersRestored: 0,
    attachedRepaired: false,
  };
  if (!options.repair) return report;
  const buckets = current.buckets.map((b) => b.keys);
  await kind.restoreLayout?.(owner, buckets.length);
  // Forward only, and idempotent: a move still on its way is finished once, whoever finishes it.
  const moves = current.buckets.flatMap((b) => b.moves);
  report.movesFinished = (await Promise.all(moves.map((m) => finishMove(buckets, m)))).filter(Boolean).length;
  if (current.lost.length) {
    const inFlight = current.entries.length + (await messagesInFlight());
    if (inFlight > 0) {
      report.waiting = `Redis lost the state of ${owner}${current.remaining === undefined ? '' : ` (${current.lost.length} of its ${buckets.length} buckets)`}; it is rebuilt once nothing is in flight (${inFlight} reservations or messages still are)`;
      return report;
    }
    // Nothing pending: what is neither confirmed nor in a surviving bucket or a move was in the lost buckets.
    const shares = splitUnits(Math.max(0, current.capacity - current.confirmed - (current.remaining ?? 0) - current.moving), current.lost.length);
    const conn = await db().getConnection();
    try {
      for (const [i, k] of current.lost.entries()) {
        const fields = await kind.rebuiltState(conn, owner, shares[i]!);
        if (fields && (await rebuildScript.run(redis(), [buckets[k]!.state], Object.entries(fields).flat())) === 1) report.rebuilt = true;
      }
    } finally {
      conn.release();
    }
  } else if (steady && current.drift !== 0) {
    // The drift goes to the bucket with the most units, so taking some away keeps it at or above 0.
    const counter = (b: BucketLook) => Number(b.state?.[kind.counter.field] ?? 0) * kind.counter.sign;
    const target = current.buckets.reduce((best, b) => (counter(b) > counter(best) ? b : best));
    const [min, max] = kind.counter.sign > 0 ? [0, Number.MAX_SAFE_INTEGER] : [0, current.capacity];
    const applied = await adjustScript.run(
      redis(),
      [target.keys.state],
      [kind.counter.field, kind.counter.sign * current.drift, Number(target.state?.repairs ?? 0), min, max],
    );
    if (applied !== null) report.adjusted = current.drift;
  }
  const confirmed = await confirmedHoldings(kind.decisions, owner);
  report.attachedRepaired = (await kind.repairAttached?.(owner, buckets.length, confirmed)) ?? false;
  report.buyersRestored = await kind.restoreBuyers(owner, confirmed);
  return report;
}

/** What the writer runs when it learns Redis lost writes for an owner: a repair at once, with no relay. */
export function repairOwner<R>(kind: ReservationKind<R>, owner: string): Promise<OwnerReconciliation | undefined> {
  return reconcileOwner(kind, owner, { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: true, oneLook: true });
}

/**
 * The one drift rule, for the schedule and the CLI alike: an owner drifted when capacity ≠
 * remaining + confirmed + pending + moving held across two looks. A drift that two looks disagree
 * on is not believed: something moved between them (a reservation in flight), the next run looks
 * again, and it is not the drift a repair moves either.
 */
function drifted(report: OwnerReconciliation): boolean {
  return report.steady && report.drift !== 0;
}

/** Still wrong after the run: a drift left as it was (not moved, not rebuilt away), or a lost state waiting to be rebuilt. */
function unresolved(report: OwnerReconciliation): boolean {
  return (drifted(report) && report.adjusted !== report.drift && !report.rebuilt) || report.waiting !== undefined;
}

/** What the schedule logs of an owner: repairs and what they wait for as errors, relays as warnings, a clean owner not at all. */
function logReconciliation(report: OwnerReconciliation): void {
  if (report.waiting || report.rebuilt || report.attachedRepaired) {
    logger.error(
      report.waiting ? 'A state Redis lost waits to be rebuilt' : report.rebuilt ? 'Rebuilt a state Redis lost' : 'Mended what Redis lost beside a state',
      { ...report },
    );
  } else if (drifted(report)) {
    logger.error(report.adjusted === report.drift ? 'Reservation drift repaired' : 'Reservation drift', { ...report });
  } else if (report.relayed > 0) {
    logger.warn('Relayed lost sends', { kind: report.kind, owner: report.owner, relayed: report.relayed });
  }
}

export interface Reconciliation {
  /** Owners looked at. */
  owners: number;
  /** Of them, those that drifted (see drifted), repaired or not. */
  drifted: number;
  /** Of them, those still wrong after the run (see unresolved). */
  unresolved: number;
  /** Owners asked for by name that no kind knows. */
  unknown: string[];
}

/**
 * Reconciles every owner of the kinds given (items' sales, deals), or only those named, one at a
 * time, handing each owner's report to `each`: the one entry point of the 5-minute schedule
 * (functions/reconcile-reservations.ts) and of `npm run reconcile` (infra/ops/reconcile.ts).
 */
export async function reconcileKinds(
  kinds: readonly ReservationKind<unknown>[],
  options: ReconcileOptions & { only?: string[] },
  each: (report: OwnerReconciliation) => void = logReconciliation,
): Promise<Reconciliation> {
  const run: Reconciliation = { owners: 0, drifted: 0, unresolved: 0, unknown: [] };
  const known = new Set<string>();
  for (const kind of kinds) {
    const owners = await kind.owners();
    for (const owner of owners) known.add(owner);
    for (const owner of options.only ? options.only.filter((o) => owners.includes(o)) : owners) {
      const report = await reconcileOwner(kind, owner, options);
      if (!report) continue;
      run.owners += 1;
      if (drifted(report)) run.drifted += 1;
      if (unresolved(report)) run.unresolved += 1;
      each(report);
    }
  }
  run.unknown = (options.only ?? []).filter((owner) => !known.has(owner));
  return run;
}
