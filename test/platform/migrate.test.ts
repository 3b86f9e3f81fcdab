import { connect, createServer } from 'node:net';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/processes';
import { loadMigrations, migrate } from '../../shared/platform/db/migrate';

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

describe('connecting to migrate', () => {
  it('keeps trying while nothing listens yet (a proxy registering its target), then migrates', async () => {
    // Prepare: a port where the database appears only after 1.5 s, through a forwarder.
    const database = new URL(process.env.DATABASE_URL!);
    const port = await freePort();
    const forwarder = createServer((client) => {
      const upstream = connect(Number(database.port), database.hostname);
      client.pipe(upstream).pipe(client);
      const close = () => (client.destroy(), upstream.destroy());
      client.on('error', close);
      upstream.on('error', close);
    });
    const opened = new Promise<void>((resolve) => setTimeout(() => forwarder.listen(port, '127.0.0.1', resolve), 1_500));
    const late = new URL(database);
    late.port = String(port);
    const started = Date.now();

    // Act
    const applied = await migrate({ url: late.toString(), connectForMs: 10_000 });

    // Assess
    await opened;
    forwarder.close();
    expect(applied).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
  });

  it('gives up at once on an answer that waiting will not change', async () => {
    // Prepare
    const stranger = new URL(process.env.DATABASE_URL!);
    stranger.username = 'nobody';
    const started = Date.now();

    // Act
    const attempt = migrate({ url: stranger.toString(), connectForMs: 10_000 });

    // Assess
    await expect(attempt).rejects.toMatchObject({ errno: 1045 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
