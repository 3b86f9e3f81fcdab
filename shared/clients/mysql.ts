import { createPool } from 'mysql2/promise';
import { databaseEnv, readEnv } from '../config';

const { DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_TLS } = readEnv(databaseEnv);

/**
 * Queries go through query(), never execute(): server-side prepared statements pin
 * RDS Proxy connections, which would defeat the proxy under a flash crowd.
 */
export const db = createPool({
  uri: DATABASE_URL,
  connectionLimit: DATABASE_POOL_SIZE,
  waitForConnections: true,
  supportBigNumbers: true,
  bigNumberStrings: false,
  dateStrings: false,
  timezone: 'Z',
  ...(DATABASE_TLS ? { ssl: { rejectUnauthorized: true } } : {}),
});
