import type { PoolConnection } from 'mysql2/promise';
import type * as z from '../platform/zod';
import type { DecisionTable, StoredState } from './ledger';

/**
 * The Redis keys of one owner's reservations (an item's sale, a deal), all in one hash slot: of
 * the whole owner, or of one bucket of an owner split over several slots (shared/reservations/buckets.ts).
 */
export interface OwnerKeys {
  /** The hash tag every key of the owner (or bucket) carries, e.g. {item:<id>}: any other key in its slot starts with it. */
  tag: string;
  /** The live state: a hash holding the counter the reserving script checks and moves. */
  state: string;
  /** Buyer -> what they hold (an item's units, a deal's coupon id). */
  buyers: string;
  /** Reservation id -> record, from the reserving script until the writer has stored it. */
  outbox: string;
  /** Move id -> record of units this bucket gave to another, until the recipient took them in. */
  moves: string;
  /** The recipient's record that it took a move in, so taking it in again does nothing. */
  movedIn(moveId: string): string;
}

/** The state hash's counter of remaining units, and the bounds a repair keeps it in. */
export interface Counter {
  field: string;
  /** +1 when the field counts what remains (stock), -1 when it counts what was taken (issued). */
  sign: 1 | -1;
}

/**
 * One kind of reservation (orders, coupons): everything the pipeline needs that differs between
 * kinds. The pipeline itself (reserve → hand off → compensate → claim → write → reconcile and
 * repair) is written once, in this folder, against this.
 */
export interface ReservationKind<R, Locked = unknown> {
  /** The field of the hand-off message that carries this kind, and the name in logs. */
  name: string;
  /** What a buyer is told when its reservation could not be handed off and was undone (a 503): how to retry. */
  retryText: string;
  /** Where its decisions are kept (shared/reservations/ledger.ts). */
  decisions: DecisionTable<R>;
  record: z.ZodMiniType<R>;
  idOf(record: R): string;
  ownerOf(record: R): string;
  buyerOf(record: R): number;
  unitsOf(record: R): number;
  /** When it was reserved (ms): an outbox entry older than the relay's threshold is sent again. */
  reservedAtOf(record: R): number;
  /** The keys of the owner's buckets, as MySQL has them: one when the owner is not split. */
  bucketsOf(owner: string): Promise<OwnerKeys[]>;
  /** The keys of the bucket that holds a reservation. */
  keysOfRecord(record: R): OwnerKeys;
  counter: Counter;

  /** Undoes a reservation in Redis (idempotent): 1 when it gave units back now, 0 when there was nothing left to give back. */
  release(record: R): Promise<number>;

  /** Every owner MySQL knows (items, deals), for reconciliation. */
  owners(): Promise<string[]>;
  /** Locks the owners' rows (given in id order) and reads what the guard needs of them. */
  lockOwners(conn: PoolConnection, owners: string[]): Promise<Locked>;
  /** The owner's capacity as MySQL has it, undefined when the owner is unknown. */
  capacity(conn: PoolConnection, owner: string): Promise<number | undefined>;
  /**
   * Stores reservations not yet decided under the database guard, on conn inside the writer's
   * transaction, after lockOwners: rejects what would go past the capacity or the buyer's limit.
   */
  store(conn: PoolConnection, records: R[], owners: Locked): Promise<Map<string, StoredState>>;
  /**
   * Stores reservations as store does, but as if none had a decision yet, without reading or
   * locking their decisions first: undefined when one had (a duplicate, a promise, a cancellation),
   * and the writer then rolls back and decides under lock. Spares the common batch, whose
   * reservations all arrive once and undecided, a statement.
   */
  storeUndecided?(conn: PoolConnection, records: R[], owners: Locked): Promise<Map<string, StoredState> | undefined>;
  /** The state hash's fields when a bucket of the owner is rebuilt from MySQL with `units` in it, or undefined when MySQL has no such owner. */
  rebuiltState(conn: PoolConnection, owner: string, units: number): Promise<Record<string, string | number> | undefined>;
  /** Puts back what tells the reserving path how many buckets the owner has, if Redis lost it. */
  restoreLayout?(owner: string, buckets: number): Promise<void>;
  /**
   * Mends what Redis keeps beside the owner's units after it lost writes (an item's waiting room:
   * its hash and its mark on each of the `buckets` states Redis has, put back from MySQL, and the
   * passes of buyers `confirmed` at their limit dropped); true when anything changed.
   */
  repairAttached?(owner: string, buckets: number, confirmed: { buyer: number; units: number; id: string }[]): Promise<boolean>;
  /** What Redis must forget of reservations the guard rejected, which hold nothing (after their commit). */
  forgetRejected?(owner: string, rejected: R[]): Promise<void>;
  /** Puts back buyers' holdings that Redis lost, from what MySQL confirmed for them; lowers nothing. Returns how many changed. */
  restoreBuyers(owner: string, confirmed: { buyer: number; units: number; id: string }[]): Promise<number>;
}
