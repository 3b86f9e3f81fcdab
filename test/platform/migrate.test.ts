import { connect, createServer } from 'node:net';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/services/processes';
import { loadMigrations, migrate } from '../../shared/platform/db/migrate';
import { newReservationId } from '../../shared/reservations/ids';

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

describe('0014, orders holding their decisions', () => {
  it("copies the ledger's promises and cancellations of orders not stored yet into orders, and keeps stored orders as they were", async () => {
    // Prepare: a database migrated to 0013, with a stored order and the ledger's decisions.
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/surge_migrate_${Date.now().toString(36)}`;
    const admin = await createConnection({ uri: process.env.DATABASE_URL! });
    await admin.query(`CREATE DATABASE ${url.pathname.slice(1)}`);
    const migrations = await loadMigrations();
    await migrate(
      url.toString(),
      migrations.filter((m) => m.version < 14),
    );
    const conn = await createConnection({ uri: url.toString() });
    await conn.query("INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES ('stored', 'item', 1, 1, 'confirmed', NOW(3))");
    await conn.query(
      "INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) VALUES ('stored', 'order', 'item', 1, 1, 'confirmed'), ('promised', 'order', 'item', 2, 1, 'promised'), ('cancelled', 'order', 'item', 3, 2, 'cancelled'), ('coupon', 'coupon', 'deal', 4, 1, 'cancelled')",
    );

    // Act
    const applied = await migrate(url.toString(), migrations);

    // Assess
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id, item_id, user_id, quantity, status FROM orders ORDER BY id');
    await conn.end();
    await admin.query(`DROP DATABASE ${url.pathname.slice(1)}`);
    await admin.end();
    expect(applied).toContain(14);
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { id: 'cancelled', item_id: 'item', user_id: 3, quantity: 2, status: 'cancelled' },
      { id: 'promised', item_id: 'item', user_id: 2, quantity: 1, status: 'promised' },
      { id: 'stored', item_id: 'item', user_id: 1, quantity: 1, status: 'confirmed' },
    ]);
  });
});

describe('0018, migrated orders given their reservation time back', () => {
  it('sets reserved_at of the rows 0014 copied to the time in their ids, and leaves the others', async () => {
    // Prepare: at 0013, a promised and a cancelled order in the ledger (reserved a minute before their
    // decisions), and an order stored with its own time; then 0014, which copies the two.
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/surge_migrate_${Date.now().toString(36)}_18`;
    const admin = await createConnection({ uri: process.env.DATABASE_URL! });
    await admin.query(`CREATE DATABASE ${url.pathname.slice(1)}`);
    const migrations = await loadMigrations();
    await migrate(
      url.toString(),
      migrations.filter((m) => m.version < 14),
    );
    const conn = await createConnection({ uri: url.toString() });
    const reservedAt = Date.now() - 60_000;
    const [promised, cancelled, stored] = [
      newReservationId('shoes', reservedAt),
      newReservationId('shoes', reservedAt + 1),
      newReservationId('shoes', reservedAt + 2),
    ];
    const storedAt = new Date(reservedAt - 3_600_000);
    await conn.query("INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES (?, 'shoes', 1, 1, 'confirmed', ?)", [stored, storedAt]);
    await conn.query(
      "INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) VALUES (?, 'order', 'shoes', 2, 1, 'promised'), (?, 'order', 'shoes', 3, 1, 'cancelled'), (?, 'order', 'shoes', 1, 1, 'confirmed')",
      [promised, cancelled, stored],
    );
    await migrate(
      url.toString(),
      migrations.filter((m) => m.version < 18),
    );
    const [before] = await conn.query<RowDataPacket[]>('SELECT id, reserved_at FROM orders WHERE id = ?', [promised]);

    // Act
    const applied = await migrate(url.toString(), migrations);

    // Assess
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id, reserved_at FROM orders');
    await conn.end();
    await admin.query(`DROP DATABASE ${url.pathname.slice(1)}`);
    await admin.end();
    const reservedAtOf = new Map(rows.map((r) => [String(r.id), (r.reserved_at as Date).getTime()]));
    expect(applied).toContain(18);
    expect((before[0]!.reserved_at as Date).getTime()).not.toBe(reservedAt);
    expect(reservedAtOf.get(promised)).toBe(reservedAt);
    expect(reservedAtOf.get(cancelled)).toBe(reservedAt + 1);
    expect(reservedAtOf.get(stored)).toBe(storedAt.getTime());
  });
});

/** A MySQL error packet as a server's first one, in place of its greeting: how RDS Proxy refuses a connection. */
function errorGreeting(errno: number, sqlState: string, message: string): Buffer {
  const body = Buffer.concat([Buffer.from([0xff, errno & 0xff, errno >> 8]), Buffer.from(`#${sqlState}${message}`)]);
  return Buffer.concat([Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, body.length >> 16, 0]), body]);
}
/** RDS Proxy's answer while it gets no connection to its target, as while the target is registering. */
const PROXY_ACQUIRE_TIMEOUT = errorGreeting(9501, 'HY000', 'Timed-out waiting to acquire database connection');

/** A stand-in for RDS Proxy in front of the test database: its first `refusals` connections are answered 9501, the rest forwarded. */
async function proxyRefusing(refusals: number) {
  const database = new URL(process.env.DATABASE_URL!);
  const port = await freePort();
  let connections = 0;
  const server = createServer((client) => {
    client.on('error', () => undefined);
    if (++connections <= refusals) return void client.end(PROXY_ACQUIRE_TIMEOUT);
    const upstream = connect(Number(database.port), database.hostname);
    client.pipe(upstream).pipe(client);
    const close = () => (client.destroy(), upstream.destroy());
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = new URL(database);
  url.port = String(port);
  return { url: url.toString(), connections: () => connections, close: () => server.close() };
}

describe('connecting to migrate', () => {
  it('keeps trying while RDS Proxy answers 9501 (no connection to its target yet), then migrates', async () => {
    // Prepare
    const proxy = await proxyRefusing(2);

    // Act
    const applied = await migrate({ url: proxy.url, connectForMs: 10_000 });

    // Assess
    proxy.close();
    expect(applied).toEqual([]);
    expect(proxy.connections()).toBe(3);
  });

  it('gives up on 9501 once connectForMs has passed, as on a socket error', async () => {
    // Prepare
    const proxy = await proxyRefusing(Infinity);
    const started = Date.now();

    // Act
    const attempt = migrate({ url: proxy.url, connectForMs: 1_000 });

    // Assess
    await expect(attempt).rejects.toMatchObject({ errno: 9501 });
    proxy.close();
    expect(proxy.connections()).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

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
