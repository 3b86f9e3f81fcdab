import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { Connection, ConnectionOptions, RowDataPacket } from 'mysql2/promise';
import { mysqlDriver } from '../clients/mysql';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const FILE_NAME = /^(\d{4})-[a-z0-9-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export async function loadMigrations(dir: URL = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return Promise.all(
    files.map(async (name) => {
      const match = FILE_NAME.exec(name);
      if (!match) throw new Error(`Migration file must be named NNNN-description.sql: ${name}`);
      const sql = await readFile(new URL(name, dir), 'utf8');
      return { version: Number(match[1]), name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** Where migrations run: a URL, with credentials and TLS when they do not travel in it. */
export interface MigrationTarget {
  url: string;
  user?: string;
  password?: string;
  /** TLS verified against the default trust store (RDS Proxy), or against the given CA (the twin's). */
  tls?: boolean | { ca: string };
  /** How long to keep trying to connect while the database is not reachable yet; 0 tries once. */
  connectForMs?: number;
}

/**
 * Failures that waiting can mend: nothing listening yet, a connection dropped or timed out, a
 * name not resolving yet, too many connections. Anything else (refused credentials, a protocol
 * error) fails at once, so a deploy that cannot succeed fails fast.
 */
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
]);
/**
 * RDS Proxy's own refusal while it gets no connection to its target within its borrow timeout, as
 * while the target is still registering: `ERROR 9501 (HY000): Timed-out waiting to acquire
 * database connection` (RDS Proxy's troubleshooting guide). MySQL has no such error, so mysql2
 * gives it no code: it is known by its number.
 */
const PROXY_ACQUIRE_TIMEOUT_ERRNO = 9501;

const isTransient = (error: unknown): boolean => {
  const { code, errno } = error as { code?: string; errno?: number };
  return TRANSIENT.has(String(code)) || errno === PROXY_ACQUIRE_TIMEOUT_ERRNO;
};

/**
 * Connects, retrying with growing, jittered pauses until connectForMs has passed: on a first
 * deploy the trigger can run while RDS Proxy is still registering its target, which refuses or
 * drops connections, or answers 9501, for a while.
 */
async function connect(target: MigrationTarget): Promise<Connection> {
  const options: ConnectionOptions = {
    uri: target.url,
    multipleStatements: true,
    connectTimeout: 5_000,
    ...(target.user !== undefined ? { user: target.user, password: target.password } : {}),
    ...(target.tls ? { ssl: { ...(target.tls === true ? {} : { ca: target.tls.ca }), rejectUnauthorized: true, verifyIdentity: true } } : {}),
  };
  const deadline = Date.now() + (target.connectForMs ?? 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return await (await mysqlDriver()).createConnection(options);
    } catch (error) {
      const pause = Math.min(10_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
      if (!isTransient(error) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * Applies each migration not yet recorded in schema_migrations, in version order, once.
 * A named lock serialises concurrent migrators (the twin, test workers, a deploy trigger).
 * An applied file that has since changed is an error: migrations are append-only.
 */
export async function migrate(target: MigrationTarget | string, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  const conn = await connect(typeof target === 'string' ? { url: target } : target);
  try {
    await conn.query("SELECT GET_LOCK('surge_migrate', 60)");
    await conn.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INT UNSIGNED NOT NULL PRIMARY KEY,
      name       VARCHAR(255) NOT NULL,
      checksum   CHAR(64)     NOT NULL,
      applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
    ) ENGINE = InnoDB`);
    const [rows] = await conn.query<RowDataPacket[]>('SELECT version, checksum FROM schema_migrations');
    const applied = new Map(rows.map((r) => [Number(r.version), String(r.checksum)]));
    const done: number[] = [];
    for (const m of all) {
      const known = applied.get(m.version);
      if (known !== undefined) {
        if (known !== m.checksum) throw new Error(`Migration ${m.name} changed after it was applied`);
        continue;
      }
      await conn.query(m.sql);
      await conn.query('INSERT INTO schema_migrations (version, name, checksum) VALUES (?, ?, ?)', [m.version, m.name, m.checksum]);
      done.push(m.version);
    }
    return done;
  } finally {
    await conn.query("SELECT RELEASE_LOCK('surge_migrate')").catch(() => undefined);
    await conn.end();
  }
}
