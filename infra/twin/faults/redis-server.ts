import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { spawnService, waitFor } from '../services/processes';

/** A redis-server of a test's own, which the test may kill -9 and start again on the same port. */
export interface TestRedisServer {
  port: number;
  url: string;
  /** SIGKILL, as a crashed or lost node: no orderly close of its connections. */
  kill(): Promise<void>;
}

/** Sends one command to the server on `port` over a connection of its own, outside the client under test. */
export async function redisCommand(port: number, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(String(args[0]), ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/** Starts redis-server on `port`, keeping no data on disk, and resolves once it answers PING. */
export async function startRedisServer(port: number): Promise<TestRedisServer> {
  // Its log, and what a replica's full sync writes even without persistence.
  const dir = mkdtempSync(join(tmpdir(), 'surge-test-redis-'));
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no'];
  // A primary syncs a new replica at once, not after waiting 5 s for others to sync with it.
  const { child } = spawnService('redis-server', [...args, '--repl-diskless-sync-delay', '0'], join(dir, 'redis.log'));
  const exited = once(child, 'exit');
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(`redis-server on port ${port}`, () => redisCommand(port, 'PING'), 10_000);
  } catch (error) {
    await kill();
    throw error;
  }
  return { port, url: `redis://127.0.0.1:${port}`, kill };
}
