import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { db } from '../platform/clients/mysql';
import { inTransaction } from '../platform/db/transaction';

/**
 * Where a kind's decisions are kept (MySQL): every decision about a reservation. A primary key
 * makes the first decision final, whatever Redis later loses:
 * - `cancelled`: written by the compensating path before Redis gives the units back, so a late
 *   message is never stored, even if Redis loses the release;
 * - `promised`: written when a retry was told the reservation stands, so no compensation can
 *   cancel it any more;
 * - `confirmed` / `rejected`: written by the writer, in the transaction that applies the guard.
 * A reservation with no decision is simply undecided: the writer stores it, outbox entry or not.
 *
 * Orders keep theirs in the order's own row (its status), so the writer stores an order once, in
 * one row; coupons in the reservation ledger, since the coupons table holds one row per user and
 * deal and only for a coupon issued (its unique key forbids a cancelled row beside a re-issued one).
 */
/** What the database guard decided for a reservation it stored. */
export type StoredState = 'confirmed' | 'rejected';

export type LedgerState = 'promised' | 'cancelled' | StoredState;

/**
 * A table of decisions and the columns that hold each part. Names are the code's own constants,
 * never request data, so they are written into the SQL; values always go through placeholders.
 */
export interface DecisionColumns {
  /** A kind's own table, or the shared reservation_ledger. */
  table: string;
  /** What selects this kind's rows in a table kinds share; 'TRUE' in a kind's own table. */
  scope: string;
  id: string;
  owner: string;
  buyer: string;
  units: string;
  state: string;
  /** Where the release before kept these decisions, read and written beside them for one release (DecisionTable.bridge). */
  bridge?: DecisionColumns;
}

/** Where one kind's decisions are kept, and how one is written. */
export interface DecisionTable<R> extends DecisionColumns {
  /** The row that records a decision for a record not stored yet: each column and its value. */
  rowOf(record: R, state: LedgerState): Record<string, unknown>;
  /** True when the kind's store writes the guard's decision in its own row: the writer records none apart. */
  decidedByStore: boolean;
  /**
   * Where the release before kept these decisions, when an expand migration moved them here: for
   * one release every decision is read from both (this table's first) and written to both, so the
   * two releases, serving side by side while a deploy shifts, decide each reservation once. Goes
   * with the contract migration that drops the old rows, a release later.
   */
  bridge?: DecisionTable<R>;
}

/** MySQL's deadlock error: two deciders of one id both took its gap lock before inserting. */
const ER_LOCK_DEADLOCK = 1213;
const DEADLOCK_RETRIES = 3;

/**
 * Writes state for the record unless something was decided first; returns what stands: state
 * itself, or the earlier decision (a `promised` does not overrule a `cancelled`, nor the reverse).
 */
export async function decideFirst<R>(decisions: DecisionTable<R>, record: R, state: 'promised' | 'cancelled'): Promise<LedgerState> {
  if (decisions.bridge) return decideAcrossBridge(decisions, decisions.bridge, record, state);
  const row = decisions.rowOf(record, state);
  const [result] = await db().query<ResultSetHeader>(`INSERT IGNORE INTO ${decisions.table} (${Object.keys(row).join(', ')}) VALUES (?)`, [Object.values(row)]);
  if (result.affectedRows === 1) return state;
  const id = String(row[decisions.id]);
  const [rows] = await db().query<RowDataPacket[]>(`SELECT ${decisions.state} AS state FROM ${decisions.table} WHERE ${decisions.id} = ?`, [id]);
  return rows[0]!.state as LedgerState;
}

/**
 * decideFirst across a bridge, in one transaction: the row written to both tables unless there
 * (this table first, always in that order), so each insert takes a lock on its own row and none
 * on a gap; where a table had a row already, its decision was first and stands (this table's, if
 * both had one) and is written over the row just inserted in the other. The release before writes
 * one table in one statement, so it waits on a row at most. Two deciders of one id can still
 * deadlock (both upgrading a shared lock): the one MySQL picks is tried again.
 */
async function decideAcrossBridge<R>(own: DecisionTable<R>, earlier: DecisionTable<R>, record: R, state: 'promised' | 'cancelled'): Promise<LedgerState> {
  const id = String(own.rowOf(record, state)[own.id]);
  const insert = async (conn: PoolConnection, table: DecisionTable<R>) => {
    const row = table.rowOf(record, state);
    const [result] = await conn.query<ResultSetHeader>(`INSERT IGNORE INTO ${table.table} (${Object.keys(row).join(', ')}) VALUES (?)`, [Object.values(row)]);
    return result.affectedRows === 1;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(db(), async (conn) => {
        const [ownNew, earlierNew] = [await insert(conn, own), await insert(conn, earlier)];
        if (ownNew && earlierNew) return state;
        const [mine, theirs] = [await statesOf(conn, own, [id]), await statesOf(conn, earlier, [id])];
        const standing = (ownNew ? theirs.get(id) : mine.get(id))!;
        for (const [table, known] of [
          [own, mine],
          [earlier, theirs],
        ] as const) {
          if (known.get(id) !== standing) await conn.query(`UPDATE ${table.table} SET ${table.state} = ? WHERE ${table.id} = ?`, [standing, id]);
        }
        return standing;
      });
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_LOCK_DEADLOCK || attempt === DEADLOCK_RETRIES) throw error;
    }
  }
}

async function statesOf(conn: PoolConnection, decisions: DecisionColumns, ids: string[]): Promise<Map<string, LedgerState>> {
  const { table, id, state } = decisions;
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT ${id} AS id, ${state} AS state FROM ${table} WHERE ${id} IN (?) FOR UPDATE`, [ids]);
  return new Map(rows.map((r) => [String(r.id), r.state as LedgerState]));
}

/** The decisions already taken for ids, locked until conn's transaction ends: across a bridge, from both tables, this one's first. */
export async function lockedStates(conn: PoolConnection, decisions: DecisionColumns, ids: string[]): Promise<Map<string, LedgerState>> {
  const own = await statesOf(conn, decisions, ids);
  if (!decisions.bridge) return own;
  for (const [id, state] of await statesOf(conn, decisions.bridge, ids)) if (!own.has(id)) own.set(id, state);
  return own;
}

/**
 * The writer's decisions, in its transaction, where the kind's store did not write them: a promise
 * becomes what the guard decided. Across a bridge, in the old table too, where the release before
 * looks for them.
 */
export async function recordStored<R>(
  conn: PoolConnection,
  decisions: DecisionTable<R>,
  records: R[],
  states: Map<string, StoredState>,
  idOf: (record: R) => string,
): Promise<void> {
  if (decisions.bridge) await recordStored(conn, decisions.bridge, records, states, idOf);
  if (records.length === 0 || decisions.decidedByStore) return;
  const rows = records.map((r) => decisions.rowOf(r, states.get(idOf(r))!));
  await conn.query(
    `INSERT INTO ${decisions.table} (${Object.keys(rows[0]!).join(', ')}) VALUES ? ON DUPLICATE KEY UPDATE ${decisions.state} = VALUES(${decisions.state})`,
    [rows.map((row) => Object.values(row))],
  );
}

export interface OwnerLedger {
  confirmedUnits: number;
  /** The state of each id asked about, where one was decided. */
  states: Map<string, LedgerState>;
}

/** One owner's confirmed units, and the states of the ids given, on conn (a snapshot of the caller's). */
export async function ownerLedger(conn: PoolConnection, decisions: DecisionColumns, owner: string, ids: string[]): Promise<OwnerLedger> {
  const { table, scope, id, state, units } = decisions;
  const statesIn = (columns: DecisionColumns) =>
    ids.length
      ? conn
          .query<RowDataPacket[]>(`SELECT ${columns.id} AS id, ${columns.state} AS state FROM ${columns.table} WHERE ${columns.id} IN (?)`, [ids])
          .then(([rows]) => rows)
      : [];
  // Confirmed units are this table's alone: both releases store a confirmed reservation's own row here.
  const [[sum], states, earlier] = await Promise.all([
    conn.query<RowDataPacket[]>(
      `SELECT COALESCE(SUM(${units}), 0) AS units FROM ${table} WHERE ${scope} AND ${decisions.owner} = ? AND ${state} = 'confirmed'`,
      [owner],
    ),
    statesIn(decisions),
    decisions.bridge ? statesIn(decisions.bridge) : [],
  ]);
  const merged = new Map(earlier.map((r) => [String(r.id), r.state as LedgerState]));
  for (const r of states) merged.set(String(r.id), r.state as LedgerState);
  return { confirmedUnits: Number(sum[0]!.units), states: merged };
}

/** A reservation's decision and what it was for, as the bridge's old table alone knows it (the release before's promise or cancellation). */
export async function bridgedDecision(
  decisions: DecisionColumns,
  reservationId: string,
): Promise<{ owner: string; buyer: number; units: number; state: LedgerState } | undefined> {
  const earlier = decisions.bridge;
  if (!earlier) return undefined;
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT ${earlier.owner} AS owner, ${earlier.buyer} AS buyer, ${earlier.units} AS units, ${earlier.state} AS state FROM ${earlier.table} WHERE ${earlier.scope} AND ${earlier.id} = ?`,
    [reservationId],
  );
  const row = rows[0];
  return row && { owner: String(row.owner), buyer: Number(row.buyer), units: Number(row.units), state: row.state as LedgerState };
}

/** What each buyer of an owner holds for certain: their confirmed reservations. */
export async function confirmedHoldings(decisions: DecisionColumns, owner: string): Promise<{ buyer: number; units: number; id: string }[]> {
  const { table, scope, id, buyer, units, state } = decisions;
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT ${buyer} AS buyer, SUM(${units}) AS units, MIN(${id}) AS id FROM ${table} WHERE ${scope} AND ${decisions.owner} = ? AND ${state} = 'confirmed' GROUP BY ${buyer}`,
    [owner],
  );
  return rows.map((r) => ({ buyer: Number(r.buyer), units: Number(r.units), id: String(r.id) }));
}

/** The reservations of a buyer that the guard rejected: id and owner. */
export async function rejectedOf(decisions: DecisionColumns, buyer: number): Promise<{ id: string; owner: string }[]> {
  const { table, scope, id, owner, state } = decisions;
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT ${id} AS id, ${owner} AS owner FROM ${table} WHERE ${scope} AND ${decisions.buyer} = ? AND ${state} = 'rejected'`,
    [buyer],
  );
  return rows.map((r) => ({ id: String(r.id), owner: String(r.owner) }));
}
