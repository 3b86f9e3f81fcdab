import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { db } from '../platform/clients/mysql';
import type { ReservationKind, StoredState } from './kind';

/**
 * The reservation ledger (MySQL): every decision about a reservation, orders and coupons alike.
 * Its primary key makes the first decision final, whatever Redis later loses:
 * - `cancelled`: written by the compensating path before Redis gives the units back, so a late
 *   message is never stored, even if Redis loses the release;
 * - `promised`: written when a retry was told the reservation stands, so no compensation can
 *   cancel it any more;
 * - `confirmed` / `rejected`: written by the writer with the kind's row, in one transaction.
 * A reservation with no entry is simply undecided: the writer stores it, outbox entry or not.
 */
export type LedgerState = 'promised' | 'cancelled' | StoredState;

type Decidable<R> = Pick<ReservationKind<R>, 'ledger' | 'idOf' | 'ownerOf' | 'buyerOf' | 'unitsOf'>;

const rowOf = <R>(kind: Decidable<R>, record: R, state: LedgerState) => [kind.idOf(record), kind.ledger, kind.ownerOf(record), kind.buyerOf(record), kind.unitsOf(record), state];

/**
 * Writes state for the record unless something was decided first; returns what stands: state
 * itself, or the earlier decision (a `promised` does not overrule a `cancelled`, nor the reverse).
 */
export async function decideFirst<R>(kind: Decidable<R>, record: R, state: 'promised' | 'cancelled'): Promise<LedgerState> {
  const [result] = await db().query<ResultSetHeader>(
    'INSERT IGNORE INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) VALUES (?)',
    [rowOf(kind, record, state)],
  );
  if (result.affectedRows === 1) return state;
  return (await ledgerState(kind.idOf(record)))!;
}

async function ledgerState(id: string): Promise<LedgerState | undefined> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT state FROM reservation_ledger WHERE id = ?', [id]);
  return rows[0]?.state as LedgerState | undefined;
}

/** The decisions already taken for ids, locked until conn's transaction ends. */
export async function lockedStates(conn: PoolConnection, ids: string[]): Promise<Map<string, LedgerState>> {
  const [rows] = await conn.query<RowDataPacket[]>('SELECT id, state FROM reservation_ledger WHERE id IN (?) FOR UPDATE', [ids]);
  return new Map(rows.map((r) => [String(r.id), r.state as LedgerState]));
}

/** The writer's decisions, in its transaction: a promise becomes what the guard decided. */
export async function recordStored<R>(conn: PoolConnection, kind: Decidable<R>, records: R[], states: Map<string, StoredState>): Promise<void> {
  if (records.length === 0) return;
  await conn.query(
    'INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) VALUES ? ON DUPLICATE KEY UPDATE state = VALUES(state)',
    [records.map((r) => rowOf(kind, r, states.get(kind.idOf(r))!))],
  );
}

export interface OwnerLedger {
  confirmedUnits: number;
  /** The state of each id asked about, where one was decided. */
  states: Map<string, LedgerState>;
}

/** One owner's confirmed units, and the states of the ids given, on conn (a snapshot of the caller's). */
export async function ownerLedger(conn: PoolConnection, kind: ReservationKind<unknown>['ledger'], owner: string, ids: string[]): Promise<OwnerLedger> {
  const [[sum], states] = await Promise.all([
    conn.query<RowDataPacket[]>("SELECT COALESCE(SUM(units), 0) AS units FROM reservation_ledger WHERE kind = ? AND owner_id = ? AND state = 'confirmed'", [kind, owner]),
    ids.length ? conn.query<RowDataPacket[]>('SELECT id, state FROM reservation_ledger WHERE id IN (?)', [ids]).then(([rows]) => rows) : [],
  ]);
  return { confirmedUnits: Number(sum[0]!.units), states: new Map(states.map((r) => [String(r.id), r.state as LedgerState])) };
}

/** What each buyer of an owner holds for certain: their confirmed reservations. */
export async function confirmedHoldings(kind: ReservationKind<unknown>['ledger'], owner: string): Promise<{ buyer: number; units: number; id: string }[]> {
  const [rows] = await db().query<RowDataPacket[]>(
    "SELECT buyer_id, SUM(units) AS units, MIN(id) AS id FROM reservation_ledger WHERE kind = ? AND owner_id = ? AND state = 'confirmed' GROUP BY buyer_id",
    [kind, owner],
  );
  return rows.map((r) => ({ buyer: Number(r.buyer_id), units: Number(r.units), id: String(r.id) }));
}

/** An order as the ledger alone knows it: cancelled, or promised and on its way (pending). */
export async function ledgerOrder(id: string): Promise<{ itemId: string; userId: number; quantity: number; status: string } | undefined> {
  const [rows] = await db().query<RowDataPacket[]>("SELECT owner_id, buyer_id, units, state FROM reservation_ledger WHERE id = ? AND kind = 'order'", [id]);
  const row = rows[0];
  return row && { itemId: String(row.owner_id), userId: Number(row.buyer_id), quantity: Number(row.units), status: row.state === 'promised' ? 'pending' : String(row.state) };
}

/** The reservations of a buyer that the guard rejected: id and owner. */
export async function rejectedOf(kind: ReservationKind<unknown>['ledger'], buyer: number): Promise<{ id: string; owner: string }[]> {
  const [rows] = await db().query<RowDataPacket[]>("SELECT id, owner_id FROM reservation_ledger WHERE kind = ? AND buyer_id = ? AND state = 'rejected'", [kind, buyer]);
  return rows.map((r) => ({ id: String(r.id), owner: String(r.owner_id) }));
}
