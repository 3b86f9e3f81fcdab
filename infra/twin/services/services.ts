import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { freePort, readyLine, spawnService, supervise, waitFor, type Spawned } from './processes';
import type { TwinCertificates } from './tls';

export interface Service {
  /** What the functions connect to. A secure store's carries no password: they read it from a secret, as on AWS. */
  url: string;
  /** What the twin's own code connects to: a secure store's with its password (MariaDB: root), otherwise url. */
  adminUrl: string;
  /** A secure store's password for url. */
  password?: string;
  /**
   * Set when the store takes TLS only: what the twin's own code verifies it with (mysql2 `ssl`,
   * ioredis `tls`). The functions need none, run with NODE_EXTRA_CA_CERTS set to the CA's file.
   */
  adminTls?: { ca: string };
  /** A Redis with replicas: how many each reservation waits for (the functions' REDIS_REPLICA_ACKS). */
  replicaAcks?: number;
  /** Set when the twin started the process itself (a cluster's first node); absent for one reached through an env URL. */
  pid?: number;
  /** A Redis Cluster (the functions run with REDIS_CLUSTER=true): url is one of its nodes. */
  cluster?: boolean;
  stop(): Promise<void>;
}

/**
 * A store reached through an env URL, configured where it runs: for Redis, whoever gives REDIS_URL
 * says with REDIS_REPLICA_ACKS whether it has replicas to wait for (the fault suite's pair does).
 */
export const external = (url: string): Service => ({
  url,
  adminUrl: url,
  ...(Number(process.env.REDIS_REPLICA_ACKS) > 0 ? { replicaAcks: Number(process.env.REDIS_REPLICA_ACKS) } : {}),
  stop: async () => undefined,
});

/**
 * Data stores as AWS runs them: TLS only, with a certificate from the twin's own CA, and a
 * password (Redis AUTH; a MariaDB user of the application's that must use TLS). Not applied to a
 * store reached through REDIS_URL or DATABASE_URL, which is configured where it runs.
 */
export interface SecureStores {
  certificates: TwinCertificates;
  redisPassword?: string;
  database?: { user: string; password: string };
}

/**
 * What the twin's Redis may hold unless SURGE_REDIS_MAXMEMORY says otherwise (redis-server's units).
 * An orders bench leaves about 25 MB for a day: 10,000 sessions take ~5 MB, and every 10,000
 * reservations ~2.5 MB of idempotency records and buyer counts; a few runs a day fit many times over.
 */
const REDIS_MAXMEMORY = '256mb';

/**
 * What the twin's redis-server keeps, where, and how much: durable, an append-only file in dataDir
 * fsynced every second (no RDB snapshots); evicting nothing past the memory limit. The fault suite
 * runs a Redis of its own with the same arguments.
 */
export function redisDataArgs(dataDir: string, durable: boolean): string[] {
  const persistence = durable ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  const memory = ['--maxmemory', process.env.SURGE_REDIS_MAXMEMORY || REDIS_MAXMEMORY, '--maxmemory-policy', 'noeviction'];
  return ['--dir', dataDir, '--save', '', ...persistence, ...memory];
}

/**
 * A durable Redis keeps its data in stateDir (append-only file, fsync every second), so the live
 * counters survive a restart of the twin just as the MySQL rows beside them do. Tests use a
 * throwaway one. Either evicts nothing, as the stack's cache: a full one refuses writes.
 */
export async function startRedis(stateDir: string, durable: boolean, secure?: SecureStores): Promise<Service> {
  if (process.env.REDIS_URL) return external(process.env.REDIS_URL);
  const port = await freePort();
  const dataDir = resolve(stateDir, 'redis');
  mkdirSync(dataDir, { recursive: true });
  const password = secure?.redisPassword;
  const listen = secure
    ? [
        ...['--port', '0', '--tls-port', String(port)],
        ...['--tls-cert-file', secure.certificates.certFile, '--tls-key-file', secure.certificates.keyFile],
        // The CA goes out with the certificate, completing the chain as mariadbd's --ssl-ca does;
        // clients show no certificate of their own, as on ElastiCache.
        ...['--tls-ca-cert-file', secure.certificates.caFile, '--tls-auth-clients', 'no'],
      ]
    : ['--port', String(port)];
  // The password goes in a file only this user reads, not on the command line, where ps shows it.
  const authConfig = join(dataDir, 'auth.conf');
  if (password) writeFileSync(authConfig, `requirepass ${password}\n`, { mode: 0o600 });
  const proc = spawnService(
    'redis-server',
    [...(password ? [authConfig] : []), '--bind', '127.0.0.1', ...listen, ...redisDataArgs(dataDir, durable), '--protected-mode', 'yes'],
    join(stateDir, 'redis.log'),
  );
  const url = `${secure ? 'rediss' : 'redis'}://127.0.0.1:${port}`;
  const adminUrl = password ? `rediss://:${encodeURIComponent(password)}@127.0.0.1:${port}` : url;
  const adminTls = secure && { ca: secure.certificates.ca };
  await stopUnlessReady(proc, () =>
    waitFor('redis-server', async () => {
      const client = new Redis(adminUrl, { tls: adminTls, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      // What the connection reported (a certificate it refused, say); ioredis itself only says it closed.
      let reported: Error | undefined;
      client.on('error', (error: Error) => (reported ??= error));
      try {
        await client.connect();
        await client.ping();
      } catch (error) {
        throw reported ?? error;
      } finally {
        client.disconnect();
      }
    }),
  );
  return { url, adminUrl, password, adminTls, pid: proc.child.pid, stop: proc.stop };
}

/**
 * MariaDB stands in for Aurora MySQL. Without DATABASE_URL a private server is installed into
 * stateDir once (mariadb-install-db) and started on a free loopback port.
 */
export async function startDatabase(stateDir: string, database: string, secure?: SecureStores, onRestart?: () => void): Promise<Service> {
  if (process.env.DATABASE_URL) {
    const server = new URL(process.env.DATABASE_URL);
    server.pathname = `/${database}`;
    await createDatabase(server.toString(), database);
    return external(server.toString());
  }
  const dataDir = resolve(stateDir, 'mariadb');
  if (!existsSync(join(dataDir, 'mysql'))) {
    mkdirSync(dataDir, { recursive: true });
    const install = spawnService(
      'mariadb-install-db',
      ['--no-defaults', `--datadir=${dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root'],
      join(stateDir, 'mariadb-install.log'),
    );
    const code = await new Promise((r) => install.child.once('exit', r));
    if (code !== 0) throw new Error(`mariadb-install-db failed; see ${join(stateDir, 'mariadb-install.log')}`);
  }
  const port = await freePort();
  const tls = secure
    ? [
        `--ssl-cert=${secure.certificates.certFile}`,
        `--ssl-key=${secure.certificates.keyFile}`,
        `--ssl-ca=${secure.certificates.caFile}`,
        // Aurora's parameter of the same name: a plaintext TCP login is refused (MariaDB says access denied).
        '--require-secure-transport=ON',
      ]
    : [];
  const args = [
    '--no-defaults',
    `--datadir=${dataDir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dataDir, 'mariadbd.sock')}`,
    `--pid-file=${join(dataDir, 'mariadbd.pid')}`,
    '--user=root',
    '--skip-name-resolve',
    '--max-connections=500',
    '--innodb-buffer-pool-size=256M',
    // UTC, as Aurora runs: TIMESTAMP values and their range do not shift with the machine's zone.
    '--default-time-zone=+00:00',
    // Aurora's, set there in the parameter group: the writer's locked reads rely on its gap locks (test/reservations/writer-isolation.test.ts).
    '--transaction-isolation=REPEATABLE-READ',
    ...tls,
  ];
  const adminUrl = `mysql://root@127.0.0.1:${port}/${database}`;
  const adminTls = secure && { ca: secure.certificates.ca };
  const user = secure?.database;
  // Started again on the same port and datadir after a crash, as RDS restarts a crashed instance:
  // InnoDB recovers what was committed, and clients reconnect to the same address.
  const server = await supervise(
    'mariadbd',
    async () => {
      const proc = spawnService('mariadbd', args, join(stateDir, 'mariadbd.log'));
      await stopUnlessReady(proc, () => waitFor('mariadbd', () => createDatabase(adminUrl, database, adminTls)));
      return proc;
    },
    onRestart,
  );
  if (user) {
    await createApplicationUser(adminUrl, database, user, adminTls).catch(async (error: Error) => {
      await server.stop();
      throw error;
    });
  }
  const url = user ? `mysql://${encodeURIComponent(user.user)}@127.0.0.1:${port}/${database}` : adminUrl;
  return {
    url,
    adminUrl,
    password: user?.password,
    adminTls,
    get pid() {
      return server.pid;
    },
    stop: server.stop,
  };
}

/**
 * Stops a started process whose readiness check failed (say, on a certificate it does not
 * accept), so a failed start leaves nothing running: a test worker may end without 'exit'.
 */
async function stopUnlessReady(proc: Spawned, ready: () => Promise<void>): Promise<void> {
  try {
    await ready();
  } catch (error) {
    await proc.stop();
    throw error;
  }
}

const identifier = (name: string) => name.replace(/[^A-Za-z0-9_]/g, '');

/**
 * Root's connection to the server of url; over TLS when tls is given, checking the certificate's
 * name as well as its chain (for an IP host mysql2 checks the name localhost).
 */
function connectAsRoot(url: string, tls?: { ca: string }) {
  const server = new URL(url);
  server.pathname = '/';
  return createConnection({ uri: server.toString(), ssl: tls && { ...tls, verifyIdentity: true } });
}

async function createDatabase(url: string, database: string, tls?: { ca: string }): Promise<void> {
  const conn = await connectAsRoot(url, tls);
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${identifier(database)}\` CHARACTER SET utf8mb4`);
  } finally {
    await conn.end();
  }
}

/**
 * The functions' user, apart from root as the stack's `surge` user (the cluster's generated
 * credentials, behind RDS Proxy) is apart from the twin's own admin access: TLS required, all
 * privileges on the twin's database and on the tests' (surge…). Replaced on every start, so a
 * changed password takes effect.
 */
async function createApplicationUser(url: string, database: string, user: { user: string; password: string }, tls?: { ca: string }): Promise<void> {
  const conn = await connectAsRoot(url, tls);
  try {
    await conn.query(`CREATE OR REPLACE USER ?@'%' IDENTIFIED BY ? REQUIRE SSL`, [user.user, user.password]);
    await conn.query(`GRANT ALL PRIVILEGES ON \`${identifier(database)}\`.* TO ?@'%'`, [user.user]);
    await conn.query("GRANT ALL PRIVILEGES ON `surge%`.* TO ?@'%'", [user.user]);
  } finally {
    await conn.end();
  }
}

export async function startEmulator(stateDir: string): Promise<Service> {
  if (process.env.AWS_ENDPOINT_URL) return external(process.env.AWS_ENDPOINT_URL);
  const entry = new URL('./emulator.ts', import.meta.url).pathname;
  const proc = spawnService(process.execPath, ['--import', 'tsx', entry], join(stateDir, 'emulator.log'));
  const logFile = join(stateDir, 'emulator.log');
  const port = Number((await readyLine(proc, /ready (\d+)/, logFile))[1]);
  const url = `http://127.0.0.1:${port}`;
  return { url, adminUrl: url, pid: proc.child.pid, stop: proc.stop };
}
