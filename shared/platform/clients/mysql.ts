import type { format as SqlFormat, Pool, PoolConnection, SqlValue, Timezone } from 'mysql2/promise';
import { databaseEnv, readEnv } from '../config';
import { logger } from '../logger';
import { once } from '../once';
import { databaseCredentials, loadedSecret, refreshSecret } from './credentials';

/** The pool's face to the code: queries and connections for transactions, each retried once after a rotation. */
export interface Database {
  query: Pool['query'];
  getConnection(): Promise<PoolConnection>;
  end(): Promise<void>;
}

/** MySQL's ER_ACCESS_DENIED_ERROR: raised while connecting, so the statement never ran. */
const ACCESS_DENIED = 1045;
/** Longer than any function's timeout: by then nothing holds a connection of a replaced pool. */
const RETIRE_AFTER_MS = 60_000;

const currentSecret = (): string | undefined => {
  const { DATABASE_SECRET_ID } = readEnv(databaseEnv);
  return DATABASE_SECRET_ID ? loadedSecret(DATABASE_SECRET_ID) : undefined;
};

/**
 * The driver, loaded with the first pool or connection, not at import: evaluating it is ~40 ms of a
 * cold start on this kind of machine and parsing it ~17 more (`npm run bundles`), paid for nothing by
 * the functions that ask MySQL only now and then (the catalog on a miss, an order's replay once
 * stored, health between checks) or never on an instance's first invocation. A bundle carries it as
 * mysql-driver.mjs beside index.mjs (infra/bundling.ts), so a cold start does not even parse it;
 * run from its sources (the twin, the tests) this module is TypeScript and the driver is the
 * package. A bundle without the file fails its first query, in the twin as on Lambda, rather than
 * reaching for a node_modules that Lambda does not have.
 */
export const mysqlDriver = once(
  (): Promise<typeof import('./mysql-driver')> =>
    // A URL, not a specifier esbuild would follow: either file stays out of the bundle.
    import(new URL(import.meta.url.endsWith('.ts') ? './mysql-driver.ts' : './mysql-driver.mjs', import.meta.url).href),
);

/**
 * RDS Proxy pins a client connection to one of its connections to Aurora, until the client
 * disconnects, once the client sends a statement of more than 16 KB of text (docs/twin.md): the
 * writer's batches and an issue's body can. Counted in bytes, and kept under 16,000, since AWS does
 * not say which kilobyte it means.
 */
const PROXY_PINS_OVER_BYTES = 16_000;

/** The driver's core connection, as the pool's statement formatter is called on it. */
interface CoreConnection {
  release(): void;
  destroy(): void;
}

/**
 * Formats a statement as the driver does, and makes a connection that sends one the proxy pins on
 * close when it is given back rather than return to the pool: the pin then ends with the statement
 * or with its transaction, and the next use opens a connection of its own. A pinned connection kept
 * would hold one of Aurora's connections from every other function, for up to the proxy's idle
 * client timeout (30 minutes), frozen instance or not.
 */
function closingWhenPinned(format: typeof SqlFormat) {
  return function formatStatement(this: CoreConnection, sql: string, values: SqlValue[], timezone: Timezone): string {
    const statement = format(sql, values, false, timezone);
    // A UTF-16 unit is at most three bytes of UTF-8: a shorter statement needs no count of its bytes.
    if (statement.length > PROXY_PINS_OVER_BYTES / 3 && Buffer.byteLength(statement) > PROXY_PINS_OVER_BYTES) this.release = () => this.destroy();
    return statement;
  };
}

/**
 * How long a connection stays in the pool unused before the pool's timer closes it (the driver's
 * `idleTimeout`, set below as it defaults). Lambda freezes an instance between invocations, and a
 * frozen instance runs no timer, while RDS Proxy closes a client connection idle for its idle client
 * timeout (30 minutes): a thawed instance would lend a connection the proxy has closed, its close
 * not yet read, and the statement sent over it would fail ("Connection lost", mysql2's issue 2247).
 */
const IDLE_CONNECTION_MS = 60_000;

async function newPool(): Promise<Pool> {
  const { DATABASE_URL, DATABASE_SECRET_ID, DATABASE_POOL_SIZE, DATABASE_TLS } = readEnv(databaseEnv);
  const { createPool, format } = await mysqlDriver();
  return createPool({
    uri: DATABASE_URL,
    ...(DATABASE_SECRET_ID ? databaseCredentials(loadedSecret(DATABASE_SECRET_ID)) : {}),
    connectionLimit: DATABASE_POOL_SIZE,
    waitForConnections: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
    dateStrings: false,
    timezone: 'Z',
    // No stack captured at every call for an error that may never come: in the writer's profile it
    // was 1 % of its CPU. A failed query's error still says what failed; the caller logs where.
    trace: false,
    idleTimeout: IDLE_CONNECTION_MS,
    // The driver's typings have the formatter return nothing; it returns the statement, and is called on the connection with the pool's time zone.
    queryFormat: closingWhenPinned(format) as unknown as (query: string, values: unknown) => void,
    // RDS Proxy's certificate is publicly trusted; the twin's CA reaches the process through NODE_EXTRA_CA_CERTS.
    ...(DATABASE_TLS ? { ssl: { rejectUnauthorized: true, verifyIdentity: true } } : {}),
  });
}

/**
 * Queries go through query(), never execute(): server-side prepared statements pin
 * RDS Proxy connections, which would defeat the proxy under a flash crowd. When the proxy refuses
 * the credentials (the secret rotated), the secret is looked up again and one new pool replaces
 * the old for every caller; the refused call runs once more, which is safe, since it never ran.
 * A call after longer unused than IDLE_CONNECTION_MS (the instance was frozen, or idle) replaces
 * the pool too, as its timer would have closed every connection: none from before is lent again.
 */
function database(): Database {
  let pool = newPool();
  let poolSecret = currentSecret();
  let lastUsed = Date.now();
  const replacePool = () => {
    const replaced = pool;
    pool = newPool();
    // Connections the old pool lent out finish their transactions first: it ends once no invocation can still hold one.
    setTimeout(() => void replaced.then((old) => old.end()).catch(() => undefined), RETIRE_AFTER_MS).unref();
  };
  const withPool = async <T>(call: (pool: Pool) => Promise<T>): Promise<T> => {
    if (Date.now() - lastUsed > IDLE_CONNECTION_MS) replacePool();
    lastUsed = Date.now();
    const used = pool;
    try {
      return await call(await used);
    } catch (error) {
      const secretId = readEnv(databaseEnv).DATABASE_SECRET_ID;
      if ((error as { errno?: number }).errno !== ACCESS_DENIED || !secretId) throw error;
      const secret = await refreshSecret(secretId);
      if (pool === used && secret !== poolSecret) {
        logger.warn('Database credentials refused; reconnecting with the secret looked up again');
        replacePool();
        poolSecret = secret;
      }
      return call(await pool);
    } finally {
      lastUsed = Date.now();
    }
  };
  return {
    query: ((...args: Parameters<Pool['query']>) => withPool((p) => p.query(...args))) as Pool['query'],
    getConnection: () => withPool((p) => p.getConnection()),
    end: async () => (await pool).end(),
  };
}

/** One pool per Lambda instance, made on first use. */
export const db = once(database);
