import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../shared/db/migrate';

describe('migrations', () => {
  it('are applied once and recorded', async () => {
    const migrations = await loadMigrations();

    const applied = await migrate(process.env.DATABASE_URL!);

    const conn = await createConnection({ uri: process.env.DATABASE_URL! });
    const [rows] = await conn.query<RowDataPacket[]>('SELECT version FROM schema_migrations ORDER BY version');
    await conn.end();
    expect(applied).toEqual([]);
    expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
  });

  it('refuse a file changed after it was applied', async () => {
    const [first, ...rest] = await loadMigrations();

    await expect(migrate(process.env.DATABASE_URL!, [{ ...first!, checksum: 'changed' }, ...rest])).rejects.toThrow(/changed after it was applied/);
  });
});
