import { execFileSync } from 'node:child_process';
import type { RowDataPacket } from 'mysql2/promise';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '../../shared/platform/clients/mysql';
import { poolConnectionIds } from '../support/database';

/**
 * Run in a process of its own, so that this one reads nothing meanwhile, as a frozen instance
 * does: the server closes the given connections, and the script returns once they are gone.
 */
const CLOSE_CONNECTIONS = `
const { createConnection } = require('mysql2/promise');
(async () => {
  const [url, list] = process.argv.slice(1);
  const ids = list.split(',').map(Number);
  const conn = await createConnection({ uri: url });
  for (const id of ids) await conn.query('KILL CONNECTION ?', [id]);
  while ((await conn.query('SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (?)', [ids]))[0].length > 0) await new Promise((r) => setTimeout(r, 20));
  await conn.end();
})();
`;

afterEach(() => {
  vi.useRealTimers();
});

describe('the database pool of an instance Lambda froze', () => {
  it('lends no connection from before the freeze, though the server closed them while it read nothing', async () => {
    // Prepare: every connection of the pool opened and given back; then, with this process
    // holding its event loop, the server closes them all (as RDS Proxy closes a client idle for its
    // idle client timeout) and the clock moves on past the pool's idle time, its timer not run.
    const before = await poolConnectionIds();
    execFileSync(process.execPath, ['-e', CLOSE_CONNECTIONS, process.env.DATABASE_URL!, before.join(',')]);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 30 * 60_000);

    // Act
    const [[answer]] = await db().query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');

    // Assess
    expect(before).not.toContain(Number(answer!.id));
  });

  it('keeps its connections across a pause shorter than the pool keeps them', async () => {
    // Prepare
    const before = await poolConnectionIds();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 50_000);

    // Act
    const [[answer]] = await db().query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');

    // Assess
    expect(before).toContain(Number(answer!.id));
  });
});
