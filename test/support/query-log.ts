import { createConnection, type RowDataPacket } from 'mysql2/promise';

/**
 * Counts statements at the database itself, from MariaDB's general query log: what the server
 * was asked, not what the code under test says it asked. Logging is on only while `during` runs.
 */
export async function statementsDuring(during: () => Promise<unknown>, ...fragments: string[]): Promise<string[]> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL! });
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
