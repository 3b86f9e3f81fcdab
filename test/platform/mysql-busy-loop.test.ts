import type { RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/platform/clients/mysql';
import { databaseEnv, readEnv } from '../../shared/platform/config';
import { holdTheLoop } from '../support/held-loop';

/** The timeout a query is given here: shorter than the loop is held. */
const QUERY_TIMEOUT_MS = 300;
const databasePort = Number(new URL(readEnv(databaseEnv).DATABASE_URL).port || 3306);

/**
 * mysql2's query timeout (a catalog page's fill sets one, shared/catalog/programs.ts), decided after
 * the poll phase that follows its timer (infra/patches/mysql2+3.24.6.patch).
 */
describe("a query's timeout, with the event loop held", () => {
  it('reads a result that arrived while the loop was held before it decides that the query timed out', async () => {
    // Prepare: a connection of the pool's, already open, so the query is written at once.
    const connection = await db().getConnection();

    try {
      // Act: the query goes out, MariaDB answers at once, and the loop is held past the timeout until the result waits unread.
      const result = connection.query<RowDataPacket[]>({ sql: 'SELECT 1 AS answered', timeout: QUERY_TIMEOUT_MS });
      holdTheLoop(QUERY_TIMEOUT_MS * 2, databasePort);

      // Assess
      const [rows] = await result;
      expect(rows).toEqual([{ answered: 1 }]);
    } finally {
      connection.release();
    }
  });

  it('still times out a query that MariaDB does not answer in time', async () => {
    // Prepare
    const connection = await db().getConnection();

    try {
      // Act
      const result = connection.query({ sql: 'SELECT SLEEP(2)', timeout: QUERY_TIMEOUT_MS });

      // Assess
      await expect(result).rejects.toMatchObject({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' });
    } finally {
      // Its result still to come, the connection is not handed to another caller.
      connection.destroy();
    }
  });
});
