/**
 * What one request wrote to the stores, for the fuzz run's "a refused request stores nothing" check:
 * Redis's keyspace events (every write names its key, scripts' too) and MySQL's table checksums.
 * It relies on nothing else writing meanwhile: the fuzz's twin runs no consumers and no schedules,
 * and sends one request at a time.
 */
import { Redis } from 'ioredis';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';

/** Events that are not a write by a client: a key's time ran out. */
const NOT_WRITES = new Set(['expired', 'evicted']);

export interface StoreWrites {
  /** The Redis keys written and the MySQL tables changed since the last call. */
  since(): Promise<{ keys: string[]; tables: string[] }>;
  close(): Promise<void>;
}

export async function watchStoreWrites(redisUrl: string, databaseUrl: string): Promise<StoreWrites> {
  const admin = new Redis(redisUrl);
  await admin.config('SET', 'notify-keyspace-events', 'KEA');
  const subscriber = new Redis(redisUrl);
  let written: string[] = [];
  subscriber.on('pmessage', (_pattern: string, channel: string, key: string) => {
    const event = channel.slice(channel.lastIndexOf(':') + 1);
    if (!NOT_WRITES.has(event)) written.push(`${event} ${key}`);
  });
  await subscriber.psubscribe('__keyevent@*__:*');

  const mysql: Connection = await createConnection({ uri: databaseUrl });
  const [tableRows] = await mysql.query<RowDataPacket[]>(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = ?',
    ['BASE TABLE'],
  );
  const tables = tableRows.map((row) => String(row.name));
  const checksums = async () => {
    const [rows] = await mysql.query<RowDataPacket[]>(`CHECKSUM TABLE ${tables.map((name) => `\`${name}\``).join(', ')}`);
    return new Map(rows.map((row) => [String(row.Table), String(row.Checksum)]));
  };
  let last = await checksums();

  return {
    async since() {
      // A write's event is sent as the write is done, before the request's answer: a round trip on
      // the subscriber's connection after the answer has every such event in.
      await subscriber.ping();
      const keys = written;
      written = [];
      const now = await checksums();
      const changed = [...now].filter(([table, sum]) => last.get(table) !== sum).map(([table]) => table.split('.').pop()!);
      last = now;
      return { keys, tables: changed };
    },
    async close() {
      subscriber.disconnect();
      await admin.config('SET', 'notify-keyspace-events', '');
      admin.disconnect();
      await mysql.end();
    },
  };
}
