import type { RowDataPacket } from 'mysql2/promise';
import { db } from '../platform/clients/mysql';
import * as z from '../platform/zod';
import type { ReservationKind } from './kind';
import { reconcileOwner } from './reconcile';

/** Accepted ids checked per request: a request body holds at most 64 KB. */
export const MAX_AUDITED_IDS = 1_000;

/** One owner's sale or deal held against the reservations a load test was told were accepted. */
export const Audit = z.strictObject({
  owner: z.string(),
  capacity: z.int(),
  /** Units Redis has left. */
  final_stock: z.int(),
  /** Units reserved in Redis and not yet stored: the writer has not drained while above 0. */
  pending: z.int(),
  /** capacity − (final_stock + confirmed + pending): 0 when nothing was lost or oversold. */
  drift: z.int(),
  /** Reservations stored in MySQL, confirmed or rejected by the guard. */
  rows: z.int(),
  confirmed: z.int(),
  /** Confirmed units beyond the capacity. */
  oversold: z.int(),
  /** Buyers' confirmed reservations beyond one each (a load test's buyers each ask once). */
  duplicates: z.int(),
  /** The accepted ids asked about (distinct). */
  accepted: z.int(),
  /** Accepted ids stored neither confirmed nor rejected. */
  lost: z.int(),
  /** Accepted ids the guard stored rejected: only after Redis lost writes. */
  rejected: z.int(),
  /** Up to 20 of the lost ids, to look up. */
  lost_ids: z.array(z.string()),
});
export type Audit = z.infer<typeof Audit>;

/**
 * Audits an owner: Redis's counter and outbox as reconciliation looks at them (no relay, no
 * repair), then its decisions in one snapshot; undefined when MySQL has no such owner. `accepted`
 * may be a part of a run's ids (at most MAX_AUDITED_IDS): the owner's figures are whole every
 * time, `accepted`, `lost` and `rejected` count the part.
 */
export async function auditOwner<R>(kind: ReservationKind<R>, owner: string, accepted: string[]): Promise<Audit | undefined> {
  const look = await reconcileOwner(kind, owner, { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: false });
  if (!look) return undefined;
  const ids = [...new Set(accepted)];
  const conn = await db().getConnection();
  try {
    await conn.query('START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT');
    const { table, scope, id, owner: ownerColumn, buyer, units, state } = kind.decisions;
    const [[totals]] = await conn.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS \`rows\`, COALESCE(SUM(IF(${state} = 'confirmed', ${units}, 0)), 0) AS confirmed FROM ${table} WHERE ${scope} AND ${ownerColumn} = ? AND ${state} IN ('confirmed', 'rejected')`,
      [owner],
    );
    const [[beyond]] = await conn.query<RowDataPacket[]>(
      `SELECT COALESCE(SUM(n - 1), 0) AS duplicates FROM (SELECT COUNT(*) AS n FROM ${table} WHERE ${scope} AND ${ownerColumn} = ? AND ${state} = 'confirmed' GROUP BY ${buyer}) AS per_buyer`,
      [owner],
    );
    const [states] = ids.length
      ? await conn.query<RowDataPacket[]>(`SELECT ${id} AS id, ${state} AS state FROM ${table} WHERE ${scope} AND ${ownerColumn} = ? AND ${id} IN (?)`, [
          owner,
          ids,
        ])
      : [[] as RowDataPacket[]];
    await conn.query('COMMIT');
    const stateOf = new Map(states.map((r) => [String(r.id), String(r.state)]));
    const lost = ids.filter((id) => !['confirmed', 'rejected'].includes(stateOf.get(id) ?? ''));
    const confirmed = Number(totals!.confirmed);
    return {
      owner,
      capacity: look.capacity,
      final_stock: look.remaining,
      pending: look.pending,
      drift: look.drift,
      rows: Number(totals!.rows),
      confirmed,
      oversold: Math.max(0, confirmed - look.capacity),
      duplicates: Number(beyond!.duplicates),
      accepted: ids.length,
      lost: lost.length,
      rejected: ids.filter((id) => stateOf.get(id) === 'rejected').length,
      lost_ids: lost.slice(0, 20),
    };
  } finally {
    conn.release();
  }
}
