import { createConnection, type RowDataPacket } from 'mysql2/promise';

/**
 * The statements the database was asked while `during` ran that contain every fragment, in order,
 * from MariaDB's general query log: what the server saw, not what the code under test says it
 * did. For tests and benchmarks; logging is on only while `during` runs.
 */
export async function statementsDuring(databaseUrl: string, during: () => Promise<unknown>, ...fragments: string[]): Promise<string[]> {
  return logged(databaseUrl, during, 'AND CONVERT(argument USING utf8mb4) LIKE ?', [`%${fragments.join('%')}%`]);
}

/**
 * Every statement sent over the given connections (their ids on the server, CONNECTION_ID())
 * while `during` ran, in the order the server logged them, whatever else it was asked meanwhile.
 */
export async function statementsOverDuring(databaseUrl: string, connectionIds: number[], during: () => Promise<unknown>): Promise<string[]> {
  return logged(databaseUrl, during, 'AND thread_id IN (?) ORDER BY event_time', [connectionIds]);
}

async function logged(databaseUrl: string, during: () => Promise<unknown>, where: string, params: unknown[]): Promise<string[]> {
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
    const [rows] = await conn.query<RowDataPacket[]>(
      `SELECT CONVERT(argument USING utf8mb4) AS statement FROM mysql.general_log WHERE event_time >= ? AND command_type = 'Query' ${where}`,
      [clock!.now, ...params],
    );
    return rows.map((r) => r.statement as string);
  } finally {
    await conn.end();
  }
}
