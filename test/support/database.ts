import type { RowDataPacket } from 'mysql2/promise';
import { db } from '../../shared/platform/clients/mysql';
import { databaseEnv, readEnv } from '../../shared/platform/config';

/** The server's ids of every connection of this process's pool, all opened: whatever the functions here send goes over one of them. */
export async function poolConnectionIds(): Promise<number[]> {
  const connections = await Promise.all(Array.from({ length: readEnv(databaseEnv).DATABASE_POOL_SIZE }, () => db().getConnection()));
  try {
    return await Promise.all(connections.map(async (c) => Number((await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id'))[0][0]!.id)));
  } finally {
    for (const c of connections) c.release();
  }
}

/** A statement's first word, upper-cased: what the server was asked to do. */
export const verbOf = (statement: string) => /^\s*(\w+)/.exec(statement)![1]!.toUpperCase();
