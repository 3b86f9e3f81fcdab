import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { db } from '../clients/mysql';
import { redis } from '../clients/redis';
import { sqs } from '../clients/sqs';
import { reservationQueueEnv, readEnv } from '../config';
import { luaScript } from '../redis/script';
import type { ReservationKind } from './kind';
import { confirmedHoldings, ownerLedger, type LedgerState } from './ledger';
import { reservationQueue } from './queue';

const snapshotScript = luaScript<[state: string, outbox: string], []>(new URL('./lua/owner-snapshot-2.lua', import.meta.url));
const adjustScript = luaScript<[state: string], [string, number, number, number, number]>(new URL('./lua/counter-adjust-1.lua', import.meta.url));
const rebuildScript = luaScript<[state: string], (string | number)[]>(new URL('./lua/state-rebuild-1.lua', import.meta.url));

const pairs = (flat: string[]): [string, string][] => Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]);
const isStored = (state: LedgerState | undefined) => state === 'confirmed' || state === 'rejected';

interface Look<R> {
  capacity: number;
  /** Units left in Redis; undefined when Redis has no state for the owner. */
  remaining: number | undefined;
  repairs: number;
  confirmed: number;
  entries: { id: string; record: R; state: LedgerState | undefined }[];
  pending: number;
  /** capacity − (remaining + confirmed + pending); 0 when nothing was lost or oversold. */
  drift: number;
}

/**
 * One look at where an owner's units are: Redis in one atomic step, then MySQL in one consistent
 * snapshot. In that order, a reservation in the outbox that the writer stores meanwhile is found
 * stored and counted once, and one made after the Redis look would have to be stored within the
 * moment between the two reads to be miscounted, far quicker than any trip through the queue.
 */
async function look<R>(kind: ReservationKind<R>, owner: string): Promise<Look<R> | undefined> {
  const keys = kind.keysOf(owner);
  const [stateFlat, outboxFlat] = (await snapshotScript.run(redis(), [keys.state, keys.outbox], [])) as [string[], string[]];
  const state = Object.fromEntries(pairs(stateFlat));
  const outbox = pairs(outboxFlat).map(([id, raw]) => ({ id, record: JSON.parse(raw) as R }));
  const conn = await db().getConnection();
  try {
    await conn.query('START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT');
    const capacity = await kind.capacity(conn, owner);
    const ledger = await ownerLedger(conn, kind.ledger, owner, outbox.map((e) => e.id));
    await conn.query('COMMIT');
    if (capacity === undefined) return undefined;
    const counter = state[kind.counter.field];
    const remaining = counter === undefined ? undefined : kind.counter.sign > 0 ? Number(counter) : capacity - Number(counter);
    const entries = outbox.map((e) => ({ ...e, state: ledger.states.get(e.id) }));
    const pending = entries.filter((e) => !isStored(e.state)).reduce((sum, e) => sum + kind.unitsOf(e.record), 0);
    return {
      capacity,
      remaining,
      repairs: Number(state.repairs ?? 0),
      confirmed: ledger.confirmedUnits,
      entries,
      pending,
      drift: capacity - ((remaining ?? 0) + ledger.confirmedUnits + pending),
    };
  } finally {
    conn.release();
  }
}

/** Messages on the reservation queue, visible or not: reservations still on their way. */
const IN_FLIGHT = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;

async function messagesInFlight(): Promise<number> {
  const { Attributes } = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: readEnv(reservationQueueEnv).RESERVATION_QUEUE_URL, AttributeNames: [...IN_FLIGHT] }));
  return IN_FLIGHT.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
}

export interface OwnerReconciliation {
  kind: string;
  owner: string;
  capacity: number;
  remaining: number;
  confirmed: number;
  pending: number;
  drift: number;
  /** False when two looks disagreed: something moved between them, so the drift may be false. */
  steady: boolean;
  relayed: number;
  settled: number;
  /** Cancelled reservations whose units Redis still held, given back (a compensation that died half-way). */
  released: number;
  /** The change made to the counter, 0 when none. */
  adjusted: number;
  /** True when Redis had lost the owner's state and it was rebuilt from MySQL. */
  rebuilt: boolean;
  /** Why a lost state was not rebuilt yet. */
  waiting?: string;
  buyersRestored: number;
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
  if (first.drift !== 0 && !options.oneLook) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    current = (await look(kind, owner)) ?? first;
    steady = current.drift === first.drift && current.repairs === first.repairs && (current.remaining === undefined) === (first.remaining === undefined);
  }
  const keys = kind.keysOf(owner);
  const stored = current.entries.filter((e) => isStored(e.state));
  if (stored.length) await redis().hdel(keys.outbox, ...stored.map((e) => e.id));
  const cancelled = current.entries.filter((e) => e.state === 'cancelled');
  for (const entry of cancelled) await kind.release(entry.record);
  const stale = current.entries.filter((e) => (e.state === undefined || e.state === 'promised') && now - kind.reservedAtOf(e.record) >= options.relayOlderThanMs);
  await Promise.all(stale.map((e) => reservationQueue().send({ kind: kind.name, record: e.record })));

  const report: OwnerReconciliation = {
    kind: kind.name,
    owner,
    capacity: current.capacity,
    remaining: current.remaining ?? 0,
    confirmed: current.confirmed,
    pending: current.pending,
    drift: current.drift,
    steady,
    relayed: stale.length,
    settled: stored.length,
    released: cancelled.length,
    adjusted: 0,
    rebuilt: false,
    buyersRestored: 0,
  };
  if (!options.repair) return report;
  if (current.remaining === undefined) {
    const inFlight = current.entries.length + (await messagesInFlight());
    if (inFlight > 0) {
      report.waiting = `Redis lost the state of ${owner}; it is rebuilt once nothing is in flight (${inFlight} reservations or messages still are)`;
      return report;
    }
    const conn = await db().getConnection();
    const fields = await kind.rebuiltState(conn, owner, current.capacity - current.confirmed).finally(() => conn.release());
    if (fields) report.rebuilt = (await rebuildScript.run(redis(), [keys.state], Object.entries(fields).flat())) === 1;
  } else if (steady && current.drift !== 0) {
    const [min, max] = kind.counter.sign > 0 ? [0, Number.MAX_SAFE_INTEGER] : [0, current.capacity];
    const applied = await adjustScript.run(redis(), [keys.state], [kind.counter.field, kind.counter.sign * current.drift, current.repairs, min, max]);
    if (applied !== null) report.adjusted = current.drift;
  }
  report.buyersRestored = await kind.restoreBuyers(owner, await confirmedHoldings(kind.ledger, owner));
  return report;
}

/** What the writer runs when it learns Redis lost writes for an owner: a repair at once, with no relay. */
export function repairOwner<R>(kind: ReservationKind<R>, owner: string): Promise<OwnerReconciliation | undefined> {
  return reconcileOwner(kind, owner, { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: true, oneLook: true });
}
