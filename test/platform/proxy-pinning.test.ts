import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/platform/clients/mysql';
import { inTransaction } from '../../shared/platform/db/transaction';
import { until } from '../../shared/platform/wait';
import { poolConnectionIds } from '../support/database';

/** A statement of its fixed part and `value`, answering the connection it ran on. */
const SIZED = 'SELECT CONNECTION_ID() AS id, CHAR_LENGTH(?) AS length';

async function sizedStatement(value: string): Promise<{ id: number; length: number }> {
  const [[row]] = await db().query<RowDataPacket[]>(SIZED, [value]);
  return { id: Number(row!.id), length: Number(row!.length) };
}

/** Whether the server still holds a connection of this id. */
async function isOpen(id: number): Promise<boolean> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
  return rows.length > 0;
}

const closed = (id: number) => until(async () => !(await isOpen(id)), 10_000, `connection ${id} closed`);

describe('a pooled connection that sends a statement RDS Proxy pins on (over 16,000 bytes)', () => {
  it('answers it, then is closed when given back, and the pool opens another in its place', async () => {
    // Prepare
    const before = await poolConnectionIds();

    // Act
    const answer = await sizedStatement('x'.repeat(16_000));

    // Assess
    expect(answer.length).toBe(16_000);
    await closed(answer.id);
    const after = await poolConnectionIds();
    expect(before.filter((id) => !after.includes(id))).toEqual([answer.id]);
    expect(after.filter((id) => !before.includes(id))).toHaveLength(1);
  });

  it('is kept in the pool while its statements stay under', async () => {
    // Prepare
    const before = await poolConnectionIds();

    // Act
    const answer = await sizedStatement('x'.repeat(15_000));

    // Assess
    expect(answer.length).toBe(15_000);
    expect(await isOpen(answer.id)).toBe(true);
    expect((await poolConnectionIds()).sort()).toEqual(before.sort());
  });

  it('counts the statement in bytes, not characters', async () => {
    // Prepare: 6,000 characters of three bytes each.
    const euros = '€'.repeat(6_000);

    // Act
    const answer = await sizedStatement(euros);

    // Assess
    expect(answer.length).toBe(6_000);
    await closed(answer.id);
  });

  it('within a transaction, carries it to its commit over the same connection, then is closed', async () => {
    // Prepare
    const email = `pinned-${randomBytes(4).toString('hex')}@surge.test`;

    // Act
    const [pinnedOn, committedOn] = await inTransaction(db(), async (conn) => {
      const [[pinned]] = await conn.query<RowDataPacket[]>(SIZED, ['x'.repeat(20_000)]);
      await conn.query("INSERT INTO users (email, password_hash, role) VALUES (?, 'not-a-hash', 'user')", [email]);
      const [[after]] = await conn.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
      return [Number(pinned!.id), Number(after!.id)];
    });

    // Assess
    expect(committedOn).toBe(pinnedOn);
    await closed(pinnedOn);
    const [rows] = await db().query<RowDataPacket[]>('SELECT 1 FROM users WHERE email = ?', [email]);
    expect(rows).toHaveLength(1);
  });
});
