import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { freePort, readyLine, spawnService, waitFor } from './processes';

export interface Service {
  url: string;
  /** Set when the twin started the process itself; absent for one reached through an env URL. */
  pid?: number;
  stop(): Promise<void>;
}

const external = (url: string): Service => ({ url, stop: async () => undefined });

/**
 * A durable Redis keeps its data in stateDir (append-only file, fsync every second), so the live
 * counters survive a restart of the twin just as the MySQL rows beside them do. Tests use a
 * throwaway one.
 */
export async function startRedis(stateDir: string, durable: boolean): Promise<Service> {
  if (process.env.REDIS_URL) return external(process.env.REDIS_URL);
  const port = await freePort();
  const dataDir = resolve(stateDir, 'redis');
  mkdirSync(dataDir, { recursive: true });
  const persistence = durable ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  const proc = spawnService(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--dir', dataDir, '--save', '', ...persistence, '--protected-mode', 'yes'],
    join(stateDir, 'redis.log'),
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor('redis-server', async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
    } finally {
      client.disconnect();
    }
  });
  return { url, pid: proc.child.pid, stop: proc.stop };
}

/**
 * MariaDB stands in for Aurora MySQL. Without DATABASE_URL a private server is installed into
 * stateDir once (mariadb-install-db) and started on a free loopback port.
 */
export async function startDatabase(stateDir: string, database: string): Promise<Service> {
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
  const proc = spawnService(
    'mariadbd',
    [
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
    ],
    join(stateDir, 'mariadbd.log'),
  );
  const url = `mysql://root@127.0.0.1:${port}/${database}`;
  await waitFor('mariadbd', () => createDatabase(url, database));
  return { url, pid: proc.child.pid, stop: proc.stop };
}

async function createDatabase(url: string, database: string): Promise<void> {
  const server = new URL(url);
  server.pathname = '/';
  const conn = await createConnection({ uri: server.toString() });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${database.replace(/[^A-Za-z0-9_]/g, '')}\` CHARACTER SET utf8mb4`);
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
  return { url: `http://127.0.0.1:${port}`, pid: proc.child.pid, stop: proc.stop };
}
