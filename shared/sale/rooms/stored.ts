import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { RoomInput } from './model';

/** A pool or a connection: what a room's row is read with. */
type Queryable = Pick<PoolConnection, 'query'>;

interface Row extends RowDataPacket {
  opens_at: Date;
  admit_per_second: number;
  pass_seconds: number;
  grace_seconds: number;
  paused: number;
  status_reads_per_second: number;
}

/** Stores the room's settings as put (the row locked until conn commits): what a repair restores when Redis lost the room. */
export async function storeRoom(conn: PoolConnection, itemId: string, input: RoomInput): Promise<void> {
  await conn.query(
    `INSERT INTO waiting_rooms (item_id, opens_at, admit_per_second, pass_seconds, grace_seconds, paused, status_reads_per_second) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE opens_at = VALUES(opens_at), admit_per_second = VALUES(admit_per_second), pass_seconds = VALUES(pass_seconds),
       grace_seconds = VALUES(grace_seconds), paused = VALUES(paused), status_reads_per_second = VALUES(status_reads_per_second)`,
    [itemId, new Date(input.opensAt), input.admitPerSecond, input.passSeconds, input.graceSeconds, input.paused, input.statusReadsPerSecond],
  );
}

/**
 * The room's settings as last put, undefined when the item has no room; with lock, read locked in
 * conn's transaction (the row, or the gap where it would be), so no PUT or DELETE of the room runs
 * until it commits.
 */
export async function storedRoom(conn: Queryable, itemId: string, { lock = false } = {}): Promise<RoomInput | undefined> {
  const [rows] = await conn.query<Row[]>(
    `SELECT opens_at, admit_per_second, pass_seconds, grace_seconds, paused, status_reads_per_second FROM waiting_rooms WHERE item_id = ?${lock ? ' FOR UPDATE' : ''}`,
    [itemId],
  );
  const row = rows[0];
  return (
    row && {
      opensAt: row.opens_at.getTime(),
      admitPerSecond: Number(row.admit_per_second),
      passSeconds: Number(row.pass_seconds),
      graceSeconds: Number(row.grace_seconds),
      paused: Number(row.paused) === 1,
      statusReadsPerSecond: Number(row.status_reads_per_second),
    }
  );
}

/** Forgets the room's settings, so no repair puts the room back; true when there was a row. */
export async function forgetRoom(conn: Queryable, itemId: string): Promise<boolean> {
  const [result] = await conn.query<ResultSetHeader>('DELETE FROM waiting_rooms WHERE item_id = ?', [itemId]);
  return result.affectedRows > 0;
}
