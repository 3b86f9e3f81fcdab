import { createConnection, type RowDataPacket } from 'mysql2/promise';

/**
 * The statements the database was asked while `during` ran that contain every fragment, in order,
 * from MariaDB's general query log: what the server saw, not what the code under test says it
 * did. For tests and benchmarks; logging is on only while `during` runs.
 */
export async function statementsDuring(databaseUrl: string, during: () => Promise<unknown>, ...fragments: string[]): Promise<string[]> {
  const conn = await createConnection({ uri: databaseUrl });
  try {
    // This connection's own statements stay out of the log.
    await conn.query('SET SESSION sql_log_off = ON');
    const [[clock]] = await conn.query<RowDataPacket[]>('SELECT NOW(6) AS now');
    await conn.query("SET GLOBAL log_output = 'TABLE'");
    await conn.query('SET GLOBAL general_log = ON');
    try {
      await during();
    } finally {
      await conn.query('SET GLOBAL general_log = OFF');
    }
    const like = `%${fragments.join('%')}%`;
    const [rows] = await conn.query<RowDataPacket[]>(
      "SELECT CONVERT(argument USING utf8mb4) AS statement FROM mysql.general_log WHERE event_time >= ? AND command_type = 'Query' AND CONVERT(argument USING utf8mb4) LIKE ?",
      [clock!.now, like],
    );
    return rows.map((r) => r.statement as string);
  } finally {
    await conn.end();
  }
}
